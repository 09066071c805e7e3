package io.brine.protocol.message;

/**
 * A publication: a {@link PublishLoad} sealed with the generation's publish key, signed by the master.
 *
 * @param suite      crypto suite
 * @param generation which publish key sealed {@code box}
 * @param serial     strictly increasing across all the master's publications
 * @param issuedMs   the master's clock when it signed the publication, milliseconds since the epoch: minions refuse
 *                   one older than their {@code publish_max_age}
 * @param jid        the job id, also inside the sealed load; outside so minions can de-duplicate cheaply
 * @param box        AES-256-GCM sealed {@link PublishLoad}
 */
public record Publish(int suite, long generation, long serial, long issuedMs, String jid, byte[] box)
        implements Message.ToPeer {

    @Override
    public FrameType type() {
        return FrameType.PUBLISH;
    }

    @Override
    public ToPeer.Kind toPeer() {
        return ToPeer.Kind.PUBLISH;
    }

    @Override
    public String toString() {
        return "Publish[generation=" + generation + ", serial=" + serial + ", issuedMs=" + issuedMs + ", jid=" + jid
                + ", box=" + box.length
                + " bytes]";
    }
}

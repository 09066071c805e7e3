package io.brine.protocol.message;

/**
 * A publication: a {@link PublishLoad} sealed with the generation's publish key, signed by the master.
 *
 * @param suite      crypto suite
 * @param generation which publish key sealed {@code box}
 * @param serial     strictly increasing across all the master's publications
 * @param jid        the job id, also inside the sealed load; outside so minions can de-duplicate cheaply
 * @param box        AES-256-GCM sealed {@link PublishLoad}
 */
public record Publish(int suite, long generation, long serial, String jid, byte[] box) implements Message {

    @Override
    public MessageType type() {
        return MessageType.PUBLISH;
    }

    @Override
    public String toString() {
        return "Publish[generation=" + generation + ", serial=" + serial + ", jid=" + jid + ", box=" + box.length
                + " bytes]";
    }
}

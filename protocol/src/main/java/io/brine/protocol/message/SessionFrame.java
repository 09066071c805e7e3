package io.brine.protocol.message;

/**
 * A message between the master and one accepted minion, sealed with that minion's request key (AES-256-GCM). The
 * sealed plaintext is an inner frame holding one {@link SessionMessage}. The associated data binds session id,
 * direction and counter, so a frame cannot be reflected back or replayed within the replay window.
 *
 * @param sessionId the 16-byte session id from the auth reply
 * @param direction who sealed it
 * @param counter   per direction and session, increasing; receivers keep a replay window
 * @param box       the sealed inner frame
 */
public record SessionFrame(byte[] sessionId, Direction direction, long counter, byte[] box)
        implements Message.ToMaster, Message.ToPeer {

    @Override
    public FrameType type() {
        return FrameType.SESSION;
    }

    @Override
    public ToMaster.Kind toMaster() {
        return ToMaster.Kind.SESSION;
    }

    @Override
    public ToPeer.Kind toPeer() {
        return ToPeer.Kind.SESSION;
    }

    public enum Direction {
        MINION_TO_MASTER(0),
        MASTER_TO_MINION(1);

        private final int code;

        Direction(int code) {
            this.code = code;
        }

        public int code() {
            return code;
        }
    }

    @Override
    public String toString() {
        return "SessionFrame[" + direction + ", counter=" + counter + ", box=" + box.length + " bytes]";
    }
}

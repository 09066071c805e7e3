package io.brine.protocol.message;

/**
 * The master's signed answer to a {@link SessionFrame} whose session it does not know (it restarted, or the minion
 * was removed): the minion must authenticate again. Bound to the frame's session id and counter.
 */
public record SessionUnknown(byte[] sessionId, long counter, long timestampMs) implements Message.ToPeer {

    @Override
    public FrameType type() {
        return FrameType.SESSION_UNKNOWN;
    }

    @Override
    public ToPeer.Kind toPeer() {
        return ToPeer.Kind.SESSION_UNKNOWN;
    }

    @Override
    public String toString() {
        return "SessionUnknown[counter=" + counter + "]";
    }
}

package io.brine.transport;

/**
 * The sender of a frame on the master's request channel: an opaque handle the master answers through, and the
 * source address it rate-limits by. Implementations are immutable and usable as map keys.
 */
public interface Peer {

    /** The remote IP address without port ("127.0.0.1", "::1"), or "unknown" where the transport cannot tell. */
    String remoteAddress();

    /** The transport this peer came over, as {@code transport} names it ("zeromq", "tcp"): a metrics label. */
    default String transportName() {
        return "unknown";
    }

    /** How this peer's frames are to be read: where it sent them and in which wire's framing. */
    default Framing framing() {
        return Framing.MESSAGE;
    }

    /**
     * {@code MESSAGE}: one whole message per frame on the request channel (brine's frames on either transport, or a
     * Salt payload over ZeroMQ). {@code SALT_TCP_REQUEST}: one Salt TCP frame {@code {head, body}} on the request
     * channel; {@code SALT_TCP_PUBLISH}: one on the publish channel (the minion's hello), issue 15.
     */
    enum Framing {
        MESSAGE,
        SALT_TCP_REQUEST,
        SALT_TCP_PUBLISH
    }
}

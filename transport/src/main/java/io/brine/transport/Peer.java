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
}

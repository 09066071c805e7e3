package io.brine.transport.zmtp;

import java.util.List;

/**
 * What one ZMTP connection tells the transport, in the order of the wire. {@link Refused} is always the last event:
 * the connection is closed right after it. Byte arrays are the handler's own copies; the receiver may keep them.
 */
public sealed interface ZmtpEvent {

    /**
     * The peer's READY was accepted and ours sent: messages may flow both ways from now on. {@code identity} is the
     * one a REQ or DEALER chose for itself, or empty (then the ROUTER names the peer); always empty for a subscriber.
     */
    record Handshaken(SocketType socketType, byte[] identity) implements ZmtpEvent {
        @Override
        public String toString() {
            return "Handshaken[" + socketType + ", identity=" + Printable.of(identity) + "]";
        }
    }

    /** A whole message from a REQ or DEALER peer, every part in order (a REQ's first part is its empty delimiter). */
    record Message(List<byte[]> parts) implements ZmtpEvent {

        public Message {
            parts = List.copyOf(parts);
        }

        @Override
        public String toString() {
            return "Message" + parts.stream().map(Printable::of).toList();
        }
    }

    /** A subscription from a subscriber, in either form: ZMTP 3.1's SUBSCRIBE command or 3.0's message 0x01. */
    record Subscribe(byte[] topic) implements ZmtpEvent {
        @Override
        public String toString() {
            return "Subscribe[" + Printable.of(topic) + "]";
        }
    }

    /** A subscription cancelled: ZMTP 3.1's CANCEL command or 3.0's message 0x00. */
    record Cancel(byte[] topic) implements ZmtpEvent {
        @Override
        public String toString() {
            return "Cancel[" + Printable.of(topic) + "]";
        }
    }

    /**
     * The peer sent a heartbeat; the handler has already answered it with a PONG. {@code ttl} is the peer's hint in
     * tenths of a second (0: none): no traffic for that long and the peer may be taken for gone.
     */
    record Ping(int ttl, byte[] context) implements ZmtpEvent {
        @Override
        public String toString() {
            return "Ping[ttl=" + ttl + ", context=" + Printable.of(context) + "]";
        }
    }

    /** The peer answered a heartbeat (only once the transport sends PINGs of its own). */
    record Pong(byte[] context) implements ZmtpEvent {
        @Override
        public String toString() {
            return "Pong[" + Printable.of(context) + "]";
        }
    }

    /**
     * Why the connection is being closed: bad bytes, a limit, an unfit peer, or the peer's own ERROR. The reason is
     * the same for every frame refused alike (the drop log counts by it); {@code detail}, what varies (an announced
     * size), or null.
     */
    record Refused(String reason, String detail) implements ZmtpEvent {
        Refused(String reason) {
            this(reason, null);
        }

        @Override
        public String toString() {
            return "Refused[reason=" + reason + (detail == null ? "" : ", detail=" + detail) + "]";
        }
    }
}

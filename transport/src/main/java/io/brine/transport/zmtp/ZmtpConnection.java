package io.brine.transport.zmtp;

import io.brine.protocol.salt.SaltLimits;
import io.brine.transport.Peer;
import io.brine.transport.server.AcceptedConnections;
import io.brine.transport.server.Outbox;
import io.brine.transport.server.ServerConnection;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Supplier;

/**
 * One accepted ZMTP connection, on either port. {@link ServerConnection} holds its state, bound minions and queued
 * bytes; authenticated here means a minion bound to a request connection, or an honoured subscription on a publish
 * connection. This adds the port, the peer's socket type once handshaken, and the topics of a publish connection
 * ({@link #topics}, guarded by the {@link Subscriptions} lock).
 */
final class ZmtpConnection extends ServerConnection {

    @Override
    protected String transportName() {
        return "zeromq";
    }

    enum Port {
        REQUEST,
        PUBLISH
    }

    /** A subscription message is a command byte and a topic; ours are at most {@code m/} + 253 + {@code /}. */
    static final int MAX_SUBSCRIPTION = 1024;

    private final Port port;
    /** Topics this publish connection subscribed to: guarded by the {@link Subscriptions} lock. */
    final Set<String> topics = new HashSet<>();

    private volatile SocketType peerType;
    /**
     * A stock Salt minion's connection (issue 15): a request connection that sent a Salt payload, or a publish
     * connection that subscribed as Salt's SUB does. Its publications are Salt's shape (Subscriptions).
     */
    volatile boolean salt;
    /**
     * A stock Salt minion speaking Salt's TCP transport on this ZeroMQ port (issue 15): its first byte opened a
     * msgpack map, not a ZMTP greeting ({@link PortUnification}). Set once, on the event loop, before any frame.
     */
    volatile boolean saltTcp;
    /**
     * A Salt TCP publish connection kept although its hello did not open with the current aes key
     * ({@link ZmtpServerTransport#keepUnproven}): still unauthenticated for the limits and the connection budget, but
     * timed as a proven one (Salt has no heartbeat on TCP), so it is not closed while its minion waits.
     */
    volatile boolean saltUnproven;
    /** A Salt subscriber with {@code zmq_filtering}: it takes {@code [sha1hex(id)][envelope]}, else the envelope alone. */
    volatile boolean saltFiltering;

    ZmtpConnection(Channel channel, String remoteAddress, Port port, Outbox outbox, AcceptedConnections owner) {
        super(channel, remoteAddress, outbox, owner);
        this.port = port;
    }

    @Override
    protected Peer.Framing framing() {
        if (!saltTcp) {
            return Peer.Framing.MESSAGE;
        }
        return port == Port.REQUEST ? Peer.Framing.SALT_TCP_REQUEST : Peer.Framing.SALT_TCP_PUBLISH;
    }

    Port port() {
        return port;
    }

    SocketType peerType() {
        return peerType;
    }

    void handshaken(SocketType type) {
        peerType = type;
    }

    /** What this connection may send now, read by its decoder as each frame header completes. */
    ZmtpLimits limits(ZmtpServerOptions options) {
        if (port == Port.PUBLISH) {
            return ZmtpLimits.fixed(MAX_SUBSCRIPTION, 1, MAX_SUBSCRIPTION);
        }
        // A REQ puts an empty delimiter before its one frame; a DEALER sends the frame alone.
        return new ZmtpLimits(
                () -> frameLimit(options), () -> peerType == SocketType.REQ ? 2 : 1, () -> frameLimit(options));
    }

    /** What a Salt TCP frame from this connection may hold now, read at each frame's first byte. */
    Supplier<SaltLimits> saltLimits(ZmtpServerOptions options) {
        SaltLimits before = new SaltLimits(
                options.maxUnauthenticatedFrame(),
                SaltLimits.UNAUTHENTICATED.maxDepth(),
                SaltLimits.UNAUTHENTICATED.maxElements());
        if (port == Port.PUBLISH) {
            return () -> before; // a minion's hello, and nothing else
        }
        SaltLimits after =
                new SaltLimits(options.maxFrame(), SaltLimits.SESSION.maxDepth(), SaltLimits.SESSION.maxElements());
        return () -> isAuthenticated() ? after : before;
    }

    /**
     * Queues {@code header} then {@code body} (this takes both over; body may be null) for the event loop, which
     * writes and flushes them with the rest of its batch. When that would put more than {@code maxQueuedBytes} in
     * the queue, releases them, closes the connection instead and returns false.
     *
     * @param minionId the minion a publication is for (reported undelivered if the write fails); null for replies
     * @param frame the frame as given, for the undelivered report
     */
    boolean enqueue(ByteBuf header, ByteBuf body, String minionId, byte[] frame, long maxQueuedBytes) {
        long size = (long) header.readableBytes() + (body == null ? 0 : body.readableBytes());
        return enqueue(header, body, size, minionId, frame, maxQueuedBytes);
    }
}

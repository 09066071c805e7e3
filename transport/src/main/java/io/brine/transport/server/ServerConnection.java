package io.brine.transport.server;

import io.brine.transport.Peer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One connection the master accepted, on either transport: its channel and source address, whether it is
 * authenticated yet (which sets its frame limit and timeout), the minion ids bound to it, and the bytes queued
 * towards it through its loop's {@link Outbox}. Thread-safe, except {@link #needsFlush} (the event loop's).
 * A transport's connection class adds what its wire needs.
 */
public abstract class ServerConnection {

    private static final int OPEN = 0;
    private static final int AUTHENTICATED = 1;
    private static final int CLOSED = 2;

    private final Channel channel;
    private final String remoteAddress;
    private final Outbox outbox;
    private final AcceptedConnections owner;
    private final ServerPeer peer;
    private final AtomicInteger state = new AtomicInteger(OPEN);
    /** Admitted from a source the unauthenticated reserve is kept for ({@link ReservedSources}); set on admission. */
    volatile boolean reserved;

    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicBoolean overflowed = new AtomicBoolean();
    private final Set<String> minionIds = ConcurrentHashMap.newKeySet();
    /** Written to since the outbox last flushed: event loop only. */
    boolean needsFlush;
    /** Inbound bytes handed to the master and not yet handled ({@link InflightBudget}). */
    final AtomicLong inflightBytes = new AtomicLong();
    /** Not read because of the inbound bytes in flight, here or in total: event loop only. */
    boolean inflightPaused;

    /** @param owner where overflows and lost publications are reported; the transport's {@link AcceptedConnections} */
    protected ServerConnection(Channel channel, String remoteAddress, Outbox outbox, AcceptedConnections owner) {
        this.channel = channel;
        this.remoteAddress = remoteAddress;
        this.outbox = outbox;
        this.owner = owner;
        this.peer = new ServerPeer(this);
    }

    /** The transport as {@code transport} names it ("zeromq", "tcp"): a metrics label. */
    protected String transportName() {
        return "unknown";
    }

    /** How this connection's frames are to be read ({@link Peer#framing()}). */
    protected Peer.Framing framing() {
        return Peer.Framing.MESSAGE;
    }

    /** The source address of a channel that has none (not an IP socket). */
    static final String UNKNOWN = "unknown";

    /** The source address of {@code channel} without port, or "unknown". */
    public static String remoteAddressOf(Channel channel) {
        return channel.remoteAddress() instanceof InetSocketAddress address && address.getAddress() != null
                ? address.getAddress().getHostAddress()
                : UNKNOWN;
    }

    /** {@code peer}'s connection, when it is one of {@code type}'s; else an IllegalArgumentException. */
    public static <C extends ServerConnection> C of(Peer peer, Class<C> type) {
        if (peer instanceof ServerPeer serverPeer && type.isInstance(serverPeer.connection())) {
            return type.cast(serverPeer.connection());
        }
        throw new IllegalArgumentException("not a peer of this transport: " + peer);
    }

    public final Channel channel() {
        return channel;
    }

    public final String remoteAddress() {
        return remoteAddress;
    }

    /** This connection as the master's handlers see it: equal by identity, so a reconnection is a new peer. */
    public final Peer peer() {
        return peer;
    }

    public final Set<String> minionIds() {
        return minionIds;
    }

    /** The largest frame this connection may send now. */
    public final int frameLimit(ServerOptions options) {
        return state.get() == OPEN ? options.maxUnauthenticatedFrame() : options.maxFrame();
    }

    /**
     * Marks the connection authenticated, which takes it out of the unauthenticated caps; true the first time.
     * False also when it is closed already.
     */
    public final boolean authenticate() {
        if (!state.compareAndSet(OPEN, AUTHENTICATED)) {
            return false;
        }
        owner.authenticated(this);
        return true;
    }

    public final boolean isAuthenticated() {
        return state.get() == AUTHENTICATED;
    }

    /**
     * This connection sent what it may not (a frame over its limit, bytes that are not the protocol) and is being
     * closed: one WARN per reason and source address per interval ({@link AcceptedConnections#refused}).
     *
     * @param reason why, the same for every frame refused alike, naming the transport (one address may speak both)
     * @param detail what varies from one such frame to the next (an announced length); null for none
     */
    public final void refused(String reason, String detail) {
        owner.refused(this, reason, detail);
    }

    /** Marks the connection closed; true when it was counted unauthenticated until now. */
    public final boolean markClosed() {
        return state.getAndSet(CLOSED) == OPEN;
    }

    public final boolean isOpen() {
        return state.get() != CLOSED && channel.isActive();
    }

    public final long queuedBytes() {
        return queuedBytes.get();
    }

    /**
     * Queues {@code header} then {@code body} (this takes both over; body may be null) for the event loop, which
     * writes and flushes them with the rest of its batch. When that would put more than {@code maxQueuedBytes} in
     * the queue, releases them, closes the connection instead (reported once to the owner) and returns false.
     *
     * @param size the bytes this puts on the wire, framing included
     * @param minionId the minion a publication is for (reported undelivered if the write fails); null for replies
     * @param frame the frame as given, for the undelivered report
     */
    protected final boolean enqueue(
            ByteBuf header, ByteBuf body, long size, String minionId, byte[] frame, long maxQueuedBytes) {
        if (queuedBytes.addAndGet(size) > maxQueuedBytes) {
            queuedBytes.addAndGet(-size);
            header.release();
            if (body != null) {
                body.release();
            }
            if (overflowed.compareAndSet(false, true)) {
                owner.overflowed(this, maxQueuedBytes);
                channel.close();
            }
            return false;
        }
        outbox.add(new QueuedWrite(this, header, body, size, minionId, frame));
        return true;
    }

    /** A queued write is done (written or not): its bytes leave the queue. */
    final void written(long size) {
        queuedBytes.addAndGet(-size);
    }

    /** A publication queued for {@code minionId} that this connection closed on; on the event loop. */
    final void lost(String minionId, byte[] frame) {
        owner.lost(minionId, frame);
    }

    @Override
    public String toString() {
        return channel.id().asShortText() + "@" + remoteAddress;
    }
}

package io.brine.transport.zmtp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One accepted ZMTP connection, on either port: its channel, whether it is authenticated yet (a minion bound to a
 * request connection, an honoured subscription on a publish connection), which sets its limits and timeout; the
 * peer's socket type once handshaken; the bytes queued towards it. Thread-safe, except {@link #needsFlush} (the
 * event loop's) and {@link #topics} (guarded by the {@link Subscriptions} lock).
 */
final class ZmtpConnection {

    enum Port { REQUEST, PUBLISH }

    /** A subscription message is a command byte and a topic; ours are at most {@code m/} + 253 + {@code /}. */
    static final int MAX_SUBSCRIPTION = 1024;

    private static final int OPEN = 0;
    private static final int AUTHENTICATED = 1;
    private static final int CLOSED = 2;

    private final Channel channel;
    private final String remoteAddress;
    private final Port port;
    private final ZmtpOutbox outbox;
    private final ZmtpServerTransport transport;
    private final ZmtpPeer peer;
    private final AtomicInteger state = new AtomicInteger(OPEN);
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicBoolean overflowed = new AtomicBoolean();
    /** Minion ids bound to this request connection. */
    private final Set<String> minionIds = ConcurrentHashMap.newKeySet();
    /** Topics this publish connection subscribed to: guarded by the {@link Subscriptions} lock. */
    final Set<String> topics = new HashSet<>();
    private volatile SocketType peerType;
    /** Written to since the outbox last flushed: event loop only. */
    boolean needsFlush;

    ZmtpConnection(Channel channel, String remoteAddress, Port port, ZmtpOutbox outbox, ZmtpServerTransport transport) {
        this.channel = channel;
        this.remoteAddress = remoteAddress;
        this.port = port;
        this.outbox = outbox;
        this.transport = transport;
        this.peer = new ZmtpPeer(this);
    }

    Channel channel() {
        return channel;
    }

    String remoteAddress() {
        return remoteAddress;
    }

    Port port() {
        return port;
    }

    ZmtpPeer peer() {
        return peer;
    }

    Set<String> minionIds() {
        return minionIds;
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
        return new ZmtpLimits(() -> frameLimit(options), () -> peerType == SocketType.REQ ? 2 : 1,
                () -> frameLimit(options));
    }

    private int frameLimit(ZmtpServerOptions options) {
        return state.get() == OPEN ? options.maxUnauthenticatedFrame() : options.maxFrame();
    }

    /** Marks the connection authenticated; true the first time. False also when it is closed already. */
    boolean authenticate() {
        return state.compareAndSet(OPEN, AUTHENTICATED);
    }

    boolean isAuthenticated() {
        return state.get() == AUTHENTICATED;
    }

    /** Marks the connection closed; true when it was counted unauthenticated until now. */
    boolean markClosed() {
        return state.getAndSet(CLOSED) == OPEN;
    }

    boolean isOpen() {
        return state.get() != CLOSED && channel.isActive();
    }

    long queuedBytes() {
        return queuedBytes.get();
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
        if (queuedBytes.addAndGet(size) > maxQueuedBytes) {
            queuedBytes.addAndGet(-size);
            header.release();
            if (body != null) {
                body.release();
            }
            if (overflowed.compareAndSet(false, true)) {
                transport.overflowed(this, maxQueuedBytes);
                channel.close();
            }
            return false;
        }
        outbox.add(new QueuedWrite(this, header, body, size, minionId, frame));
        return true;
    }

    @Override
    public String toString() {
        return channel.id().asShortText() + "@" + remoteAddress;
    }

    /** A write queued by {@link #enqueue}; told when it is done, on the event loop. */
    static final class QueuedWrite implements ChannelFutureListener {
        final ZmtpConnection connection;
        final ByteBuf header;
        final ByteBuf body;
        private final long size;
        private final String minionId;
        private final byte[] frame;

        QueuedWrite(ZmtpConnection connection, ByteBuf header, ByteBuf body, long size, String minionId, byte[] frame) {
            this.connection = connection;
            this.header = header;
            this.body = body;
            this.size = size;
            this.minionId = minionId;
            this.frame = frame;
        }

        /** Writes both buffers (not flushed); this is told when the last one is done. */
        void write(Channel channel) {
            if (body == null) {
                channel.write(header, channel.newPromise().addListener(this));
            } else {
                channel.write(header, channel.voidPromise());
                channel.write(body, channel.newPromise().addListener(this));
            }
        }

        @Override
        public void operationComplete(ChannelFuture future) {
            done(future.isSuccess());
        }

        /** Never written: the connection closed first. Releases the buffers. */
        void drop() {
            header.release();
            if (body != null) {
                body.release();
            }
            done(false);
        }

        private void done(boolean written) {
            connection.queuedBytes.addAndGet(-size);
            if (!written && minionId != null) {
                connection.transport.lost(minionId, frame);
            }
        }
    }
}

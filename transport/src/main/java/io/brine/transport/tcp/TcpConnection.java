package io.brine.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One accepted connection: its channel, whether a minion is bound to it yet (which sets its frame limit and idle
 * timeout), the minion ids bound to it, and the bytes queued towards it. Thread-safe; {@link #needsFlush} belongs
 * to the connection's event loop.
 */
final class TcpConnection {

    private static final int OPEN = 0;
    private static final int AUTHENTICATED = 1;
    private static final int CLOSED = 2;

    private final Channel channel;
    private final String remoteAddress;
    private final TcpPeer peer;
    private final LoopOutbox outbox;
    private final TcpServerTransport transport;
    private final AtomicInteger state = new AtomicInteger(OPEN);
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicBoolean overflowed = new AtomicBoolean();
    private final Set<String> minionIds = ConcurrentHashMap.newKeySet();
    /** Written to since the outbox last flushed: event loop only. */
    boolean needsFlush;

    TcpConnection(Channel channel, String remoteAddress, LoopOutbox outbox, TcpServerTransport transport) {
        this.channel = channel;
        this.remoteAddress = remoteAddress;
        this.outbox = outbox;
        this.transport = transport;
        this.peer = new TcpPeer(this);
    }

    Channel channel() {
        return channel;
    }

    String remoteAddress() {
        return remoteAddress;
    }

    TcpPeer peer() {
        return peer;
    }

    Set<String> minionIds() {
        return minionIds;
    }

    /** The largest frame this connection may send now. */
    int frameLimit(TcpServerOptions options) {
        return state.get() == OPEN ? options.maxUnauthenticatedFrame() : options.maxFrame();
    }

    /** Marks a minion bound; true the first time. False also when the connection is closed already. */
    boolean authenticate() {
        return state.compareAndSet(OPEN, AUTHENTICATED);
    }

    boolean isAuthenticated() {
        return state.get() == AUTHENTICATED;
    }

    /** Marks the connection closed; true when no minion had been bound to it (it was counted unauthenticated). */
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
     * Queues {@code buf} (which this takes over) for the connection's event loop, which writes and flushes it with
     * the rest of its batch. When that would put more than {@code maxQueuedBytes} in the queue, closes the connection
     * instead and returns false.
     *
     * @param minionId the minion a publication is for (reported undelivered if the write fails); null for replies
     * @param frame the frame as given, for the undelivered report
     */
    boolean enqueue(ByteBuf buf, String minionId, byte[] frame, long maxQueuedBytes) {
        long size = (long) buf.readableBytes() + TcpFrameDecoder.PREFIX;
        if (queuedBytes.addAndGet(size) > maxQueuedBytes) {
            queuedBytes.addAndGet(-size);
            buf.release();
            if (overflowed.compareAndSet(false, true)) {
                transport.overflowed(this, maxQueuedBytes);
                channel.close();
            }
            return false;
        }
        outbox.add(new QueuedWrite(this, buf, size, minionId, frame));
        return true;
    }

    /** A write queued by {@link #enqueue}; told when it is done, on the event loop. */
    static final class QueuedWrite implements ChannelFutureListener {
        final TcpConnection connection;
        final ByteBuf buf;
        private final long size;
        private final String minionId;
        private final byte[] frame;

        QueuedWrite(TcpConnection connection, ByteBuf buf, long size, String minionId, byte[] frame) {
            this.connection = connection;
            this.buf = buf;
            this.size = size;
            this.minionId = minionId;
            this.frame = frame;
        }

        @Override
        public void operationComplete(ChannelFuture future) {
            done(future.isSuccess());
        }

        /** Never written: the connection closed first. Releases the buffer. */
        void drop() {
            buf.release();
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

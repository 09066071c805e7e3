package io.brine.transport.tcp;

import io.brine.transport.server.AcceptedConnections;
import io.brine.transport.server.Outbox;
import io.brine.transport.server.ServerConnection;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;

/**
 * One accepted connection: its channel, whether a minion is bound to it yet (which sets its frame limit and idle
 * timeout), the minion ids bound to it, and the bytes queued towards it (all of it {@link ServerConnection}'s, shared
 * with the ZeroMQ transport). Thread-safe.
 */
final class TcpConnection extends ServerConnection {

    @Override
    protected String transportName() {
        return "tcp";
    }

    TcpConnection(Channel channel, String remoteAddress, Outbox outbox, AcceptedConnections owner) {
        super(channel, remoteAddress, outbox, owner);
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
        return enqueue(buf, null, size, minionId, frame, maxQueuedBytes);
    }
}

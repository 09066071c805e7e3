package io.brine.transport.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;

/** A write queued by {@link ServerConnection#enqueue}: one or two buffers; told when it is done, on the event loop. */
final class QueuedWrite implements ChannelFutureListener {

    final ServerConnection connection;
    private final ByteBuf header;
    private final ByteBuf body;
    private final long size;
    private final String minionId;
    private final byte[] frame;

    QueuedWrite(ServerConnection connection, ByteBuf header, ByteBuf body, long size, String minionId, byte[] frame) {
        this.connection = connection;
        this.header = header;
        this.body = body;
        this.size = size;
        this.minionId = minionId;
        this.frame = frame;
    }

    /** Writes the buffers (not flushed); this is told when the last one is done. */
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
        connection.written(size);
        if (!written && minionId != null) {
            connection.lost(minionId, frame);
        }
    }
}

package io.brine.minion.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

/**
 * Framing, inbound: {@code length:u32be || frame} (PROTOCOL.md 2.2). A length of 0 or above the limit is seen as
 * soon as its 4 bytes are in, before anything is buffered for the frame, and becomes a {@link Refused} value for
 * the next handler (which closes the connection); every byte after it is discarded.
 */
final class TcpFrameDecoder extends LengthFieldBasedFrameDecoder {

    static final int PREFIX = 4;

    record Refused(long length, int limit) {
    }

    private final int limit;
    private boolean refused;

    TcpFrameDecoder(int limit) {
        super(limit, 0, PREFIX, 0, PREFIX, true);
        this.limit = limit;
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        if (refused) {
            in.skipBytes(in.readableBytes());
            return null;
        }
        if (in.readableBytes() < PREFIX) {
            return null;
        }
        long length = in.getUnsignedInt(in.readerIndex());
        if (length == 0 || length > limit) {
            refused = true;
            in.skipBytes(in.readableBytes());
            return new Refused(length, limit);
        }
        return super.decode(ctx, in);
    }
}

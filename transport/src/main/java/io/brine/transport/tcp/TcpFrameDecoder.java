package io.brine.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import java.util.function.IntSupplier;

/**
 * Framing, inbound: {@code length:u32be || frame} (PROTOCOL.md 2.2). The length is checked against the
 * connection's current limit as soon as its 4 bytes are in, before any room is made for the frame; a length of 0
 * or above the limit becomes a {@link Refused} value for the next handler (which closes the connection), and
 * every byte after it is discarded. Whole frames go on as {@link ByteBuf}s without the prefix.
 */
final class TcpFrameDecoder extends LengthFieldBasedFrameDecoder {

    static final int PREFIX = 4;

    /** A length prefix this connection may not send. */
    record Refused(long length, int limit) {
        /** Why, the same for every length over one limit: a drop log's reason, one line per limit and source. */
        String reason() {
            return length == 0 ? "a frame of 0 bytes" : "a frame over the limit of " + limit + " bytes";
        }
    }

    private final IntSupplier limit;
    private boolean refused;

    /**
     * @param maxFrame the highest limit {@code limit} can ever give (a backstop for the base class)
     * @param limit the limit now; read once per frame on the event loop
     */
    TcpFrameDecoder(int maxFrame, IntSupplier limit) {
        // The base class counts the prefix in its maximum: without it, a frame of exactly maxFrame was refused.
        super((int) Math.min((long) maxFrame + PREFIX, Integer.MAX_VALUE), 0, PREFIX, 0, PREFIX, true);
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
        int max = limit.getAsInt();
        if (length == 0 || length > max) {
            refused = true;
            in.skipBytes(in.readableBytes());
            return new Refused(length, max);
        }
        return super.decode(ctx, in);
    }
}

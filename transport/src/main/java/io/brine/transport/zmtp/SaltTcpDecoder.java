package io.brine.transport.zmtp;

import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltStreamScanner;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * Bytes to Salt TCP frames (salt/transport/frame.py: a msgpack map {@code {head, body}} with no length prefix),
 * inbound: each whole frame is passed on as a {@code byte[]}. {@link SaltStreamScanner} finds where a frame ends by
 * walking msgpack headers, resuming where it stopped, and refuses a frame as soon as a header declares it over the
 * connection's limits at the frame's start (unauthenticated or not, read from {@code limits}): so nothing beyond
 * one frame's limit plus one read is ever buffered. The bytes of an unfinished frame are kept in one array, each
 * byte copied in once; {@link #partialSince()} says since when one waits (the handler's partial-frame timeout).
 * A malformed frame is an exception after which every byte is discarded.
 */
final class SaltTcpDecoder extends ChannelInboundHandlerAdapter {

    static final String NAME = "saltTcpDecoder";
    private static final int INITIAL = 4096;

    private final Supplier<SaltLimits> limits;
    private byte[] buffer = new byte[INITIAL];
    private int length;
    private SaltStreamScanner scanner;
    private boolean refused;
    private long partialSince;

    SaltTcpDecoder(Supplier<SaltLimits> limits) {
        this.limits = limits;
    }

    /** {@link System#nanoTime()} when the unfinished frame buffered now began to arrive; 0 when none is. */
    long partialSince() {
        return partialSince;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            if (refused) {
                return;
            }
            append(in);
        } finally {
            in.release();
        }
        int start = 0;
        try {
            while (start < length) {
                if (scanner == null) {
                    scanner = new SaltStreamScanner(limits.get());
                }
                int size = scanner.scan(buffer, start, length - start);
                if (size < 0) {
                    break;
                }
                byte[] frame = Arrays.copyOfRange(buffer, start, start + size);
                start += size;
                scanner = null;
                ctx.fireChannelRead(frame);
                if (refused || !ctx.channel().isActive()) {
                    return;
                }
            }
        } catch (MalformedException e) {
            refused = true;
            length = 0;
            buffer = new byte[0];
            ctx.fireExceptionCaught(new DecoderException(e.getMessage(), e));
            return;
        }
        // The unfinished frame moves to the start; the scanner counts from the frame's first byte.
        System.arraycopy(buffer, start, buffer, 0, length - start);
        length -= start;
        if (length == 0) {
            partialSince = 0;
            if (buffer.length > 64 * 1024) {
                buffer = new byte[INITIAL];
            }
        } else if (start > 0 || partialSince == 0) {
            partialSince = System.nanoTime();
        }
    }

    private void append(ByteBuf in) {
        int readable = in.readableBytes();
        if (length + readable > buffer.length) {
            // The scanner refuses a frame at its limit, so this grows to at most the limit plus one read.
            int doubled = (int) Math.min(buffer.length * 2L, limits.get().maxBytes() + (long) readable);
            buffer = Arrays.copyOf(buffer, Math.max(length + readable, doubled));
        }
        in.readBytes(buffer, length, readable);
        length += readable;
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        buffer = new byte[0];
        length = 0;
    }
}

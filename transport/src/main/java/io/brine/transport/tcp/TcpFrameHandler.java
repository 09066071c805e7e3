package io.brine.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;

/**
 * The TCP pipeline's handler after the frame decoder, master and minion alike: each whole frame is copied off the
 * pooled buffer (released at once) and handed on as a byte array; a {@link TcpFrameDecoder.Refused refused} length
 * and reader idleness close the connection, with the side's own log line.
 */
abstract class TcpFrameHandler extends ChannelInboundHandlerAdapter {

    @Override
    public final void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf buf) {
            byte[] frame;
            try {
                frame = ByteBufUtil.getBytes(buf);
            } finally {
                buf.release();
            }
            onFrame(frame);
        } else if (msg instanceof TcpFrameDecoder.Refused refused) {
            onRefused(refused);
            ctx.close();
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof IdleStateEvent) {
            onIdle();
            ctx.close();
        } else {
            ctx.fireUserEventTriggered(event);
        }
    }

    /** A whole frame, on the event loop. */
    abstract void onFrame(byte[] frame);

    /** Logs why the connection is closed for a refused length. */
    abstract void onRefused(TcpFrameDecoder.Refused refused);

    /** Logs why the connection is closed for idleness. */
    abstract void onIdle();
}

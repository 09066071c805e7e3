package io.brine.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Frames from one connection to the transport (which hands them to the master's handler, on this event loop);
 * closes the connection on a refused length prefix or when it stays idle; stops reading a connection whose
 * outbound queue is over the high water mark until it drains.
 */
final class TcpServerHandler extends ChannelInboundHandlerAdapter {

    private static final Logger LOG = LoggerFactory.getLogger(TcpServerTransport.class);

    private final TcpServerTransport transport;
    private final TcpConnection connection;

    TcpServerHandler(TcpServerTransport transport, TcpConnection connection) {
        this.transport = transport;
        this.connection = connection;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf buf) {
            byte[] frame;
            try {
                frame = ByteBufUtil.getBytes(buf);
            } finally {
                buf.release();
            }
            transport.deliver(connection, frame);
        } else if (msg instanceof TcpFrameDecoder.Refused refused) {
            LOG.debug("Connection {}: closed: announced a frame of {} bytes, the limit is {}", connection.peer(),
                    refused.length(), refused.limit());
            ctx.close();
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof IdleStateEvent) {
            LOG.debug("Connection {}: closed: no complete frame for {}", connection.peer(),
                    connection.isAuthenticated() ? "the idle timeout" : "the unauthenticated timeout");
            ctx.close();
        } else {
            ctx.fireUserEventTriggered(event);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        Channel channel = ctx.channel();
        channel.config().setAutoRead(channel.isWritable());
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        transport.disconnected(connection);
        ctx.fireChannelInactive();
    }
}

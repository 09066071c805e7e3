package io.brine.transport.tcp;

import io.netty.channel.ChannelHandlerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Frames from one connection to the transport (which hands them to the master's handler, on this event loop);
 * closes the connection on a refused length prefix or when it stays idle; stops reading a connection whose
 * outbound queue is over the high water mark, or whose inbound frames in flight are over their bound, until it
 * drains.
 */
final class TcpServerHandler extends TcpFrameHandler {

    private static final Logger LOG = LoggerFactory.getLogger(TcpServerTransport.class);

    private final TcpServerTransport transport;
    private final TcpConnection connection;

    TcpServerHandler(TcpServerTransport transport, TcpConnection connection) {
        this.transport = transport;
        this.connection = connection;
    }

    @Override
    void onFrame(byte[] frame) {
        transport.deliver(connection, frame);
    }

    @Override
    void onRefused(TcpFrameDecoder.Refused refused) {
        LOG.debug(
                "Connection {}: closed: announced a frame of {} bytes, the limit is {}",
                connection.peer(),
                refused.length(),
                refused.limit());
        connection.refused("TCP: " + refused.reason(), refused.length() + " bytes announced");
    }

    @Override
    void onIdle() {
        LOG.debug(
                "Connection {}: closed: no complete frame for {}",
                connection.peer(),
                connection.isAuthenticated() ? "the idle timeout" : "the unauthenticated timeout");
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        transport.updateAutoRead(connection);
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        transport.disconnected(connection);
        ctx.fireChannelInactive();
    }
}

package io.brine.transport.zmtp;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;

/**
 * The whole per-connection pipeline of one port, in order (inbound top to bottom):
 * <pre>
 * zmtpDecoder  ZmtpDecoder            greeting checked as it arrives; frame headers against the limits before buffering
 * zmtp         ZmtpConnectionHandler  our greeting at once; READY exchange; PING answered; ZmtpEvents out
 * connection   ZmtpServerHandler      events to the transport; timeouts; back-pressure; logs and closes on errors
 * </pre>
 * Outbound, the transport writes framed buffers ({@link ZmtpEncoder}) through an {@link io.brine.transport.server.Outbox}. A connection over
 * the connection caps is closed before any of this is built.
 */
final class ZmtpServerInitializer extends ChannelInitializer<Channel> {

    static final String CONNECTION = "connection";

    private final ZmtpServerTransport transport;
    private final ZmtpServerOptions options;
    private final ZmtpConnection.Port port;

    ZmtpServerInitializer(ZmtpServerTransport transport, ZmtpServerOptions options, ZmtpConnection.Port port) {
        this.transport = transport;
        this.options = options;
        this.port = port;
    }

    @Override
    protected void initChannel(Channel channel) {
        ZmtpConnection connection = transport.admit(channel, port);
        if (connection == null) {
            channel.close();
            return;
        }
        ChannelPipeline pipeline = channel.pipeline();
        ZmtpPipeline.addTo(pipeline, port == ZmtpConnection.Port.REQUEST ? SocketType.ROUTER : SocketType.PUB,
                connection.limits(options));
        pipeline.addLast(CONNECTION, new ZmtpServerHandler(transport, connection, options));
    }
}

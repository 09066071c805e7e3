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
 * When the transport also serves Salt's TCP transport, {@link PortUnification} comes first instead and builds the
 * rest once the client's first byte says which wire it speaks. Outbound, the transport writes framed buffers ({@link ZmtpEncoder}) through an {@link io.brine.transport.server.Outbox}. A connection over
 * the connection caps is closed before any of this is built.
 */
final class ZmtpServerInitializer extends ChannelInitializer<Channel> {

    static final String CONNECTION = "connection";
    static final String UNIFICATION = "unification";

    private final ZmtpServerTransport transport;
    private final ZmtpServerOptions options;
    private final ZmtpConnection.Port port;
    private final boolean saltTcp;

    ZmtpServerInitializer(
            ZmtpServerTransport transport, ZmtpServerOptions options, ZmtpConnection.Port port, boolean saltTcp) {
        this.transport = transport;
        this.options = options;
        this.port = port;
        this.saltTcp = saltTcp;
    }

    @Override
    protected void initChannel(Channel channel) {
        ZmtpConnection connection = transport.admit(channel, port);
        if (connection == null) {
            channel.close();
            return;
        }
        ChannelPipeline pipeline = channel.pipeline();
        SocketType ours = port == ZmtpConnection.Port.REQUEST ? SocketType.ROUTER : SocketType.PUB;
        if (saltTcp) { // ZMTP or Salt's TCP, as the client's first byte says
            pipeline.addLast(UNIFICATION, new PortUnification(transport, connection, options, ours));
            return;
        }
        ZmtpPipeline.addTo(
                pipeline,
                port == ZmtpConnection.Port.REQUEST ? SocketType.ROUTER : SocketType.PUB,
                connection.limits(options));
        pipeline.addLast(CONNECTION, new ZmtpServerHandler(transport, connection, options));
    }
}

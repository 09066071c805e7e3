package io.brine.transport.tcp;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateHandler;
import java.util.concurrent.TimeUnit;

/**
 * The whole per-connection pipeline, in order (inbound top to bottom, outbound bottom to top):
 * <pre>
 * tls           SslHandler             only with a certificate configured
 * frameDecoder  TcpFrameDecoder        length prefix checked against the connection's limit before buffering
 * frameEncoder  LengthFieldPrepender   4-byte big-endian length in front of each outbound frame
 * idle          IdleStateHandler       after the decoder, so only whole frames count as activity
 * frames        TcpServerHandler       frames to the master's InboundHandler; limits, idleness, disconnects
 * exceptions    TcpExceptionHandler    the one place that decides what is logged, and closes
 * </pre>
 * A connection over the connection caps is closed before any of this is built.
 */
final class TcpServerInitializer extends ChannelInitializer<Channel> {

    static final String TLS = "tls";
    static final String FRAME_DECODER = "frameDecoder";
    static final String FRAME_ENCODER = "frameEncoder";
    static final String IDLE = "idle";
    static final String FRAMES = "frames";
    static final String EXCEPTIONS = "exceptions";

    private static final LengthFieldPrepender PREFIXER = new LengthFieldPrepender(TcpFrameDecoder.PREFIX);

    private final TcpServerTransport transport;
    private final TcpServerOptions options;
    private final SslContext tls;
    private final TcpExceptionHandler exceptions;

    TcpServerInitializer(TcpServerTransport transport, TcpServerOptions options, SslContext tls) {
        this.transport = transport;
        this.options = options;
        this.tls = tls;
        this.exceptions = new TcpExceptionHandler();
    }

    @Override
    protected void initChannel(Channel channel) {
        TcpConnection connection = transport.admit(channel);
        if (connection == null) {
            channel.close();
            return;
        }
        ChannelPipeline pipeline = channel.pipeline();
        if (tls != null) {
            SslHandler ssl = tls.newHandler(channel.alloc());
            ssl.setHandshakeTimeoutMillis(options.tlsHandshakeTimeout().toMillis());
            pipeline.addLast(TLS, ssl);
        }
        pipeline.addLast(FRAME_DECODER, new TcpFrameDecoder(options.maxFrame(), () -> connection.frameLimit(options)));
        pipeline.addLast(FRAME_ENCODER, PREFIXER);
        pipeline.addLast(IDLE, idleHandler(options.unauthenticatedTimeout().toMillis()));
        pipeline.addLast(FRAMES, new TcpServerHandler(transport, connection));
        pipeline.addLast(EXCEPTIONS, exceptions);
    }

    static IdleStateHandler idleHandler(long readerIdleMillis) {
        return new IdleStateHandler(readerIdleMillis, 0, 0, TimeUnit.MILLISECONDS);
    }
}

package io.brine.transport.tcp;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleStateHandler;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's whole pipeline, in order (inbound top to bottom, outbound bottom to top):
 * <pre>
 * tls           SslHandler             only with tls configured; verifies the master's certificate
 * frameDecoder  TcpFrameDecoder        length prefix checked before buffering
 * frameEncoder  LengthFieldPrepender   4-byte big-endian length in front of each frame
 * idle          IdleStateHandler       after the decoder: a master silent for the idle timeout is dropped
 * frames        Frames                 frames to the transport; readiness; refused lengths and idleness close
 * exceptions    Exceptions             the one place that decides what is logged, and closes
 * </pre>
 */
final class TcpClientInitializer extends ChannelInitializer<Channel> {

    private static final Logger LOG = LoggerFactory.getLogger(TcpClientTransport.class);
    private static final LengthFieldPrepender PREFIXER = new LengthFieldPrepender(TcpFrameDecoder.PREFIX);
    private static final Exceptions EXCEPTIONS = new Exceptions();

    private final TcpClientTransport transport;
    private final TcpClientOptions options;
    private final SslContext tls;
    private final String host;
    private final int port;

    TcpClientInitializer(
            TcpClientTransport transport, TcpClientOptions options, SslContext tls, String host, int port) {
        this.transport = transport;
        this.options = options;
        this.tls = tls;
        this.host = host;
        this.port = port;
    }

    @Override
    protected void initChannel(Channel channel) {
        ChannelPipeline pipeline = channel.pipeline();
        if (tls != null) {
            SslHandler ssl = tls.newHandler(channel.alloc(), host, port);
            ssl.setHandshakeTimeoutMillis(options.tlsHandshakeTimeout().toMillis());
            pipeline.addLast("tls", ssl);
        }
        pipeline.addLast("frameDecoder", new TcpFrameDecoder(options.maxFrame(), options::maxFrame));
        pipeline.addLast("frameEncoder", PREFIXER);
        pipeline.addLast("idle", new IdleStateHandler(options.idleTimeout().toMillis(), 0, 0, TimeUnit.MILLISECONDS));
        pipeline.addLast("frames", new Frames(transport, tls != null));
        pipeline.addLast("exceptions", EXCEPTIONS);
    }

    /** Frames to the transport, on the event loop; tells it when the connection is ready for frames. */
    private static final class Frames extends TcpFrameHandler {

        private final TcpClientTransport transport;
        private final boolean tls;

        Frames(TcpClientTransport transport, boolean tls) {
            this.transport = transport;
            this.tls = tls;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            if (!tls) {
                transport.ready(ctx.channel());
            }
            ctx.fireChannelActive();
        }

        @Override
        void onFrame(byte[] frame) {
            transport.deliver(frame);
        }

        @Override
        void onRefused(TcpFrameDecoder.Refused refused) {
            transport.refused(refused);
        }

        @Override
        void onIdle() {
            LOG.debug("TCP transport: nothing from the master for the idle timeout; reconnecting");
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
            if (event instanceof SslHandshakeCompletionEvent handshake) {
                if (handshake.isSuccess()) {
                    transport.ready(ctx.channel());
                } else {
                    // Not a network hiccup: the master's certificate is not the one configured, or TLS is off there.
                    LOG.warn(
                            "TCP transport: TLS handshake with the master failed: {}",
                            handshake.cause().toString());
                    ctx.close();
                }
            } else {
                super.userEventTriggered(ctx, event);
            }
        }
    }

    /** Last in the pipeline: logs once, at the right level, and closes. */
    @ChannelHandler.Sharable
    private static final class Exceptions extends ChannelInboundHandlerAdapter {
        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
            if (cause instanceof NotSslRecordException) {
                LOG.warn("TCP transport: the master does not speak TLS: remove tls from minion.yaml, or set it up on"
                        + " the master");
            } else if (root instanceof SSLException) {
                LOG.debug("TCP transport: TLS failure: {}", root.toString());
            } else if (root instanceof IOException || cause instanceof DecoderException) {
                LOG.debug("TCP transport: connection to the master failed: {}", root.toString());
            } else {
                LOG.error("TCP transport: closed the connection after an unexpected failure", cause);
            }
            ctx.close();
        }
    }
}

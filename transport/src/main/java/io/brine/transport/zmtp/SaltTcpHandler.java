package io.brine.transport.zmtp;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transport's end of a Salt TCP connection (issue 15), after {@link SaltTcpDecoder}: whole frames to the
 * transport; the timeouts; reading paused while the outbound queue is over the high water mark; logs and closes on
 * errors.
 *
 * <p><b>Timeouts.</b> Before the connection is authenticated (a minion bound to it by the master), it is closed
 * when no whole frame arrived for the unauthenticated timeout, so a silent peer and one trickling a frame both go.
 * Afterwards a Salt minion's connections are quiet by design (its publish connection sends one hello and then
 * nothing; Salt has no heartbeat on TCP and relies on TCP keepalive), so only an unfinished frame is timed: one
 * pending for the idle timeout closes the connection.
 */
final class SaltTcpHandler extends ChannelInboundHandlerAdapter {

    private static final Logger LOG = LoggerFactory.getLogger(ZmtpServerTransport.class);

    private final ZmtpServerTransport transport;
    private final ZmtpConnection connection;
    private final SaltTcpDecoder decoder;
    private final long unauthenticatedNanos;
    private final long idleNanos;
    private long lastFrame;
    private ScheduledFuture<?> timer;

    SaltTcpHandler(ZmtpServerTransport transport, ZmtpConnection connection, SaltTcpDecoder decoder,
            ZmtpServerOptions options) {
        this.transport = transport;
        this.connection = connection;
        this.decoder = decoder;
        this.unauthenticatedNanos = options.unauthenticatedTimeout().toNanos();
        this.idleNanos = options.idleTimeout().toNanos();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        lastFrame = System.nanoTime();
        long period = Math.max(Math.min(unauthenticatedNanos, idleNanos) / 4, 1);
        timer = ctx.executor().scheduleAtFixedRate(() -> check(ctx), period, period, TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof byte[] frame)) {
            ctx.fireChannelRead(msg);
            return;
        }
        lastFrame = System.nanoTime();
        transport.saltFrame(connection, frame);
    }

    private void check(ChannelHandlerContext ctx) {
        if (!ctx.channel().isActive()) {
            return;
        }
        long now = System.nanoTime();
        if (!connection.isAuthenticated()) {
            if (now - lastFrame >= unauthenticatedNanos) {
                LOG.debug("Connection {} ({}, Salt TCP): closed: no whole frame for the unauthenticated timeout",
                        connection, connection.port());
                ctx.close();
            }
            return;
        }
        long partialSince = decoder.partialSince();
        if (partialSince != 0 && now - partialSince >= idleNanos) {
            LOG.debug("Connection {} ({}, Salt TCP): closed: a frame unfinished for the idle timeout", connection,
                    connection.port());
            ctx.close();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        transport.updateAutoRead(connection); // writable and not over its inbound bytes in flight
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (timer != null) {
            timer.cancel(false);
        }
        transport.disconnected(connection);
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof IOException || cause instanceof DecoderException) {
            LOG.debug("Connection {} ({}, Salt TCP): closed: {}", connection, connection.port(), root.toString());
        } else {
            LOG.error("Connection {} ({}, Salt TCP): closed after an unexpected failure", connection,
                    connection.port(), cause);
        }
        ctx.close();
    }
}

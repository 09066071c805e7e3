package io.brine.transport.zmtp;

import io.netty.channel.ChannelHandlerContext;
import java.util.concurrent.TimeUnit;

/**
 * The transport's end of a Salt TCP connection (issue 15), after {@link SaltTcpDecoder}: whole frames to the
 * transport; the timeouts; reading paused while the outbound queue is over the high water mark; logs and closes on
 * errors.
 *
 * <p><b>Timeouts.</b> Before the connection is authenticated (a minion bound to it by the master), it is closed
 * when no whole frame arrived for the unauthenticated timeout, so a silent peer and one trickling a frame both go.
 * Afterwards a Salt minion's connections are quiet by design (its publish connection sends one hello and then
 * nothing; Salt has no heartbeat on TCP and relies on TCP keepalive), so only an unfinished frame is timed: one
 * pending for the idle timeout closes the connection. A publish connection kept unproven (its hello sealed with the
 * aes key before a restart) is timed the same way, though it stays unauthenticated for the limits.
 */
final class SaltTcpHandler extends ConnectionEnd {

    private final SaltTcpDecoder decoder;
    private long lastFrame;

    SaltTcpHandler(
            ZmtpServerTransport transport,
            ZmtpConnection connection,
            SaltTcpDecoder decoder,
            ZmtpServerOptions options) {
        super(transport, connection, options, ", Salt TCP");
        this.decoder = decoder;
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
        if (!connection.isAuthenticated() && !connection.saltUnproven) {
            if (now - lastFrame >= unauthenticatedNanos) {
                LOG.debug(
                        "Connection {} ({}, Salt TCP): closed: no whole frame for the unauthenticated timeout",
                        connection,
                        connection.port());
                ctx.close();
            }
            return;
        }
        long partialSince = decoder.partialSince();
        if (partialSince != 0 && now - partialSince >= idleNanos) {
            LOG.debug(
                    "Connection {} ({}, Salt TCP): closed: a frame unfinished for the idle timeout",
                    connection,
                    connection.port());
            ctx.close();
        }
    }
}

package io.brine.transport.zmtp;

import io.netty.channel.ChannelHandlerContext;
import java.util.concurrent.TimeUnit;

/**
 * The transport's end of one connection, after the ZMTP handlers: {@link ZmtpEvent}s to the transport; the
 * connection's timeouts; stops reading a connection whose outbound queue is over the high water mark, or whose
 * inbound messages in flight are over their bound, until it drains; the one place that logs what went wrong and closes.
 *
 * <p><b>Timeouts.</b> Only whole events count as activity (the decoder passes nothing on for a partial greeting or
 * frame). A connection without activity for the unauthenticated timeout, or the idle timeout once authenticated,
 * is closed. An authenticated connection silent for half its timeout is sent a PING (TTL 0, as Salt's master
 * sends): every ZMTP 3.1 peer answers it, so a subscriber that sends nothing of its own (libzmq without
 * heartbeats) stays connected while it lives, and a dead one is closed. Unauthenticated peers are never pinged.
 *
 * <p>The check re-arms itself for the next moment the connection could be due (a ping, a close). Its deadlines are
 * rounded up to a grid shared by every connection ({@link #GRID_DIVISOR}th of the shorter timeout, 1 s at most), so
 * that the event loop wakes once for all the checks that fall due in one step of it, not once per connection: an
 * idle master with thousands of connections otherwise woke about a hundred times a second for them.
 */
final class ZmtpServerHandler extends ConnectionEnd {

    /** The timer grid is the shorter timeout divided by this (0.5 s at the default 60 s): a check comes that late. */
    static final long GRID_DIVISOR = 120;

    private static final long MAX_GRID_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final long gridNanos;
    private long lastActivity;
    private boolean pinged;

    ZmtpServerHandler(ZmtpServerTransport transport, ZmtpConnection connection, ZmtpServerOptions options) {
        super(transport, connection, options, "");
        long shorter = Math.min(idleNanos, unauthenticatedNanos);
        this.gridNanos = Math.max(1, Math.min(MAX_GRID_NANOS, shorter / GRID_DIVISOR));
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        lastActivity = System.nanoTime();
        schedule(ctx, Math.min(unauthenticatedNanos, idleNanos / 2));
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ZmtpEvent event)) {
            ctx.fireChannelRead(msg);
            return;
        }
        lastActivity = System.nanoTime();
        pinged = false;
        boolean keep = true;
        if (event instanceof ZmtpEvent.Handshaken handshaken) {
            connection.handshaken(handshaken.socketType());
        } else if (event instanceof ZmtpEvent.Message message) {
            keep = transport.message(connection, message.parts());
        } else if (event instanceof ZmtpEvent.Subscribe subscribe) {
            keep = transport.subscribe(connection, subscribe.topic());
        } else if (event instanceof ZmtpEvent.Cancel cancel) {
            transport.cancel(connection, cancel.topic());
        } else if (event instanceof ZmtpEvent.Refused refused) {
            connection.refused(protocol() + ": " + refused.reason(), refused.detail());
            return; // the ZMTP handler closes it
        }
        // Ping and Pong: activity, nothing more (the ZMTP handler has answered a PING).
        if (!keep && ctx.channel().isActive()) {
            ctx.close();
        }
    }

    private void schedule(ChannelHandlerContext ctx, long delayNanos) {
        long now = System.nanoTime();
        timer = ctx.executor()
                .schedule(() -> check(ctx), onGrid(now, delayNanos, gridNanos) - now, TimeUnit.NANOSECONDS);
    }

    /** The first multiple of {@code grid} at least {@code delay} (and 1 ns) after {@code now} ({@code nanoTime}). */
    static long onGrid(long now, long delay, long grid) {
        return Math.floorDiv(now + Math.max(delay, 1) + grid - 1, grid) * grid;
    }

    private void check(ChannelHandlerContext ctx) {
        if (!ctx.channel().isActive()) {
            return;
        }
        boolean authenticated = connection.isAuthenticated();
        long timeout = authenticated ? idleNanos : unauthenticatedNanos;
        long quiet = System.nanoTime() - lastActivity;
        if (quiet >= timeout) {
            LOG.debug(
                    "Connection {} ({}): closed: no whole ZMTP event for the {} timeout",
                    connection,
                    connection.port(),
                    authenticated ? "idle" : "unauthenticated");
            ctx.close();
            return;
        }
        long pingAt = idleNanos / 2;
        if (authenticated && !pinged && quiet >= pingAt && connection.peerType() != null) {
            pinged = true;
            ctx.writeAndFlush(ZmtpEncoder.ping(ctx.alloc(), 0, new byte[0]));
        }
        // Wake up by the ping point as well, whatever the state now: a bind can come at any moment.
        long next = timeout - quiet;
        if (!pinged && quiet < pingAt) {
            next = Math.min(next, pingAt - quiet);
        }
        schedule(ctx, next);
    }
}

package io.brine.transport.zmtp;

import io.brine.protocol.codec.MalformedException;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the transport's end of a connection does the same for ZMTP ({@link ZmtpServerHandler}) and Salt TCP
 * ({@link SaltTcpHandler}): reading follows the outbound queue and the inbound bytes in flight, the timer goes with
 * the connection, and this is the one place that logs a failure and closes. Each subclass times the connection its
 * own way, with the same two timeouts.
 */
abstract class ConnectionEnd extends ChannelInboundHandlerAdapter {

    static final Logger LOG = LoggerFactory.getLogger(ZmtpServerTransport.class);

    final ZmtpServerTransport transport;
    final ZmtpConnection connection;
    final long unauthenticatedNanos;
    final long idleNanos;
    /** The connection's timeout check, cancelled when it closes; set by the subclass. */
    ScheduledFuture<?> timer;
    /** Appended to the port in log lines: empty for ZMTP, {@code ", Salt TCP"} for Salt TCP. */
    private final String kind;

    ConnectionEnd(ZmtpServerTransport transport, ZmtpConnection connection, ZmtpServerOptions options, String kind) {
        this.transport = transport;
        this.connection = connection;
        this.unauthenticatedNanos = options.unauthenticatedTimeout().toNanos();
        this.idleNanos = options.idleTimeout().toNanos();
        this.kind = kind;
    }

    /** What this connection speaks, for a refusal's reason: "ZeroMQ request port", "Salt TCP publish port". */
    final String protocol() {
        return (kind.isEmpty() ? "ZeroMQ " : "Salt TCP ")
                + connection.port().name().toLowerCase(Locale.ROOT) + " port";
    }

    @Override
    public final void channelWritabilityChanged(ChannelHandlerContext ctx) {
        transport.updateAutoRead(connection); // writable and not over its inbound bytes in flight
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public final void channelInactive(ChannelHandlerContext ctx) {
        if (timer != null) {
            timer.cancel(false);
        }
        transport.disconnected(connection);
        ctx.fireChannelInactive();
    }

    @Override
    public final void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (cause instanceof DecoderException && root instanceof MalformedException malformed) {
            // Bytes the peer sent that are not the protocol, or a frame over its limit (Salt TCP's decoder).
            connection.refused(protocol() + ": " + malformed.getMessage(), null);
        } else if (root instanceof IOException || cause instanceof DecoderException) {
            LOG.debug("Connection {} ({}{}): closed: {}", connection, connection.port(), kind, root.toString());
        } else {
            LOG.error(
                    "Connection {} ({}{}): closed after an unexpected failure",
                    connection,
                    connection.port(),
                    kind,
                    cause);
        }
        ctx.close();
    }
}

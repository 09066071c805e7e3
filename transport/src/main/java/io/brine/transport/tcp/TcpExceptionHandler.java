package io.brine.transport.tcp;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pipeline's last handler: whatever went wrong on a connection ends here, is logged once at the right level,
 * and closes the connection. Network and TLS trouble is expected (DEBUG); anything else is a bug (ERROR).
 */
@ChannelHandler.Sharable
final class TcpExceptionHandler extends ChannelInboundHandlerAdapter {

    private static final Logger LOG = LoggerFactory.getLogger(TcpServerTransport.class);

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (cause instanceof NotSslRecordException) {
            // Its message quotes the bytes received: say what it means instead.
            LOG.debug(
                    "Connection {}: closed: not TLS (a client without tls configured?)",
                    ctx.channel().remoteAddress());
        } else if (root instanceof IOException || cause instanceof DecoderException) {
            LOG.debug("Connection {}: closed: {}", ctx.channel().remoteAddress(), root.toString());
        } else {
            LOG.error(
                    "Connection {}: closed after an unexpected failure",
                    ctx.channel().remoteAddress(),
                    cause);
        }
        ctx.close();
    }
}

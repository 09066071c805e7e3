package io.brine.transport.zmtp;

import io.brine.protocol.salt.SaltMsgpack;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first handler of a connection on a port that serves ZMTP and Salt's TCP transport together (issue 15): it
 * waits for the client's first byte and builds the rest of the pipeline for the wire that byte opens, then leaves,
 * handing on what it has read.
 * <ul>
 *   <li>{@code 0xFF}: a ZMTP greeting's signature. ZMTP clients send their greeting as soon as they connect, so
 *       our greeting, which the ZMTP handler sends on {@code channelActive}, waits for the client's first byte
 *       here; the ZMTP handlers are added and told the channel is active.</li>
 *   <li>a msgpack map ({@code fixmap}, {@code map16}, {@code map32}): a Salt TCP frame {@code {head, body}}
 *       ({@link SaltTcpDecoder}, {@link SaltTcpHandler}).</li>
 *   <li>anything else: closed.</li>
 * </ul>
 * A peer that sends nothing is closed after the unauthenticated timeout, as one that sends half a greeting is.
 */
final class PortUnification extends ByteToMessageDecoder {

    private static final Logger LOG = LoggerFactory.getLogger(ZmtpServerTransport.class);

    private final ZmtpServerTransport transport;
    private final ZmtpConnection connection;
    private final ZmtpServerOptions options;
    private final SocketType ours;
    private ScheduledFuture<?> timer;

    PortUnification(
            ZmtpServerTransport transport, ZmtpConnection connection, ZmtpServerOptions options, SocketType ours) {
        this.transport = transport;
        this.connection = connection;
        this.options = options;
        this.ours = ours;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        timer = ctx.executor()
                .schedule(
                        () -> {
                            LOG.debug(
                                    "Connection {} ({}): closed: no first byte for the unauthenticated timeout",
                                    connection,
                                    connection.port());
                            ctx.close();
                        },
                        options.unauthenticatedTimeout().toNanos(),
                        TimeUnit.NANOSECONDS);
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        if (timer != null) {
            timer.cancel(false);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        // Held back: the wire's own handlers hear it once they are in place (ZMTP's greeting goes then).
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (!in.isReadable()) {
            return;
        }
        int first = in.getUnsignedByte(in.readerIndex());
        ChannelPipeline pipeline = ctx.pipeline();
        if (first == 0xFF) {
            ZmtpPipeline.addTo(pipeline, ours, connection.limits(options));
            pipeline.addLast(ZmtpServerInitializer.CONNECTION, new ZmtpServerHandler(transport, connection, options));
        } else if (isMap(first)) {
            connection.saltTcp = true;
            SaltTcpDecoder decoder = new SaltTcpDecoder(connection.saltLimits(options));
            pipeline.addLast(SaltTcpDecoder.NAME, decoder);
            pipeline.addLast(
                    ZmtpServerInitializer.CONNECTION, new SaltTcpHandler(transport, connection, decoder, options));
        } else {
            LOG.debug(
                    "Connection {} ({}): closed: first byte 0x{} opens neither ZMTP nor a Salt TCP frame",
                    connection,
                    connection.port(),
                    Integer.toHexString(first));
            in.skipBytes(in.readableBytes());
            ctx.close();
            return;
        }
        ctx.fireChannelActive();
        pipeline.remove(this); // what is buffered goes on to the new handlers
    }

    static boolean isMap(int b) {
        return SaltMsgpack.startsMap(b);
    }
}

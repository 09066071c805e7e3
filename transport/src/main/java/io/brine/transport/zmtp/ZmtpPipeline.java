package io.brine.transport.zmtp;

import io.netty.channel.ChannelPipeline;

/**
 * The ZMTP part of a server connection's pipeline, in order (inbound top to bottom):
 * <pre>
 * zmtpDecoder  ZmtpDecoder            greeting checked as it arrives; frame headers against the limits before buffering
 * zmtp         ZmtpConnectionHandler  our greeting at once; READY exchange; PING answered; ZmtpEvents out
 * </pre>
 * The transport adds its own handlers after these: an {@code IdleStateHandler} first, so that only whole events
 * (a handshake, a message, a subscription, a ping) count as activity and a peer trickling a greeting, a READY or a
 * frame byte by byte is still idle; then its handler for {@link ZmtpEvent}s. Outbound, the transport writes the
 * buffers {@link ZmtpEncoder} makes, and only after {@link ZmtpEvent.Handshaken}.
 */
public final class ZmtpPipeline {

    public static final String DECODER = "zmtpDecoder";
    public static final String CONNECTION = "zmtp";

    private ZmtpPipeline() {}

    /** Adds the ZMTP handlers for a connection to our socket of type {@code ours} (ROUTER, PUB or XPUB). */
    public static void addTo(ChannelPipeline pipeline, SocketType ours, ZmtpLimits limits) {
        pipeline.addLast(DECODER, new ZmtpDecoder(limits));
        pipeline.addLast(CONNECTION, new ZmtpConnectionHandler(ours));
    }
}

package io.brine.transport.zmtp;

import io.netty.channel.ChannelPipeline;
import java.time.Duration;
import java.util.Objects;

/**
 * The ZMTP part of a client connection's pipeline (we connect: a DEALER to a ROUTER, a SUB to a PUB), in order
 * (inbound top to bottom):
 * <pre>
 * zmtpDecoder  ZmtpDecoder        the server's greeting checked as it arrives; frame headers against the limits
 * zmtp         ZmtpClientHandler  our greeting at once, our READY after theirs; PINGs sent and answered; timers
 * </pre>
 * The caller adds its handler for {@link ZmtpEvent}s after these; it sees {@link ZmtpEvent.Handshaken} first (only
 * then may it write), then messages, pings and pongs, or one {@link ZmtpEvent.Refused} before the close. Outbound,
 * it writes buffers from {@link ZmtpEncoder} and, on a subscriber, {@link ZmtpEvent.Subscribe} and
 * {@link ZmtpEvent.Cancel} values, which the handler frames as the server's version expects (a 3.1 command, or 3.0's
 * message {@code 0x01 topic}).
 */
public final class ZmtpClientPipeline {

    public static final String DECODER = ZmtpPipeline.DECODER;
    public static final String CONNECTION = ZmtpPipeline.CONNECTION;

    /**
     * A client socket's timers, as a ZeroMQ socket has them: a handshake not done within {@code handshake} is
     * closed; after the handshake a PING (no TTL, empty context) goes out every {@code heartbeatInterval} (none for
     * {@link Duration#ZERO}, as a brine minion's DEALER), and a server silent for {@code heartbeatTimeout} after one
     * counts as gone (the connection is closed).
     */
    public record Timers(Duration handshake, Duration heartbeatInterval, Duration heartbeatTimeout) {
        public Timers {
            Objects.requireNonNull(handshake, "handshake");
            Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
            Objects.requireNonNull(heartbeatTimeout, "heartbeatTimeout");
            if (handshake.toMillis() < 1
                    || heartbeatInterval.isNegative()
                    || (!heartbeatInterval.isZero() && heartbeatInterval.toMillis() < 1)
                    || heartbeatTimeout.toMillis() < 1) {
                throw new IllegalArgumentException("ZMTP client timers are at least 1 ms: " + this);
            }
        }
    }

    private ZmtpClientPipeline() {}

    /** Adds the ZMTP handlers for a connection from our socket of type {@code ours} (DEALER, REQ or SUB). */
    public static void addTo(ChannelPipeline pipeline, SocketType ours, ZmtpLimits limits, Timers timers) {
        pipeline.addLast(DECODER, new ZmtpDecoder(limits));
        pipeline.addLast(CONNECTION, new ZmtpClientHandler(ours, timers));
    }
}

package io.brine.transport.tcp;

import static io.brine.transport.OptionChecks.requireBackoff;
import static io.brine.transport.OptionChecks.requireFrameLimit;
import static io.brine.transport.OptionChecks.requireMillis;
import static io.brine.transport.OptionChecks.requirePositive;

import io.brine.protocol.codec.FrameLimits;
import java.time.Duration;
import java.util.Objects;

/**
 * Tuning of {@link TcpClientTransport}; validated on construction, immutable. Start from {@link #defaults()}.
 *
 * @param maxFrame largest frame accepted from the master, and sent to it; a bigger announced length drops the
 *     connection before the frame is buffered
 * @param maxQueuedBytes bytes queued towards the master (also while disconnected) before {@code send} refuses
 * @param maxQueuedFrames frames waiting for a connection before {@code send} refuses (ZeroMQ's high-water mark)
 * @param reconnectInterval the first wait before reconnecting; each wait is moved by up to this much either way at
 *     random ({@link io.brine.transport.ReconnectBackoff}, ZeroMQ's rule)
 * @param reconnectIntervalMax the wait doubles after each failed attempt up to this
 * @param connectTimeout a TCP connect not done by then is abandoned and retried
 * @param idleTimeout the master silent this long counts as a lost connection (it answers the minion's heartbeats)
 * @param tlsHandshakeTimeout a TLS handshake not done by then is abandoned and retried
 * @param io NIO, epoll, or epoll where available (for the group the transport makes itself)
 */
public record TcpClientOptions(
        int maxFrame,
        long maxQueuedBytes,
        int maxQueuedFrames,
        Duration reconnectInterval,
        Duration reconnectIntervalMax,
        Duration connectTimeout,
        Duration idleTimeout,
        Duration tlsHandshakeTimeout,
        TcpIo io) {

    public TcpClientOptions {
        requireFrameLimit("maxFrame", maxFrame);
        if (maxQueuedBytes < maxFrame + 4L) {
            throw new IllegalArgumentException("maxQueuedBytes must hold at least one frame: " + maxQueuedBytes);
        }
        requirePositive("maxQueuedFrames", maxQueuedFrames);
        requireBackoff("reconnect", reconnectInterval, reconnectIntervalMax);
        requireMillis("connectTimeout", connectTimeout, 1);
        requireMillis("idleTimeout", idleTimeout, 1);
        requireMillis("tlsHandshakeTimeout", tlsHandshakeTimeout, 1);
        Objects.requireNonNull(io, "io");
    }

    /**
     * 8 MiB frames, 16 MiB and 10,000 frames queued, reconnect 1 s doubling to 5 s (as ZeroMQ's: a master that comes
     * back sees every minion within 6 s), connect and TLS handshake 10 s, idle 120 s, epoll where available.
     */
    public static TcpClientOptions defaults() {
        return new TcpClientOptions(
                FrameLimits.MAX_FRAME,
                16L * 1024 * 1024,
                10_000,
                Duration.ofSeconds(1),
                Duration.ofSeconds(5),
                Duration.ofSeconds(10),
                Duration.ofSeconds(120),
                Duration.ofSeconds(10),
                TcpIo.AUTO);
    }

    public TcpClientOptions withReconnect(Duration interval, Duration intervalMax) {
        return new TcpClientOptions(
                maxFrame,
                maxQueuedBytes,
                maxQueuedFrames,
                interval,
                intervalMax,
                connectTimeout,
                idleTimeout,
                tlsHandshakeTimeout,
                io);
    }

    public TcpClientOptions withQueue(long bytes, int frames) {
        return new TcpClientOptions(
                maxFrame,
                bytes,
                frames,
                reconnectInterval,
                reconnectIntervalMax,
                connectTimeout,
                idleTimeout,
                tlsHandshakeTimeout,
                io);
    }

    public TcpClientOptions withIdleTimeout(Duration value) {
        return new TcpClientOptions(
                maxFrame,
                maxQueuedBytes,
                maxQueuedFrames,
                reconnectInterval,
                reconnectIntervalMax,
                connectTimeout,
                value,
                tlsHandshakeTimeout,
                io);
    }

    public TcpClientOptions withIo(TcpIo value) {
        return new TcpClientOptions(
                maxFrame,
                maxQueuedBytes,
                maxQueuedFrames,
                reconnectInterval,
                reconnectIntervalMax,
                connectTimeout,
                idleTimeout,
                tlsHandshakeTimeout,
                value);
    }
}

package io.brine.transport.tcp;

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
 * @param reconnectInterval the first wait before reconnecting; a random part of up to half of it is taken off
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
        if (maxFrame < 1 || maxFrame > FrameLimits.MAX_FRAME) {
            throw new IllegalArgumentException("maxFrame out of range: " + maxFrame);
        }
        if (maxQueuedBytes < maxFrame + 4L) {
            throw new IllegalArgumentException("maxQueuedBytes must hold at least one frame: " + maxQueuedBytes);
        }
        if (maxQueuedFrames < 1) {
            throw new IllegalArgumentException("maxQueuedFrames must be positive: " + maxQueuedFrames);
        }
        requireMillis("reconnectInterval", reconnectInterval);
        requireMillis("reconnectIntervalMax", reconnectIntervalMax);
        if (reconnectIntervalMax.compareTo(reconnectInterval) < 0) {
            throw new IllegalArgumentException("reconnectIntervalMax below reconnectInterval");
        }
        requireMillis("connectTimeout", connectTimeout);
        requireMillis("idleTimeout", idleTimeout);
        requireMillis("tlsHandshakeTimeout", tlsHandshakeTimeout);
        Objects.requireNonNull(io, "io");
    }

    /**
     * 8 MiB frames, 16 MiB and 10,000 frames queued, reconnect 1 s doubling to 30 s, connect and TLS handshake 10 s,
     * idle 120 s, epoll where available.
     */
    public static TcpClientOptions defaults() {
        return new TcpClientOptions(FrameLimits.MAX_FRAME, 16L * 1024 * 1024, 10_000, Duration.ofSeconds(1),
                Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofSeconds(120), Duration.ofSeconds(10),
                TcpIo.AUTO);
    }

    public TcpClientOptions withReconnect(Duration interval, Duration intervalMax) {
        return new TcpClientOptions(maxFrame, maxQueuedBytes, maxQueuedFrames, interval, intervalMax, connectTimeout,
                idleTimeout, tlsHandshakeTimeout, io);
    }

    public TcpClientOptions withQueue(long bytes, int frames) {
        return new TcpClientOptions(maxFrame, bytes, frames, reconnectInterval, reconnectIntervalMax, connectTimeout,
                idleTimeout, tlsHandshakeTimeout, io);
    }

    public TcpClientOptions withIdleTimeout(Duration value) {
        return new TcpClientOptions(maxFrame, maxQueuedBytes, maxQueuedFrames, reconnectInterval,
                reconnectIntervalMax, connectTimeout, value, tlsHandshakeTimeout, io);
    }

    public TcpClientOptions withIo(TcpIo value) {
        return new TcpClientOptions(maxFrame, maxQueuedBytes, maxQueuedFrames, reconnectInterval,
                reconnectIntervalMax, connectTimeout, idleTimeout, tlsHandshakeTimeout, value);
    }

    private static void requireMillis(String name, Duration value) {
        Objects.requireNonNull(value, name);
        if (value.toMillis() < 1 || value.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(name + " out of range: " + value);
        }
    }
}

package io.brine.transport.zmtp;

import static io.brine.transport.OptionChecks.requireInflight;
import static io.brine.transport.OptionChecks.requirePositive;
import static io.brine.transport.OptionChecks.requireServer;

import io.brine.protocol.codec.FrameLimits;
import io.brine.transport.server.ServerOptions;
import io.brine.transport.tcp.TcpIo;
import java.time.Duration;

/**
 * Tuning of {@link ZmtpServerTransport}; validated on construction, immutable. Start from {@link #defaults()}: the
 * TCP transport's values, with connection counts doubled where a ZeroMQ minion holds two connections.
 *
 * @param maxUnauthenticatedFrame largest message a request connection may send before a minion is bound to it
 * @param maxFrame largest message once a minion is bound to it, and largest frame sent
 * @param maxQueuedBytes bytes queued towards one connection and not yet written to its socket above which the
 *     connection is closed and its publications reported undelivered: a stalled minion costs at most this much
 * @param writeBufferLowWaterMark a connection that stopped being read (above the high mark) is read again below this
 * @param writeBufferHighWaterMark above it the master stops reading that connection until it drains
 * @param unauthenticatedTimeout a connection with no bound minion (request) or honoured subscription (publish)
 *     that delivers no whole ZMTP event (handshake, message, subscription, heartbeat) for this long is closed;
 *     bytes of an unfinished greeting or frame do not count, so a partial frame times out
 * @param idleTimeout the same for a connection with a bound minion or an honoured subscription; at half of it
 *     the master sends a ZMTP PING, which every ZMTP 3.1 peer answers, so a quiet subscriber stays connected
 * @param maxConnections open connections at most, both ports together; further ones are closed at once
 * @param maxUnauthenticatedConnections open connections without a bound minion or honoured subscription at most, a
 *     quarter of them kept for this host and the addresses minions were bound from ({@link #reservedUnauthenticated()})
 * @param maxUnauthenticatedPerSource of those, at most this many from one source address, so one host cannot take
 *     the whole budget
 * @param maxInflightBytes inbound bytes handed to the master and not yet handled, over all request connections,
 *     above which the master stops reading the connections that deliver more until the backlog drains
 *     (back-pressure, not a queue: the kernel's buffers and then the minion's own hold the rest)
 * @param maxInflightPerConnection the same for one connection (one minion's): above it, that connection is not
 *     read until its own messages are handled, so one busy minion cannot take the whole budget
 * @param maxTopicsPerConnection subscriptions one publish connection may hold (a brine minion holds two)
 * @param backlog the listen backlog of each port
 * @param ioThreads event loop threads when the transport makes its own group (0: Netty's default)
 * @param io NIO, epoll, or epoll where available
 */
public record ZmtpServerOptions(
        int maxUnauthenticatedFrame,
        int maxFrame,
        long maxQueuedBytes,
        int writeBufferLowWaterMark,
        int writeBufferHighWaterMark,
        Duration unauthenticatedTimeout,
        Duration idleTimeout,
        int maxConnections,
        int maxUnauthenticatedConnections,
        int maxUnauthenticatedPerSource,
        long maxInflightBytes,
        long maxInflightPerConnection,
        int maxTopicsPerConnection,
        int backlog,
        int ioThreads,
        TcpIo io)
        implements ServerOptions {

    /** Room for a frame's ZMTP framing around the largest message (topic frame, delimiter, headers). */
    private static final long FRAMING = 1024;

    public ZmtpServerOptions {
        requireServer(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                FRAMING,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                backlog,
                ioThreads,
                io);
        requirePositive("maxUnauthenticatedPerSource", maxUnauthenticatedPerSource);
        requireInflight(maxInflightBytes, maxInflightPerConnection);
        requirePositive("maxTopicsPerConnection", maxTopicsPerConnection);
    }

    /**
     * 64 KiB / 8 MiB messages, 32 MiB queued per connection, water marks 256 KiB / 1 MiB, 60 s without a whole
     * event before auth and 120 s after (TCP's), 100,000 connections of which 20,000 unauthenticated (TCP's 50,000
     * and 10,000 minions, at two connections each), at most half of those from one address, 64 MiB in flight
     * inbound of which 16 MiB from one connection (TCP's), 16 topics per subscriber, backlog 1,024, Netty's default threads, epoll where available.
     */
    public static ZmtpServerOptions defaults() {
        return new ZmtpServerOptions(
                FrameLimits.MAX_UNAUTHENTICATED,
                FrameLimits.MAX_FRAME,
                32L * 1024 * 1024,
                256 * 1024,
                1024 * 1024,
                Duration.ofSeconds(60),
                Duration.ofSeconds(120),
                100_000,
                20_000,
                10_000,
                64L * 1024 * 1024,
                16L * 1024 * 1024,
                16,
                1024,
                0,
                TcpIo.AUTO);
    }

    public ZmtpServerOptions withFrameLimits(int unauthenticated, int max) {
        return new ZmtpServerOptions(
                unauthenticated,
                max,
                Math.max(maxQueuedBytes, max + FRAMING),
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                maxTopicsPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public ZmtpServerOptions withMaxQueuedBytes(long value) {
        return new ZmtpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                value,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                maxTopicsPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public ZmtpServerOptions withWriteBufferWaterMark(int low, int high) {
        return new ZmtpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                low,
                high,
                unauthenticatedTimeout,
                idleTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                maxTopicsPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public ZmtpServerOptions withTimeouts(Duration unauthenticated, Duration idle) {
        return new ZmtpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticated,
                idle,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                maxTopicsPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public ZmtpServerOptions withConnectionLimits(int max, int unauthenticated, int unauthenticatedPerSource) {
        return new ZmtpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                max,
                unauthenticated,
                unauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                maxTopicsPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public ZmtpServerOptions withInflightLimits(long total, long perConnection) {
        return new ZmtpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                total,
                perConnection,
                maxTopicsPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public ZmtpServerOptions withIo(TcpIo value, int threads) {
        return new ZmtpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                maxTopicsPerConnection,
                backlog,
                threads,
                value);
    }
}

package io.brine.transport.tcp;

import static io.brine.transport.OptionChecks.requireInflight;
import static io.brine.transport.OptionChecks.requireMillis;
import static io.brine.transport.OptionChecks.requirePositive;
import static io.brine.transport.OptionChecks.requireServer;

import io.brine.protocol.codec.FrameLimits;
import io.brine.transport.server.ServerOptions;
import java.time.Duration;

/**
 * Tuning of {@link TcpServerTransport}; validated on construction, immutable. Start from {@link #defaults()}.
 *
 * @param maxUnauthenticatedFrame largest frame a connection may announce before a minion is bound to it
 * @param maxFrame largest frame a connection may announce once a minion is bound to it, and largest frame sent
 * @param maxQueuedBytes bytes queued towards one connection (not yet written to its socket) above which the
 *     connection is closed and the minion reported undelivered: a stalled minion costs at most this much
 * @param writeBufferLowWaterMark Netty's low water mark: a connection that stopped being read (below) reads again
 * @param writeBufferHighWaterMark Netty's high water mark: above it the master stops reading that connection, so a
 *     minion that sends requests without reading the answers is slowed down
 * @param unauthenticatedTimeout a connection with no bound minion that delivers no complete frame for this long is
 *     closed (half-open connections, slowloris peers, minions waiting on an admin that ask less often)
 * @param idleTimeout a connection with a bound minion that delivers no complete frame for this long is closed
 *     (minions send a heartbeat every 30 s)
 * @param tlsHandshakeTimeout a TLS handshake not done by then closes the connection
 * @param maxConnections open connections at most; further ones are closed at once
 * @param maxUnauthenticatedConnections open connections without a bound minion at most, a quarter of them kept for
 *     this host and the addresses minions were bound from ({@link #reservedUnauthenticated()})
 * @param maxUnauthenticatedPerSource of those, at most this many from one source address, so one host cannot take
 *     the whole budget and minions from other addresses still connect
 * @param maxInflightBytes inbound bytes handed to the master and not yet handled, over all connections, above which
 *     the master stops reading the connections that deliver more until the backlog drains (back-pressure, not a
 *     queue: the kernel's buffers and then the minion's own hold the rest)
 * @param maxInflightPerConnection the same for one connection (one minion's): above it, that connection is not
 *     read until its own frames are handled, so one busy minion cannot take the whole budget
 * @param backlog the listen backlog
 * @param ioThreads event loop threads when the transport makes its own group (0: Netty's default)
 * @param io NIO, epoll, or epoll where available
 */
public record TcpServerOptions(
        int maxUnauthenticatedFrame,
        int maxFrame,
        long maxQueuedBytes,
        int writeBufferLowWaterMark,
        int writeBufferHighWaterMark,
        Duration unauthenticatedTimeout,
        Duration idleTimeout,
        Duration tlsHandshakeTimeout,
        int maxConnections,
        int maxUnauthenticatedConnections,
        int maxUnauthenticatedPerSource,
        long maxInflightBytes,
        long maxInflightPerConnection,
        int backlog,
        int ioThreads,
        TcpIo io)
        implements ServerOptions {

    public TcpServerOptions {
        requireServer(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                TcpFrameDecoder.PREFIX,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                backlog,
                ioThreads,
                io);
        requireMillis("tlsHandshakeTimeout", tlsHandshakeTimeout, 1);
        requirePositive("maxUnauthenticatedPerSource", maxUnauthenticatedPerSource);
        requireInflight(maxInflightBytes, maxInflightPerConnection);
    }

    /**
     * 64 KiB / 8 MiB frames, 32 MiB queued per connection, water marks 256 KiB / 1 MiB, 60 s without a frame
     * before auth and 120 s after, TLS handshake 10 s, 50,000 connections of which 10,000 unauthenticated
     * and 5,000 of those from one source address, 64 MiB in flight inbound of which 16 MiB from one connection,
     * backlog 1,024, Netty's default threads, epoll where available.
     */
    public static TcpServerOptions defaults() {
        return new TcpServerOptions(
                FrameLimits.MAX_UNAUTHENTICATED,
                FrameLimits.MAX_FRAME,
                32L * 1024 * 1024,
                256 * 1024,
                1024 * 1024,
                Duration.ofSeconds(60),
                Duration.ofSeconds(120),
                Duration.ofSeconds(10),
                50_000,
                10_000,
                5_000,
                64L * 1024 * 1024,
                16L * 1024 * 1024,
                1024,
                0,
                TcpIo.AUTO);
    }

    public TcpServerOptions withFrameLimits(int unauthenticated, int max) {
        return new TcpServerOptions(
                unauthenticated,
                max,
                Math.max(maxQueuedBytes, max + 4L),
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                tlsHandshakeTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public TcpServerOptions withMaxQueuedBytes(long value) {
        return new TcpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                value,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                tlsHandshakeTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public TcpServerOptions withWriteBufferWaterMark(int low, int high) {
        return new TcpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                low,
                high,
                unauthenticatedTimeout,
                idleTimeout,
                tlsHandshakeTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public TcpServerOptions withTimeouts(Duration unauthenticated, Duration idle, Duration tlsHandshake) {
        return new TcpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticated,
                idle,
                tlsHandshake,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public TcpServerOptions withConnectionLimits(int max, int unauthenticated) {
        return new TcpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                tlsHandshakeTimeout,
                max,
                unauthenticated,
                maxUnauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public TcpServerOptions withConnectionLimits(int max, int unauthenticated, int unauthenticatedPerSource) {
        return new TcpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                tlsHandshakeTimeout,
                max,
                unauthenticated,
                unauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                backlog,
                ioThreads,
                io);
    }

    public TcpServerOptions withInflightLimits(long total, long perConnection) {
        return new TcpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                tlsHandshakeTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                total,
                perConnection,
                backlog,
                ioThreads,
                io);
    }

    public TcpServerOptions withIo(TcpIo value, int threads) {
        return new TcpServerOptions(
                maxUnauthenticatedFrame,
                maxFrame,
                maxQueuedBytes,
                writeBufferLowWaterMark,
                writeBufferHighWaterMark,
                unauthenticatedTimeout,
                idleTimeout,
                tlsHandshakeTimeout,
                maxConnections,
                maxUnauthenticatedConnections,
                maxUnauthenticatedPerSource,
                maxInflightBytes,
                maxInflightPerConnection,
                backlog,
                threads,
                value);
    }
}

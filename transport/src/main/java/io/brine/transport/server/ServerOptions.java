package io.brine.transport.server;

import io.brine.transport.tcp.TcpIo;
import java.time.Duration;

/**
 * What the master's transports on Netty share of their options records ({@code TcpServerOptions},
 * {@code ZmtpServerOptions}): frame limits, the outbound queue bound, water marks, timeouts, connection caps, inbound
 * bytes in flight and the event loops. Each record documents its own values.
 */
public interface ServerOptions {

    int maxUnauthenticatedFrame();

    int maxFrame();

    long maxQueuedBytes();

    int writeBufferLowWaterMark();

    int writeBufferHighWaterMark();

    Duration unauthenticatedTimeout();

    Duration idleTimeout();

    int maxConnections();

    int maxUnauthenticatedConnections();

    /** Unauthenticated connections from one source address at most; unbounded where a transport has no such cap. */
    default int maxUnauthenticatedPerSource() {
        return Integer.MAX_VALUE;
    }

    /**
     * Of {@link #maxUnauthenticatedConnections()}, how many are kept for connections from this host (the local CLI)
     * and from addresses minions bound from, so that other sources together hold at most the rest: a quarter.
     */
    default int reservedUnauthenticated() {
        return maxUnauthenticatedConnections() / 4;
    }

    /** Inbound bytes handed to the master and not yet handled, over all connections, above which reading pauses. */
    long maxInflightBytes();

    /** The same for one connection. */
    long maxInflightPerConnection();

    int backlog();

    int ioThreads();

    TcpIo io();
}

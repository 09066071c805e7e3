package io.brine.transport.zmq;

import io.brine.transport.Endpoints;
import org.zeromq.ZMQ;

/**
 * Socket set-up that every brine ZeroMQ socket shares: the endpoint (IPv6 switched on for an IPv6 literal) and the
 * options of a minion's sockets, which the swarm benchmark's simulated minions use too.
 */
public final class ZmqSockets {

    private ZmqSockets() {
    }

    /** {@code tcp://host:port} for {@code socket}, switching the socket to IPv6 for an IPv6 literal. */
    public static String endpoint(ZMQ.Socket socket, String host, int port) {
        if (Endpoints.isIpv6(host)) {
            socket.setIPv6(true);
        }
        return Endpoints.tcp(host, port);
    }

    /**
     * A minion's socket to the master (DEALER or SUB): linger, frame limit, ZMTP heartbeats without TTL, handshake
     * and reconnect timers as {@code options} say. High-water marks are the caller's (they differ per socket).
     */
    public static void configureClient(ZMQ.Socket socket, ZmqClientOptions options) {
        configureCommon(socket, options.linger().toMillis(), options.handshakeTimeout().toMillis());
        socket.setMaxMsgSize(options.maxFrameSize());
        socket.setHeartbeatIvl((int) options.heartbeatInterval().toMillis());
        socket.setHeartbeatTimeout((int) options.heartbeatTimeout().toMillis());
        // No TTL in our pings: the master detects a dead minion with its own heartbeats, and a TTL would make
        // jeromq on the master arm (and leave behind) a timer per ping per connection. With 5,000 minions that
        // timer churn cost the idle master about a fifth of a core (brine-bench, BENCHMARKS.md).
        socket.setHeartbeatTtl(0);
        socket.setReconnectIVL((int) options.reconnectInterval().toMillis());
        socket.setReconnectIVLMax((int) options.reconnectIntervalMax().toMillis());
    }

    private static void configureCommon(ZMQ.Socket socket, long lingerMillis, long handshakeMillis) {
        socket.setLinger((int) lingerMillis);
        socket.setHandshakeIvl((int) handshakeMillis);
    }
}

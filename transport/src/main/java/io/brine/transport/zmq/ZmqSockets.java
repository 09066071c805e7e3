package io.brine.transport.zmq;

import io.brine.transport.Endpoints;
import java.time.Duration;
import org.zeromq.ZMQ;

/**
 * Socket set-up that every brine ZeroMQ socket shares: the endpoint (IPv6 switched on for an IPv6 literal) and the
 * options of a minion's sockets, which the swarm benchmark's simulated minions use too.
 */
public final class ZmqSockets {

    private ZmqSockets() {}

    /** {@code tcp://host:port} for {@code socket}, switching the socket to IPv6 for an IPv6 literal. */
    public static String endpoint(ZMQ.Socket socket, String host, int port) {
        if (Endpoints.isIpv6(host)) {
            socket.setIPv6(true);
        }
        return Endpoints.tcp(host, port);
    }

    /**
     * A minion's DEALER to the master's request port: {@link #configureClient} with the request heartbeat (none by
     * default: the session heartbeat on this connection is answered end to end, ZMTP.md "Heartbeats, minion side").
     */
    public static void configureRequest(ZMQ.Socket socket, ZmqClientOptions options) {
        configureClient(socket, options, options.requestHeartbeatInterval());
    }

    /** A minion's SUB to the master's publish port: {@link #configureClient} with the publish heartbeat. */
    public static void configurePublish(ZMQ.Socket socket, ZmqClientOptions options) {
        configureClient(socket, options, options.publishHeartbeatInterval());
    }

    /**
     * Linger, frame limit, ZMTP heartbeats every {@code heartbeat} (none for zero) without TTL, handshake and
     * reconnect timers as {@code options} say. High-water marks are the caller's (they differ per socket).
     */
    private static void configureClient(ZMQ.Socket socket, ZmqClientOptions options, Duration heartbeat) {
        configureCommon(
                socket, options.linger().toMillis(), options.handshakeTimeout().toMillis());
        socket.setMaxMsgSize(options.maxFrameSize());
        socket.setHeartbeatIvl((int) heartbeat.toMillis());
        socket.setHeartbeatTimeout((int) options.heartbeatTimeout().toMillis());
        // No TTL in our pings: the master closes a connection on its own idle timeout, and a TTL only tells it to
        // close sooner (a jeromq master armed, and left behind, a timer per ping per connection for it).
        socket.setHeartbeatTtl(0);
        socket.setReconnectIVL((int) options.reconnectInterval().toMillis());
        socket.setReconnectIVLMax((int) options.reconnectIntervalMax().toMillis());
    }

    private static void configureCommon(ZMQ.Socket socket, long lingerMillis, long handshakeMillis) {
        socket.setLinger((int) lingerMillis);
        socket.setHandshakeIvl((int) handshakeMillis);
    }
}

package io.brine.transport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.Set;

/**
 * The master's side of a transport: a request channel that minions send frames on and the master answers, and a
 * publish channel that carries frames to chosen minions. Each socket is owned by one transport thread; all methods
 * here are thread-safe and return without waiting for the network.
 */
public interface ServerTransport extends AutoCloseable {

    /**
     * Binds and starts. Inbound frames are handed to {@code handler} on a transport thread: the handler must only
     * enqueue work, never decrypt, verify or touch the disk there, and must call {@link #handled} for each frame.
     */
    void start(InboundHandler handler) throws IOException;

    /** The addresses actually bound (ports chosen by the system when configured as 0), request channel first. */
    Addresses addresses();

    /** Queues a frame to one peer on the request channel; false when it cannot be delivered (peer gone, queue full). */
    boolean send(Peer peer, byte[] frame);

    /**
     * Queues a frame for each of these minions on the publish channel. Returns the ids it could not queue the frame
     * for (not subscribed, not connected, or its queue is full): a publication never vanishes silently. A transport
     * that finds out only later, on its own thread, reports those ids to the {@link UndeliveredListener} it was
     * constructed with. The transport keeps a reference to {@code frame}: do not modify it after the call.
     */
    Set<String> publish(Collection<String> minionIds, byte[] frame);

    /**
     * The publish port an auth reply to {@code peer} names: the publish channel's port, or 0 when publications come
     * down {@code peer}'s own connection (TCP, PROTOCOL.md 2.2).
     */
    default int publishPort(Peer peer) {
        return addresses().publish().getPort();
    }

    /**
     * Tells the transport that {@code minionId} authenticated on {@code peer}, so publications can reach it. The
     * master calls it before it sends the ACCEPTED reply, and again whenever a session frame arrives from a new peer.
     */
    void bind(String minionId, Peer peer);

    /**
     * Tells the transport that a publisher authenticated on {@code peer}: lifts its connection to the authenticated
     * frame limit and idle timeout, as {@link #bind} does, without routing publications to it. The master calls it
     * before it sends the ACCEPTED reply. Ignored when the connection has closed meanwhile.
     */
    void authenticated(Peer peer);

    /**
     * The master is done with a frame of {@code bytes} bytes that came from {@code peer}: answered, stored, or
     * dropped. Called exactly once per frame handed to {@link InboundHandler#onFrame}. A transport that bounds the
     * inbound bytes in flight counts each frame until then, and stops reading from connections over its bound.
     */
    default void handled(Peer peer, int bytes) {}

    /**
     * {@code peer} sent a frame the master could not decode: close its connection, where the transport has one per
     * peer, so that a malformed frame costs its sender the connection (and its place in the connection caps).
     */
    default void disconnect(Peer peer) {}

    /**
     * {@code peer}, a stock Salt minion's TCP publish connection, sent a hello sealed with an {@code aes} key the
     * master does not hold (the one before a restart): keep the connection open, unbound, as Salt's master does, and
     * send it the envelopes of Salt minions that have no proven connection, so that the minion, failing their MAC,
     * signs in again (SALT.md 6). Closing it would make Salt 3006/3007 drop the master a second time.
     */
    default void keepUnproven(Peer peer) {
        disconnect(peer);
    }

    /** The minion was removed: drop its route, close its connection where there is one. */
    void unbind(String minionId);

    /**
     * Minion ids that {@link #publish} would queue a frame for now: on a transport with a publish channel of its own
     * (ZeroMQ), only once the minion's subscription there is honoured, which follows its session (a failover, a
     * restart) by a connection and a handshake. A snapshot, for metrics and tests.
     */
    Set<String> reachableMinions();

    @Override
    void close();

    /** Where the master listens; {@code publish} equals {@code request} for single-connection transports. */
    record Addresses(InetSocketAddress request, InetSocketAddress publish) {

        /** {@code bound} as {@link #addresses()} returns it: null means the transport has not started. */
        public static Addresses requireStarted(Addresses bound) {
            if (bound == null) {
                throw new IllegalStateException("transport not started");
            }
            return bound;
        }
    }

    /** Receives frames from the request channel. */
    interface InboundHandler {

        void onFrame(Peer from, byte[] frame);

        /** The connection behind {@code peer} closed (transports that can tell). */
        default void onDisconnect(Peer peer) {}
    }
}

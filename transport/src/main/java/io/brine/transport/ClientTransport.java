package io.brine.transport;

import java.io.IOException;

/**
 * The minion's side of a transport. Reconnects by itself after a network loss or a master restart. Each socket is
 * owned by one transport thread; methods are thread-safe and do not wait for the network.
 */
public interface ClientTransport extends AutoCloseable {

    /** Connects the request channel. Frames arrive on {@code listener} on a transport thread: enqueue work only. */
    void start(Listener listener) throws IOException;

    /** Queues a frame on the request channel; false when it cannot be queued now (not connected, queue full). */
    boolean send(byte[] frame);

    /**
     * Subscribes to publications for {@code minionId} (and broadcasts), from the port the auth reply named (0 when
     * publications come on the request connection). Calling it again replaces the subscription.
     */
    void subscribe(String minionId, int publishPort);

    /**
     * The master left the request channel unanswered (a heartbeat or an auth request, for {@code auth_timeout}): a
     * transport whose connection may be half-open without its noticing drops it and connects afresh, rather than
     * letting the next request go into it. The default does nothing (a transport that watches its connection itself).
     *
     * @return true when a connection that was up is being replaced: {@link Listener#onConnected()} follows once the
     *     new one is up; false when there was none (the transport is connecting already) or nothing is done
     */
    default boolean reconnect() {
        return false;
    }

    @Override
    void close();

    interface Listener {

        /** A frame from the master on the request channel. */
        void onReply(byte[] frame);

        /** A frame from the publish channel. */
        void onPublication(byte[] frame);

        /** The connection to the master was lost (transports that can tell); the transport keeps reconnecting. */
        default void onDisconnected() {}

        /**
         * The connection to the master is up: the first time, and again after each {@link #onDisconnected()}
         * (transports that can tell). A minion sends its first auth request then rather than into the void.
         */
        default void onConnected() {}
    }
}

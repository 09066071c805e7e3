package io.brine.transport.zmq;

import io.brine.protocol.MinionIds;
import io.brine.transport.ClientTransport;
import io.brine.transport.GuardedListener;
import io.brine.transport.Topics;
import io.brine.transport.TransportMailbox;
import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * The minion's side of the ZeroMQ transport: a DEALER connected to the master's request port and, once
 * {@link #subscribe subscribed}, a SUB connected to its publish port with the topics {@code m/<id>/} and
 * {@code b/}. Both sockets, and a monitor on each, are owned by one transport thread ({@code brine-zmq-client});
 * calls from other threads reach it through a {@link TransportMailbox}.
 *
 * <p>The {@link Listener} runs on the transport thread and must only enqueue work. Replies are one frame per
 * message (an empty delimiter in front is tolerated); publications are {@code [topic][frame]}; anything else is
 * dropped with a DEBUG log. Frames above {@link ZmqClientOptions#maxFrameSize()} make ZeroMQ drop the connection.
 *
 * <p>ZeroMQ reconnects by itself (with {@link ZmqClientOptions#reconnectInterval()} doubling up to
 * {@link ZmqClientOptions#reconnectIntervalMax()}, plus random jitter) and resubscribes on reconnection. A silent
 * master is found on the publish connection by its ZMTP heartbeat, and on the request connection by the minion,
 * whose heartbeat goes unanswered: it calls {@link #reconnect()}, which replaces the DEALER by a fresh socket (a new
 * TCP connection), since ZeroMQ would keep a half-open connection (ZMTP.md "Heartbeats, minion side"). After a
 * protocol error (an oversized frame, a failed handshake) ZeroMQ gives a connection up for good; the transport
 * notices that no reconnection follows and opens a fresh socket.
 * {@link Listener#onConnected()} fires whenever a handshake on the request connection completes (the first one
 * too), {@link Listener#onDisconnected()} when that connection is lost after a handshake. {@link #send} queues
 * even while disconnected: ZeroMQ holds frames (up to the request high-water mark) and sends them on connection.
 */
public final class ZmqClientTransport extends ZmqLoop<ZmqClientTransport.Command> implements ClientTransport {

    private static final Logger LOG = LoggerFactory.getLogger(ZmqClientTransport.class);

    /**
     * After a protocol error (an oversized frame, a failed handshake) ZeroMQ drops a connection for good instead
     * of reconnecting. When no reconnection attempt follows a disconnection within this grace, we open a fresh
     * socket; the grace doubles while fresh sockets keep failing, up to the reconnect interval maximum.
     */
    private static final long ABANDONED_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final AtomicInteger MONITOR_SEQUENCE = new AtomicInteger();

    private final String masterHost;
    private final int requestPort;
    private final ZmqClientOptions options;

    // Owned by the transport thread once started (handed over by Thread.start()).
    private Link request;
    private Link publish;
    private String subscribedId;
    private int subscribedPort;
    private Listener listener;
    /** Whether the request connection is up, as ZeroMQ sees it; written by the transport thread. */
    private volatile boolean requestConnected;

    public ZmqClientTransport(String masterHost, int requestPort) {
        this(masterHost, requestPort, ZmqClientOptions.defaults());
    }

    /**
     * @param masterHost the master's name or address ({@code master} in minion.yaml)
     * @param requestPort the master's request port ({@code ret_port})
     */
    public ZmqClientTransport(String masterHost, int requestPort, ZmqClientOptions options) {
        super("brine-zmq-client", options.mailboxCapacity(), options.linger());
        this.masterHost = Objects.requireNonNull(masterHost, "masterHost");
        this.requestPort = requirePort(requestPort);
        this.options = Objects.requireNonNull(options, "options");
    }

    /** Connects (in the background: ZeroMQ keeps trying until the master answers) and starts the thread. */
    @Override
    public void start(Listener listener) throws IOException {
        Objects.requireNonNull(listener, "listener");
        startLoop(
                1,
                ctx -> {
                    this.request = new Link(requestPort, SocketType.DEALER, true, socket -> {
                        socket.setSndHWM(options.requestHighWaterMark());
                        socket.setRcvHWM(options.requestHighWaterMark());
                    });
                    this.listener = new GuardedListener(listener, "ZeroMQ transport");
                },
                "cannot connect to the master at " + masterHost + ":" + requestPort);
    }

    /** Queues {@code frame} for the master (also before start); false when closed or the mailbox is full. */
    @Override
    public boolean send(byte[] frame) {
        Objects.requireNonNull(frame, "frame");
        return !isClosed() && mailbox.offer(new Send(frame));
    }

    /**
     * Subscribes to {@code m/<minionId>/} and {@code b/} on the master's {@code publishPort}. On the same port a
     * new id replaces the old topic on the existing connection; a different port replaces the connection.
     *
     * @throws IllegalArgumentException for an invalid id, or port 0 (this transport always has a publish port)
     */
    @Override
    public void subscribe(String minionId, int publishPort) {
        MinionIds.requireValid(minionId);
        if (publishPort < 1 || publishPort > 65_535) {
            throw new IllegalArgumentException("the ZeroMQ transport needs a publish port, got " + publishPort);
        }
        if (!isClosed() && !mailbox.offer(new Subscribe(minionId, publishPort))) {
            LOG.warn("Minion {}: subscription not queued, the transport's mailbox is full", minionId);
        }
    }

    /**
     * Replaces the request socket by a fresh one, on a new connection, when the connection is up (as ZeroMQ sees it:
     * it may be half-open); frames still queued in the old socket are lost. Not connected, ZeroMQ is trying already.
     */
    @Override
    public boolean reconnect() {
        if (isClosed() || !requestConnected) {
            return false;
        }
        if (!mailbox.offer(new Reconnect())) {
            LOG.warn("ZeroMQ transport: reconnection not queued, the transport's mailbox is full");
            return false;
        }
        return true;
    }

    // ---- transport thread ----

    @Override
    void register(ZMQ.Poller poller) {
        request.register();
    }

    @Override
    boolean round() {
        if (request.readEvents()) {
            request = request.reopen();
        }
        if (publish != null && publish.readEvents()) {
            publish = publish.reopen();
        }
        boolean backlog = mailbox.drain(this::execute, COMMANDS_PER_ROUND);
        backlog |= readReplies();
        return backlog | readPublications();
    }

    @Override
    void closing() {
        request.stopMonitor();
        if (publish != null) {
            publish.stopMonitor();
        }
    }

    /** Until the next abandoned-connection check is due, or the idle bound. */
    @Override
    long pollMillis() {
        long now = System.nanoTime();
        long wait =
                Math.min(request.nanosUntilCheck(now), publish == null ? Long.MAX_VALUE : publish.nanosUntilCheck(now));
        return Math.max(1, Math.min(IDLE_POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(wait) + 1));
    }

    private void execute(Command command) {
        if (command instanceof Send send) {
            if (!request.socket.send(send.frame(), ZMQ.DONTWAIT)) {
                LOG.debug("Request channel: frame dropped, the queue to the master is full");
            }
        } else if (command instanceof Subscribe subscribe) {
            applySubscription(subscribe);
        } else if (command instanceof Reconnect) {
            if (request.connected) {
                LOG.info(
                        "ZeroMQ transport: no answer from {}:{}; connecting again on a new connection",
                        masterHost,
                        requestPort);
                request = request.replace();
            } else {
                LOG.debug(
                        "ZeroMQ transport: not connected to {}:{}; ZeroMQ is connecting already",
                        masterHost,
                        requestPort);
            }
        }
    }

    private void applySubscription(Subscribe subscribe) {
        String id = subscribe.minionId();
        if (publish != null && subscribe.port() == subscribedPort) {
            if (!id.equals(subscribedId)) {
                publish.socket.unsubscribe(Topics.minionBytes(subscribedId));
                publish.socket.subscribe(Topics.minionBytes(id));
                subscribedId = id;
            }
            return;
        }
        if (publish != null) {
            publish.close();
        }
        subscribedId = id;
        subscribedPort = subscribe.port();
        publish = new Link(subscribedPort, SocketType.SUB, false, socket -> {
            socket.setRcvHWM(options.publishHighWaterMark());
            socket.subscribe(Topics.minionBytes(subscribedId));
            socket.subscribe(Topics.broadcastBytes());
        });
        publish.register();
        LOG.debug("Minion {}: subscribed on {}:{}", id, masterHost, subscribedPort);
    }

    private boolean readReplies() {
        for (int i = 0; i < MESSAGES_PER_ROUND; i++) {
            ZmqMessage message = ZmqMessage.receive(request.socket);
            if (message == null) {
                return false;
            }
            byte[] frame = message.reply();
            if (frame != null) {
                listener.onReply(frame);
            } else {
                LOG.debug("Request channel: dropped a message of {} frames from the master", message.parts());
            }
        }
        return true;
    }

    private boolean readPublications() {
        if (publish == null) {
            return false;
        }
        for (int i = 0; i < MESSAGES_PER_ROUND; i++) {
            ZmqMessage message = ZmqMessage.receive(publish.socket);
            if (message == null) {
                return false;
            }
            byte[] frame = message.publication();
            if (frame != null) {
                listener.onPublication(frame);
            } else {
                LOG.debug("Publish channel: dropped a message of {} frames", message.parts());
            }
        }
        return true;
    }

    // ---- helpers ----

    private static int requirePort(int port) {
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        return port;
    }

    /**
     * A connecting socket with its monitor, on the transport thread: tells the listener about the request
     * connection, and notices when ZeroMQ abandons a connection (see {@link #ABANDONED_GRACE_NANOS}).
     */
    private final class Link {

        final ZMQ.Socket socket;
        private final ZMQ.Socket monitor;
        private final int port;
        private final SocketType type;
        private final boolean notifies;
        private final Consumer<ZMQ.Socket> setUp;
        private final String endpoint;
        private boolean connected;
        /** System.nanoTime() by which ZeroMQ should have started reconnecting; 0 when not waiting. */
        private long abandonedCheck;
        /** Sockets opened in a row for this link that never completed a handshake. */
        private int failedReopens;

        private boolean handshaken;

        /** @param setUp options and subscriptions, applied before connecting */
        Link(int port, SocketType type, boolean notifies, Consumer<ZMQ.Socket> setUp) {
            this.port = port;
            this.type = type;
            this.notifies = notifies;
            this.setUp = setUp;
            this.socket = context.createSocket(type);
            if (type == SocketType.SUB) {
                ZmqSockets.configurePublish(socket, options);
            } else {
                ZmqSockets.configureRequest(socket, options);
            }
            setUp.accept(socket);
            String monitorEndpoint = "inproc://brine-zmq-client-monitor-" + MONITOR_SEQUENCE.incrementAndGet();
            socket.monitor(
                    monitorEndpoint,
                    ZMQ.EVENT_HANDSHAKE_PROTOCOL
                            | ZMQ.EVENT_DISCONNECTED
                            | ZMQ.EVENT_CONNECT_RETRIED
                            | ZMQ.EVENT_CONNECTED);
            this.monitor = context.createSocket(SocketType.PAIR);
            monitor.connect(monitorEndpoint);
            this.endpoint = ZmqSockets.endpoint(socket, masterHost, port);
            socket.connect(endpoint);
        }

        void register() {
            poller.register(socket, ZMQ.Poller.POLLIN);
            poller.register(monitor, ZMQ.Poller.POLLIN);
        }

        /** Handles the monitor's events; true when ZeroMQ has abandoned the connection and this must be reopened. */
        boolean readEvents() {
            ZMQ.Event event;
            while ((event = ZMQ.Event.recv(monitor, ZMQ.DONTWAIT)) != null) {
                int kind = event.getEvent();
                if (kind == ZMQ.EVENT_DISCONNECTED) {
                    abandonedCheck = System.nanoTime() + grace();
                    if (connected) {
                        connected = false;
                        LOG.debug("ZeroMQ transport: disconnected from {}", endpoint);
                        if (notifies) {
                            requestConnected = false;
                            listener.onDisconnected();
                        }
                    }
                } else {
                    abandonedCheck = 0;
                    if (kind == ZMQ.EVENT_HANDSHAKE_PROTOCOL && !connected) {
                        connected = true;
                        handshaken = true;
                        LOG.debug("ZeroMQ transport: connected to {}", endpoint);
                        if (notifies) {
                            requestConnected = true;
                            listener.onConnected();
                        }
                    }
                }
            }
            return abandonedCheck != 0 && System.nanoTime() - abandonedCheck >= 0;
        }

        long nanosUntilCheck(long now) {
            return abandonedCheck == 0 ? Long.MAX_VALUE : Math.max(0, abandonedCheck - now);
        }

        private long grace() {
            long max = Math.max(
                    ABANDONED_GRACE_NANOS, options.reconnectIntervalMax().toNanos());
            return Math.min(max, ABANDONED_GRACE_NANOS << Math.min(failedReopens, 20));
        }

        /** A fresh socket in place of this one, asked for by the minion: a connection that was up is lost. */
        Link replace() {
            if (connected && notifies) {
                requestConnected = false;
                listener.onDisconnected();
            }
            close();
            Link fresh = new Link(port, type, notifies, setUp);
            fresh.register();
            return fresh;
        }

        /** A fresh socket in place of this one; frames still queued in this one are lost with it. */
        Link reopen() {
            if (handshaken) {
                LOG.info(
                        "ZeroMQ transport: the connection to {} was dropped for a protocol error; connecting again",
                        endpoint);
            } else {
                LOG.debug("ZeroMQ transport: no handshake with {} (protocol error); connecting again", endpoint);
            }
            close();
            Link fresh = new Link(port, type, notifies, setUp);
            fresh.failedReopens = handshaken ? 0 : failedReopens + 1;
            fresh.register();
            return fresh;
        }

        void stopMonitor() {
            try {
                socket.monitor(null, 0);
            } catch (ZMQException e) {
                LOG.debug("ZeroMQ transport: stopping a monitor failed", e);
            }
        }

        void close() {
            poller.unregister(socket);
            poller.unregister(monitor);
            stopMonitor();
            monitor.close();
            socket.close();
        }
    }

    sealed interface Command permits Send, Subscribe, Reconnect {}

    private record Send(byte[] frame) implements Command {}

    private record Subscribe(String minionId, int port) implements Command {}

    private record Reconnect() implements Command {}
}

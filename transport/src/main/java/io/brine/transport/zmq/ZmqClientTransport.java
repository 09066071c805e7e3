package io.brine.transport.zmq;

import io.brine.protocol.MinionIds;
import io.brine.transport.ClientTransport;
import io.brine.transport.TransportMailbox;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;
import zmq.Msg;
import zmq.ZError;

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
 * {@link ZmqClientOptions#reconnectIntervalMax()}, plus random jitter) and resubscribes on reconnection; ZMTP
 * heartbeats detect a silent master. After a protocol error (an oversized frame, a failed handshake) ZeroMQ gives
 * a connection up for good; the transport notices that no reconnection follows and opens a fresh socket.
 * {@link Listener#onConnected()} fires whenever a handshake on the request connection completes (the first one
 * too), {@link Listener#onDisconnected()} when that connection is lost after a handshake. {@link #send} queues
 * even while disconnected: ZeroMQ holds frames (up to the request high-water mark) and sends them on connection.
 */
public final class ZmqClientTransport implements ClientTransport {

    private static final Logger LOG = LoggerFactory.getLogger(ZmqClientTransport.class);

    private static final byte[] BROADCAST_TOPIC = "b/".getBytes(StandardCharsets.US_ASCII);
    private static final int COMMANDS_PER_ROUND = 256;
    private static final int MESSAGES_PER_ROUND = 1024;
    private static final long IDLE_POLL_MILLIS = 1000;
    /**
     * After a protocol error (an oversized frame, a failed handshake) ZeroMQ drops a connection for good instead
     * of reconnecting. When no reconnection attempt follows a disconnection within this grace, we open a fresh
     * socket; the grace doubles while fresh sockets keep failing, up to the reconnect interval maximum.
     */
    private static final long ABANDONED_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final AtomicInteger MONITOR_SEQUENCE = new AtomicInteger();

    private enum State { NEW, STARTING, RUNNING, CLOSED }

    private final String masterHost;
    private final int requestPort;
    private final ZmqClientOptions options;
    private final TransportMailbox<Command> mailbox;
    private final AtomicReference<State> state = new AtomicReference<>(State.NEW);
    private volatile Thread thread;

    // Owned by the transport thread once started (handed over by Thread.start()).
    private ZContext context;
    private Link request;
    private Link publish;
    private ZMQ.Poller poller;
    private String subscribedId;
    private int subscribedPort;
    private Listener listener;

    public ZmqClientTransport(String masterHost, int requestPort) {
        this(masterHost, requestPort, ZmqClientOptions.defaults());
    }

    /**
     * @param masterHost the master's name or address ({@code master} in minion.yaml)
     * @param requestPort the master's request port ({@code ret_port})
     */
    public ZmqClientTransport(String masterHost, int requestPort, ZmqClientOptions options) {
        this.masterHost = Objects.requireNonNull(masterHost, "masterHost");
        this.requestPort = requirePort(requestPort);
        this.options = Objects.requireNonNull(options, "options");
        this.mailbox = new TransportMailbox<>(options.mailboxCapacity());
    }

    /** Connects (in the background: ZeroMQ keeps trying until the master answers) and starts the thread. */
    @Override
    public void start(Listener listener) throws IOException {
        Objects.requireNonNull(listener, "listener");
        if (!state.compareAndSet(State.NEW, State.STARTING)) {
            throw new IllegalStateException("transport already started or closed");
        }
        ZContext ctx = new ZContext(1);
        ctx.setLinger((int) options.linger().toMillis());
        try {
            this.context = ctx;
            this.request = new Link(requestPort, SocketType.DEALER, true, socket -> {
                socket.setSndHWM(options.requestHighWaterMark());
                socket.setRcvHWM(options.requestHighWaterMark());
            });
        } catch (ZMQException | IllegalArgumentException e) {
            ctx.close();
            state.set(State.NEW);
            throw new IOException("cannot connect to the master at " + masterHost + ":" + requestPort + ": "
                    + e.getMessage(), e);
        }
        this.listener = listener;
        Thread ioThread = new Thread(this::run, "brine-zmq-client");
        ioThread.setDaemon(true);
        this.thread = ioThread;
        if (!state.compareAndSet(State.STARTING, State.RUNNING)) {
            ctx.close();
            mailbox.close();
            throw new IOException("transport closed while starting");
        }
        ioThread.start();
    }

    /** Queues {@code frame} for the master (also before start); false when closed or the mailbox is full. */
    @Override
    public boolean send(byte[] frame) {
        Objects.requireNonNull(frame, "frame");
        return state.get() != State.CLOSED && mailbox.offer(new Send(frame));
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
        if (state.get() != State.CLOSED && !mailbox.offer(new Subscribe(minionId, publishPort))) {
            LOG.warn("Minion {}: subscription not queued, the transport's mailbox is full", minionId);
        }
    }

    /** Stops the transport thread, which closes the sockets (after {@code linger}) and the context. Idempotent. */
    @Override
    public void close() {
        State previous = state.getAndSet(State.CLOSED);
        if (previous == State.CLOSED) {
            return;
        }
        if (previous != State.RUNNING) {
            mailbox.close();
            return;
        }
        mailbox.wakeup();
        Thread ioThread = thread;
        if (ioThread != null && ioThread != Thread.currentThread()) {
            try {
                ioThread.join(options.linger().toMillis() + 10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (ioThread.isAlive()) {
                LOG.warn("ZeroMQ transport: transport thread still running after close");
            }
        }
    }

    // ---- transport thread ----

    private void run() {
        poller = context.createPoller(5);
        poller.register(mailbox.wakeupChannel(), ZMQ.Poller.POLLIN);
        request.register();
        boolean backlog = false;
        try {
            while (state.get() == State.RUNNING) {
                poller.poll(backlog ? 0 : pollMillis());
                if (state.get() != State.RUNNING) {
                    break;
                }
                if (request.readEvents()) {
                    request = request.reopen();
                }
                if (publish != null && publish.readEvents()) {
                    publish = publish.reopen();
                }
                backlog = mailbox.drain(this::execute, COMMANDS_PER_ROUND);
                backlog |= readReplies();
                backlog |= readPublications();
            }
        } catch (ZMQException e) {
            if (e.getErrorCode() != ZError.ETERM) {
                LOG.error("ZeroMQ transport: transport thread stopped", e);
            }
        } catch (RuntimeException | Error e) {
            LOG.error("ZeroMQ transport: transport thread stopped", e);
        } finally {
            state.set(State.CLOSED);
            poller.close();
            request.stopMonitor();
            if (publish != null) {
                publish.stopMonitor();
            }
            context.close();
            mailbox.close();
        }
    }

    /** Until the next abandoned-connection check is due, or the idle bound. */
    private long pollMillis() {
        long now = System.nanoTime();
        long wait = Math.min(request.nanosUntilCheck(now), publish == null ? Long.MAX_VALUE : publish.nanosUntilCheck(now));
        return Math.max(1, Math.min(IDLE_POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(wait) + 1));
    }

    private void execute(Command command) {
        if (command instanceof Send send) {
            if (!request.socket.send(send.frame(), ZMQ.DONTWAIT)) {
                LOG.debug("Request channel: frame dropped, the queue to the master is full");
            }
        } else if (command instanceof Subscribe subscribe) {
            applySubscription(subscribe);
        }
    }

    private void applySubscription(Subscribe subscribe) {
        String id = subscribe.minionId();
        if (publish != null && subscribe.port() == subscribedPort) {
            if (!id.equals(subscribedId)) {
                publish.socket.unsubscribe(topicOf(subscribedId));
                publish.socket.subscribe(topicOf(id));
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
            socket.subscribe(topicOf(subscribedId));
            socket.subscribe(BROADCAST_TOPIC);
        });
        publish.register();
        LOG.debug("Minion {}: subscribed on {}:{}", id, masterHost, subscribedPort);
    }

    private void tellListener(boolean up) {
        try {
            if (up) {
                listener.onConnected();
            } else {
                listener.onDisconnected();
            }
        } catch (RuntimeException e) {
            LOG.error("Request channel: the listener failed", e);
        }
    }

    private boolean readReplies() {
        for (int i = 0; i < MESSAGES_PER_ROUND; i++) {
            Msg first = request.socket.base().recv(ZMQ.DONTWAIT);
            if (first == null) {
                return false;
            }
            Msg second = null;
            int parts = 1;
            Msg last = first;
            while (last != null && last.hasMore()) {
                last = request.socket.base().recv(ZMQ.DONTWAIT);
                parts++;
                if (parts == 2) {
                    second = last;
                }
            }
            if (parts == 1) {
                deliverReply(first.data());
            } else if (parts == 2 && first.size() == 0 && second != null) {
                deliverReply(second.data());
            } else {
                LOG.debug("Request channel: dropped a message of {} frames from the master", parts);
            }
        }
        return true;
    }

    private boolean readPublications() {
        if (publish == null) {
            return false;
        }
        ZMQ.Socket sub = publish.socket;
        for (int i = 0; i < MESSAGES_PER_ROUND; i++) {
            Msg topic = sub.base().recv(ZMQ.DONTWAIT);
            if (topic == null) {
                return false;
            }
            Msg frame = null;
            int parts = 1;
            Msg last = topic;
            while (last != null && last.hasMore()) {
                last = sub.base().recv(ZMQ.DONTWAIT);
                parts++;
                if (parts == 2) {
                    frame = last;
                }
            }
            if (parts == 2 && frame != null) {
                try {
                    listener.onPublication(frame.data());
                } catch (RuntimeException e) {
                    LOG.error("Publish channel: the listener failed", e);
                }
            } else {
                LOG.debug("Publish channel: dropped a message of {} frames", parts);
            }
        }
        return true;
    }

    private void deliverReply(byte[] frame) {
        try {
            listener.onReply(frame);
        } catch (RuntimeException e) {
            LOG.error("Request channel: the listener failed", e);
        }
    }

    // ---- helpers ----

    private void configure(ZMQ.Socket socket) {
        socket.setLinger((int) options.linger().toMillis());
        socket.setMaxMsgSize(options.maxFrameSize());
        int interval = (int) options.heartbeatInterval().toMillis();
        int timeout = (int) options.heartbeatTimeout().toMillis();
        socket.setHeartbeatIvl(interval);
        socket.setHeartbeatTimeout(timeout);
        // No TTL in our pings: the master detects a dead minion with its own heartbeats, and a TTL would make
        // jeromq on the master arm (and leave behind) a timer per ping per connection. With 5,000 minions that
        // timer churn cost the idle master about a fifth of a core (brine-bench, BENCHMARKS.md).
        socket.setHeartbeatTtl(0);
        socket.setHandshakeIvl((int) options.handshakeTimeout().toMillis());
        socket.setReconnectIVL((int) options.reconnectInterval().toMillis());
        socket.setReconnectIVLMax((int) options.reconnectIntervalMax().toMillis());
    }

    private String endpoint(ZMQ.Socket socket, int port) {
        String host = masterHost;
        if (host.indexOf(':') >= 0) {
            socket.setIPv6(true);
            host = host.startsWith("[") ? host : "[" + host + "]";
        }
        return "tcp://" + host + ":" + port;
    }

    static byte[] topicOf(String minionId) {
        return ("m/" + minionId + "/").getBytes(StandardCharsets.US_ASCII);
    }

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
            configure(socket);
            setUp.accept(socket);
            String monitorEndpoint = "inproc://brine-zmq-client-monitor-" + MONITOR_SEQUENCE.incrementAndGet();
            socket.monitor(monitorEndpoint, ZMQ.EVENT_HANDSHAKE_PROTOCOL | ZMQ.EVENT_DISCONNECTED
                    | ZMQ.EVENT_CONNECT_RETRIED | ZMQ.EVENT_CONNECTED);
            this.monitor = context.createSocket(SocketType.PAIR);
            monitor.connect(monitorEndpoint);
            this.endpoint = endpoint(socket, port);
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
                            tellListener(false);
                        }
                    }
                } else {
                    abandonedCheck = 0;
                    if (kind == ZMQ.EVENT_HANDSHAKE_PROTOCOL && !connected) {
                        connected = true;
                        handshaken = true;
                        LOG.debug("ZeroMQ transport: connected to {}", endpoint);
                        if (notifies) {
                            tellListener(true);
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
            long max = Math.max(ABANDONED_GRACE_NANOS, options.reconnectIntervalMax().toNanos());
            return Math.min(max, ABANDONED_GRACE_NANOS << Math.min(failedReopens, 20));
        }

        /** A fresh socket in place of this one; frames still queued in this one are lost with it. */
        Link reopen() {
            if (handshaken) {
                LOG.info("ZeroMQ transport: the connection to {} was dropped for a protocol error; connecting again",
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

    private sealed interface Command permits Send, Subscribe {
    }

    private record Send(byte[] frame) implements Command {
    }

    private record Subscribe(String minionId, int port) implements Command {
    }
}

package io.brine.transport.zmq;

import io.brine.protocol.MinionIds;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.TransportMailbox;
import io.brine.transport.UndeliveredListener;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;
import zmq.Msg;
import zmq.ZError;
import zmq.io.Metadata;

/**
 * The master's side of the ZeroMQ transport: a ROUTER bound on the request port and an XPUB bound on the publish
 * port, both owned by one transport thread ({@code brine-zmq-server}) that polls them next to a
 * {@link TransportMailbox} through which every other thread's calls arrive.
 *
 * <p><b>Request channel.</b> One brine frame per ZeroMQ message; ROUTER adds the peer's routing identity in
 * front. An empty delimiter after the identity (a REQ peer) is accepted and echoed on replies; any other frame
 * count is dropped with a DEBUG log. Frames above {@link ZmqServerOptions#maxFrameSize()} never reach the heap:
 * ZeroMQ disconnects the sender ({@code ZMQ_MAXMSGSIZE}); that limit is per frame, and ZeroMQ hands a multipart
 * message over only whole, so a peer sending endless extra frames is buffered by ZeroMQ before it can be dropped
 * here (a known gap of ZeroMQ without CURVE). The {@link InboundHandler} runs on the transport thread
 * and must only enqueue work. {@link Peer#remoteAddress()} is the IP from ZeroMQ's {@code Peer-Address} message
 * property. {@link InboundHandler#onDisconnect} is never called: a ROUTER does not say which identity went away.
 *
 * <p><b>Publish channel.</b> Each publication is the two-frame message {@code [m/<id>/][frame]}, one per minion,
 * so a SUB's prefix match can only select its own ({@code m/web1/} is not a prefix of {@code m/web10/}). The XPUB
 * runs with {@code ZMQ_XPUB_NODROP}, so a full subscriber queue refuses the send instead of dropping it silently,
 * and with {@code ZMQ_XPUB_VERBOSE}, so the transport sees every subscription and keeps the set of minions
 * subscribed now. {@link #publish} answers in two steps:
 * <ol>
 *   <li>it returns at once the ids that are not subscribed (or that it could not queue: closed, mailbox full);
 *   <li>the transport thread sends to the others; ids whose send is refused there (that minion's queue is at
 *       {@link ZmqServerOptions#publishHighWaterMark()}, or it unsubscribed meanwhile) go to the
 *       {@link UndeliveredListener}, called on the transport thread.
 * </ol>
 * What is queued for a connection that drops afterwards is lost with it, as with any socket; the master notices
 * the missing returns. Nothing is sent on the broadcast topic {@code b/} the minions also subscribe to: with NODROP
 * one stalled subscriber would hold a broadcast up for all, and per-minion sends are what can be accounted for.
 *
 * <p>Routing is by topic; {@link #unbind} forgets the minion's subscription until it subscribes again or is
 * {@link #bind bound} again (authenticated anew over the same live subscription).
 */
public final class ZmqServerTransport implements ServerTransport {

    private static final Logger LOG = LoggerFactory.getLogger(ZmqServerTransport.class);

    static final String BROADCAST_TOPIC = "b/";
    private static final byte[] EMPTY = new byte[0];
    /** A subscription message is one command byte and a topic; ours are at most "m/" + 253 + "/". */
    private static final int MAX_SUBSCRIPTION_SIZE = 1024;
    private static final int COMMANDS_PER_ROUND = 256;
    private static final int MESSAGES_PER_ROUND = 1024;
    /** The mailbox wakes the thread; this only bounds the wait should a wake-up ever be missed. */
    private static final long IDLE_POLL_MILLIS = 1000;

    private enum State { NEW, STARTING, RUNNING, CLOSED }

    private final String bindHost;
    private final int requestPort;
    private final int publishPort;
    private final ZmqServerOptions options;
    private final UndeliveredListener undeliveredListener;
    private final TransportMailbox<Command> mailbox;
    /** Minion ids with a live {@code m/<id>/} subscription, less the unbound. Written by the transport thread only. */
    private final Set<String> subscribed = ConcurrentHashMap.newKeySet();
    /** Minion ids whose subscription the XPUB holds, unbound or not. Transport thread only. */
    private final Set<String> live = new HashSet<>();
    /** Minion ids unbound and not bound or subscribed since. Transport thread only. */
    private final Set<String> unbound = new HashSet<>();
    private final AtomicReference<State> state = new AtomicReference<>(State.NEW);
    private volatile Addresses addresses;
    private volatile Thread thread;

    // Owned by the transport thread once started (handed over by Thread.start()).
    private ZContext context;
    private ZMQ.Socket router;
    private ZMQ.Socket xpub;
    private Runnable xpubUnmatch;
    private InboundHandler handler;

    /** With default options; publications refused on the transport thread are logged at WARN. */
    public ZmqServerTransport(String bindHost, int requestPort, int publishPort) {
        this(bindHost, requestPort, publishPort, ZmqServerOptions.defaults(), null);
    }

    /**
     * @param bindHost the interface to bind ({@code 0.0.0.0}, {@code *}, an IPv4 or IPv6 address)
     * @param requestPort the request channel's port ({@code ret_port}); 0 for any free port
     * @param publishPort the publish channel's port ({@code publish_port}); 0 for any free port
     * @param undeliveredListener told about publications refused on the transport thread; null to log them
     */
    public ZmqServerTransport(String bindHost, int requestPort, int publishPort, ZmqServerOptions options,
            UndeliveredListener undeliveredListener) {
        this.bindHost = Objects.requireNonNull(bindHost, "bindHost");
        this.requestPort = requirePort(requestPort);
        this.publishPort = requirePort(publishPort);
        this.options = Objects.requireNonNull(options, "options");
        this.undeliveredListener = undeliveredListener != null ? undeliveredListener : ZmqServerTransport::logUndelivered;
        this.mailbox = new TransportMailbox<>(options.mailboxCapacity());
    }

    @Override
    public void start(InboundHandler handler) throws IOException {
        Objects.requireNonNull(handler, "handler");
        if (!state.compareAndSet(State.NEW, State.STARTING)) {
            throw new IllegalStateException("transport already started or closed");
        }
        ZContext ctx = new ZContext(options.ioThreads());
        ctx.setLinger((int) options.linger().toMillis());
        ZMQ.Socket requestSocket;
        ZMQ.Socket publishSocket;
        Addresses bound;
        try {
            requestSocket = ctx.createSocket(SocketType.ROUTER);
            configureCommon(requestSocket);
            requestSocket.setRouterMandatory(true);
            requestSocket.setSndHWM(options.requestHighWaterMark());
            requestSocket.setRcvHWM(options.requestHighWaterMark());
            requestSocket.setMaxMsgSize(options.maxFrameSize());
            bind(requestSocket, requestPort);

            publishSocket = ctx.createSocket(SocketType.XPUB);
            configureCommon(publishSocket);
            publishSocket.setXpubNoDrop(true);
            publishSocket.setXpubVerbose(true);
            publishSocket.setSndHWM(options.publishHighWaterMark());
            publishSocket.setMaxMsgSize(MAX_SUBSCRIPTION_SIZE);
            bind(publishSocket, publishPort);

            bound = new Addresses(socketAddress(requestSocket.getLastEndpoint()),
                    socketAddress(publishSocket.getLastEndpoint()));
        } catch (ZMQException | IllegalArgumentException e) {
            ctx.close();
            state.set(State.NEW);
            throw new IOException("cannot bind the ZeroMQ transport on " + bindHost + " ports " + requestPort + "/"
                    + publishPort + ": " + e.getMessage(), e);
        }
        this.context = ctx;
        this.router = requestSocket;
        this.xpub = publishSocket;
        this.xpubUnmatch = XpubUnmatch.forSocket(publishSocket);
        this.handler = handler;
        this.addresses = bound;
        Thread ioThread = new Thread(this::run, "brine-zmq-server");
        ioThread.setDaemon(true);
        this.thread = ioThread;
        if (!state.compareAndSet(State.STARTING, State.RUNNING)) {
            ctx.close();
            mailbox.close();
            throw new IOException("transport closed while starting");
        }
        ioThread.start();
        LOG.info("ZeroMQ transport: request channel on {}, publish channel on {}", bound.request(), bound.publish());
    }

    @Override
    public Addresses addresses() {
        Addresses bound = addresses;
        if (bound == null) {
            throw new IllegalStateException("transport not started");
        }
        return bound;
    }

    /**
     * Queues {@code frame} for {@code peer}. True means queued for the transport thread; a peer that has gone by
     * then (or whose queue is full) is logged at DEBUG there, and the minion's own retry covers it.
     */
    @Override
    public boolean send(Peer peer, byte[] frame) {
        if (!(peer instanceof ZmqPeer zmqPeer)) {
            throw new IllegalArgumentException("not a ZeroMQ peer: " + peer);
        }
        Objects.requireNonNull(frame, "frame");
        return state.get() == State.RUNNING && mailbox.offer(new Reply(zmqPeer, frame));
    }

    /**
     * Returns, at once, the ids not subscribed now, plus all ids when the transport is closed or its mailbox is
     * full; queues the frame for the others. Ids the transport thread then cannot queue the frame for go to the
     * {@link UndeliveredListener}. Duplicate ids are sent once.
     */
    @Override
    public Set<String> publish(Collection<String> minionIds, byte[] frame) {
        Objects.requireNonNull(frame, "frame");
        Set<String> undeliverable = new HashSet<>();
        List<String> targets = new ArrayList<>(minionIds.size());
        for (String id : new LinkedHashSet<>(minionIds)) {
            (subscribed.contains(id) ? targets : undeliverable).add(id);
        }
        if (!targets.isEmpty()
                && (state.get() != State.RUNNING || !mailbox.offer(new Publication(List.copyOf(targets), frame)))) {
            undeliverable.addAll(targets);
        }
        return undeliverable;
    }

    /**
     * Routes publications to {@code minionId} again after an {@link #unbind}, if its subscription is still live:
     * a minion removed and then accepted again keeps its SUB connection and never subscribes anew. Otherwise
     * nothing to do: publications are routed by topic, which the minion subscribes to itself.
     */
    @Override
    public void bind(String minionId, Peer peer) {
        Objects.requireNonNull(minionId, "minionId");
        if (state.get() == State.RUNNING) {
            mailbox.offer(new Bind(minionId));
        }
    }

    /** Forgets {@code minionId}'s subscription (until it subscribes again), so publishing to it reports it. */
    @Override
    public void unbind(String minionId) {
        Objects.requireNonNull(minionId, "minionId");
        if (state.get() == State.RUNNING) {
            mailbox.offer(new Unbind(minionId));
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

    /** Minion ids subscribed now, as the transport thread last saw them: a snapshot, for metrics and tests. */
    public Set<String> subscribedMinions() {
        return Set.copyOf(subscribed);
    }

    // ---- transport thread ----

    private void run() {
        ZMQ.Poller poller = context.createPoller(3);
        poller.register(mailbox.wakeupChannel(), ZMQ.Poller.POLLIN);
        poller.register(router, ZMQ.Poller.POLLIN);
        poller.register(xpub, ZMQ.Poller.POLLIN);
        boolean backlog = false;
        try {
            while (state.get() == State.RUNNING) {
                poller.poll(backlog ? 0 : IDLE_POLL_MILLIS);
                if (state.get() != State.RUNNING) {
                    break;
                }
                // Subscriptions first, so publications queued meanwhile see them.
                backlog = readSubscriptions();
                backlog |= mailbox.drain(this::execute, COMMANDS_PER_ROUND);
                backlog |= readRequests();
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
            context.close();
            mailbox.close();
            subscribed.clear();
            live.clear();
            unbound.clear();
            LOG.info("ZeroMQ transport closed");
        }
    }

    private boolean readSubscriptions() {
        for (int i = 0; i < MESSAGES_PER_ROUND; i++) {
            byte[] message = xpub.recv(ZMQ.DONTWAIT);
            if (message == null) {
                return false;
            }
            onSubscription(message);
        }
        return true;
    }

    private void onSubscription(byte[] message) {
        if (message.length == 0 || message[0] > 1) {
            LOG.debug("Publish channel: ignored a {}-byte message from a subscriber", message.length);
            return;
        }
        boolean subscribe = message[0] == 1;
        String topic = new String(message, 1, message.length - 1, StandardCharsets.ISO_8859_1);
        String minionId = minionOf(topic);
        if (minionId != null) {
            if (subscribe) {
                live.add(minionId);
                unbound.remove(minionId);
                subscribed.add(minionId);
            } else {
                live.remove(minionId);
                unbound.remove(minionId);
                subscribed.remove(minionId);
            }
            LOG.debug("Minion {}: {}", minionId, subscribe ? "subscribed" : "unsubscribed");
        } else if (!topic.equals(BROADCAST_TOPIC)) {
            // Not ours: a foreign SUB. It receives whatever its prefix matches (ciphertext), no more.
            LOG.debug("Publish channel: a subscriber {} the foreign topic {}",
                    subscribe ? "subscribed to" : "unsubscribed from", MinionIds.printable(topic));
        }
    }

    /** The id in a topic {@code m/<id>/}, or null. */
    static String minionOf(String topic) {
        if (topic.length() < 4 || !topic.startsWith("m/") || !topic.endsWith("/")) {
            return null;
        }
        String id = topic.substring(2, topic.length() - 1);
        return MinionIds.isValid(id) ? id : null;
    }

    static byte[] topicOf(String minionId) {
        return ("m/" + minionId + "/").getBytes(StandardCharsets.US_ASCII);
    }

    private void execute(Command command) {
        if (command instanceof Publication publication) {
            sendPublication(publication);
        } else if (command instanceof Reply reply) {
            sendReply(reply);
        } else if (command instanceof Unbind unbind) {
            subscribed.remove(unbind.minionId());
            if (live.contains(unbind.minionId())) {
                unbound.add(unbind.minionId());
            }
        } else if (command instanceof Bind bind) {
            if (unbound.remove(bind.minionId())) {
                subscribed.add(bind.minionId());
            }
        }
    }

    private void sendPublication(Publication publication) {
        Set<String> refused = null;
        for (String id : publication.minionIds()) {
            boolean queued = false;
            if (subscribed.contains(id)) {
                if (xpub.send(topicOf(id), ZMQ.SNDMORE | ZMQ.DONTWAIT)) {
                    // After the topic went, XPUB never refuses the last part (the queue check is per message).
                    queued = xpub.send(publication.frame(), ZMQ.DONTWAIT);
                    if (!queued) {
                        LOG.error("Minion {}: XPUB refused a publication's second frame", id);
                    }
                } else {
                    xpubUnmatch.run();
                }
            }
            if (!queued) {
                if (refused == null) {
                    refused = new HashSet<>();
                }
                refused.add(id);
            }
        }
        if (refused != null) {
            try {
                undeliveredListener.onUndelivered(Set.copyOf(refused), publication.frame());
            } catch (RuntimeException e) {
                LOG.error("Publish channel: the undelivered listener failed", e);
            }
        }
    }

    private void sendReply(Reply reply) {
        ZmqPeer peer = reply.peer();
        try {
            if (!router.send(peer.identity(), ZMQ.SNDMORE | ZMQ.DONTWAIT)) {
                LOG.debug("Request channel: reply to {} dropped, its queue is full", peer);
                return;
            }
            // Once the identity is accepted, ROUTER accepts the remaining parts.
            if (peer.delimited()) {
                router.send(EMPTY, ZMQ.SNDMORE | ZMQ.DONTWAIT);
            }
            router.send(reply.frame(), ZMQ.DONTWAIT);
        } catch (ZMQException e) {
            if (e.getErrorCode() != ZError.EHOSTUNREACH) {
                throw e;
            }
            LOG.debug("Request channel: reply to {} dropped, the peer is gone", peer);
        }
    }

    private boolean readRequests() {
        for (int i = 0; i < MESSAGES_PER_ROUND; i++) {
            Msg identity = router.base().recv(ZMQ.DONTWAIT);
            if (identity == null) {
                return false;
            }
            // ZeroMQ delivers a multipart message whole: the remaining parts are all there.
            int parts = 1;
            Msg second = null;
            Msg third = null;
            Msg last = identity;
            while (last != null && last.hasMore()) {
                last = router.base().recv(ZMQ.DONTWAIT);
                parts++;
                if (parts == 2) {
                    second = last;
                } else if (parts == 3) {
                    third = last;
                }
            }
            Msg frame;
            boolean delimited;
            if (parts == 2 && second != null) {
                frame = second;
                delimited = false;
            } else if (parts == 3 && second != null && second.size() == 0 && third != null) {
                frame = third;
                delimited = true;
            } else {
                LOG.debug("Request channel: dropped a message of {} frames from {}", parts,
                        ZmqPeer.addressOf(peerAddress(last)));
                continue;
            }
            deliver(new ZmqPeer(identity.data(), ZmqPeer.addressOf(peerAddress(frame)), delimited), frame.data());
        }
        return true;
    }

    private void deliver(ZmqPeer peer, byte[] frame) {
        try {
            handler.onFrame(peer, frame);
        } catch (RuntimeException e) {
            LOG.error("Request channel: the inbound handler failed on a frame from {}", peer, e);
        }
    }

    private static String peerAddress(Msg msg) {
        Metadata metadata = msg == null ? null : msg.getMetadata();
        return metadata == null ? null : metadata.get(Metadata.PEER_ADDRESS);
    }

    // ---- setup helpers ----

    private void configureCommon(ZMQ.Socket socket) {
        socket.setLinger((int) options.linger().toMillis());
        if (!options.heartbeatInterval().isZero()) {
            int interval = (int) options.heartbeatInterval().toMillis();
            int timeout = (int) options.heartbeatTimeout().toMillis();
            socket.setHeartbeatIvl(interval);
            socket.setHeartbeatTimeout(timeout);
            socket.setHeartbeatTtl(timeout);
        }
        // The kernel's probes find dead peers at no cost to jeromq's I/O threads (see ZmqServerOptions).
        socket.setTCPKeepAlive(1);
        socket.setHandshakeIvl((int) options.handshakeTimeout().toMillis());
    }

    private void bind(ZMQ.Socket socket, int port) {
        String host = bindHost;
        if (host.indexOf(':') >= 0) {
            socket.setIPv6(true);
            host = host.startsWith("[") ? host : "[" + host + "]";
        }
        socket.bind("tcp://" + host + ":" + port);
    }

    /** "tcp://127.0.0.1:4506" or "tcp://[::1]:4506" to a socket address, without a name lookup. */
    static InetSocketAddress socketAddress(String endpoint) {
        String hostPort = endpoint.substring(endpoint.indexOf("://") + 3);
        int colon = hostPort.lastIndexOf(':');
        String host = hostPort.substring(0, colon);
        int port = Integer.parseInt(hostPort.substring(colon + 1));
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            return InetSocketAddress.createUnresolved(host, port);
        }
    }

    private static int requirePort(int port) {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        return port;
    }

    private static void logUndelivered(Set<String> minionIds, byte[] frame) {
        LOG.warn("Publish channel: a publication was not queued for {} minions (queue full or unsubscribed): {}",
                minionIds.size(), minionIds);
    }

    private sealed interface Command permits Reply, Publication, Unbind, Bind {
    }

    private record Reply(ZmqPeer peer, byte[] frame) implements Command {
    }

    private record Publication(List<String> minionIds, byte[] frame) implements Command {
    }

    private record Unbind(String minionId) implements Command {
    }

    private record Bind(String minionId) implements Command {
    }
}

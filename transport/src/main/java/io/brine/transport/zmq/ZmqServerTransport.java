package io.brine.transport.zmq;

import io.brine.protocol.MinionIds;
import io.brine.transport.Endpoints;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.Topics;
import io.brine.transport.TransportMailbox;
import io.brine.transport.UndeliveredListener;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
public final class ZmqServerTransport extends ZmqLoop<ZmqServerTransport.Command> implements ServerTransport {

    private static final Logger LOG = LoggerFactory.getLogger(ZmqServerTransport.class);

    private static final byte[] EMPTY = new byte[0];
    /** A subscription message is one command byte and a topic; ours are at most "m/" + 253 + "/". */
    private static final int MAX_SUBSCRIPTION_SIZE = 1024;

    private final String bindHost;
    private final int requestPort;
    private final int publishPort;
    private final ZmqServerOptions options;
    private final UndeliveredListener undeliveredListener;
    /** Minion ids with a live {@code m/<id>/} subscription, less the unbound. Written by the transport thread only. */
    private final Set<String> subscribed = ConcurrentHashMap.newKeySet();
    /** Minion ids whose subscription the XPUB holds, unbound or not. Transport thread only. */
    private final Set<String> live = new HashSet<>();
    /** Minion ids unbound and not bound or subscribed since. Transport thread only. */
    private final Set<String> unbound = new HashSet<>();
    private volatile Addresses addresses;

    // Owned by the transport thread once started (handed over by Thread.start()).
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
        super("brine-zmq-server", options.mailboxCapacity(), options.linger());
        this.bindHost = Objects.requireNonNull(bindHost, "bindHost");
        this.requestPort = requirePort(requestPort);
        this.publishPort = requirePort(publishPort);
        this.options = Objects.requireNonNull(options, "options");
        this.undeliveredListener = undeliveredListener != null ? undeliveredListener : ZmqServerTransport::logUndelivered;
    }

    @Override
    public void start(InboundHandler handler) throws IOException {
        Objects.requireNonNull(handler, "handler");
        startLoop(options.ioThreads(), ctx -> {
            open(ctx);
            this.handler = handler;
        }, "cannot bind the ZeroMQ transport on " + bindHost + " ports " + requestPort + "/" + publishPort);
        Addresses bound = addresses;
        LOG.info("ZeroMQ transport: request channel on {}, publish channel on {}", bound.request(), bound.publish());
    }

    private void open(ZContext ctx) {
        ZMQ.Socket requestSocket = ctx.createSocket(SocketType.ROUTER);
        ZmqSockets.configureServer(requestSocket, options);
        requestSocket.setRouterMandatory(true);
        requestSocket.setSndHWM(options.requestHighWaterMark());
        requestSocket.setRcvHWM(options.requestHighWaterMark());
        requestSocket.setMaxMsgSize(options.maxFrameSize());
        requestSocket.bind(ZmqSockets.endpoint(requestSocket, bindHost, requestPort));

        ZMQ.Socket publishSocket = ctx.createSocket(SocketType.XPUB);
        ZmqSockets.configureServer(publishSocket, options);
        publishSocket.setXpubNoDrop(true);
        publishSocket.setXpubVerbose(true);
        publishSocket.setSndHWM(options.publishHighWaterMark());
        publishSocket.setMaxMsgSize(MAX_SUBSCRIPTION_SIZE);
        publishSocket.bind(ZmqSockets.endpoint(publishSocket, bindHost, publishPort));

        this.router = requestSocket;
        this.xpub = publishSocket;
        this.xpubUnmatch = XpubUnmatch.forSocket(publishSocket);
        this.addresses = new Addresses(Endpoints.parseTcp(requestSocket.getLastEndpoint()),
                Endpoints.parseTcp(publishSocket.getLastEndpoint()));
    }

    @Override
    public Addresses addresses() {
        return Addresses.requireStarted(addresses);
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
        return isRunning() && mailbox.offer(new Reply(zmqPeer, frame));
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
                && (!isRunning() || !mailbox.offer(new Publication(List.copyOf(targets), frame)))) {
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
        if (isRunning()) {
            mailbox.offer(new Bind(minionId));
        }
    }

    /** Forgets {@code minionId}'s subscription (until it subscribes again), so publishing to it reports it. */
    @Override
    public void unbind(String minionId) {
        Objects.requireNonNull(minionId, "minionId");
        if (isRunning()) {
            mailbox.offer(new Unbind(minionId));
        }
    }

    /** Minion ids subscribed now, as the transport thread last saw them: a snapshot, for metrics and tests. */
    public Set<String> subscribedMinions() {
        return Set.copyOf(subscribed);
    }

    // ---- transport thread ----

    @Override
    void register(ZMQ.Poller poller) {
        poller.register(router, ZMQ.Poller.POLLIN);
        poller.register(xpub, ZMQ.Poller.POLLIN);
    }

    @Override
    boolean round() {
        // Subscriptions first, so publications queued meanwhile see them.
        boolean backlog = readSubscriptions();
        backlog |= mailbox.drain(this::execute, COMMANDS_PER_ROUND);
        return backlog | readRequests();
    }

    @Override
    void closing() {
        subscribed.clear();
        live.clear();
        unbound.clear();
        LOG.info("ZeroMQ transport closed");
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
        String minionId = Topics.minionOf(topic);
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
        } else if (!topic.equals(Topics.BROADCAST)) {
            // Not ours: a foreign SUB. It receives whatever its prefix matches (ciphertext), no more.
            LOG.debug("Publish channel: a subscriber {} the foreign topic {}",
                    subscribe ? "subscribed to" : "unsubscribed from", MinionIds.printable(topic));
        }
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
                if (xpub.send(Topics.minionBytes(id), ZMQ.SNDMORE | ZMQ.DONTWAIT)) {
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
            ZmqMessage message = ZmqMessage.receive(router);
            if (message == null) {
                return false;
            }
            // [identity][frame] from a DEALER, [identity][empty][frame] from a REQ.
            Msg frame;
            boolean delimited;
            if (message.parts() == 2 && message.second() != null) {
                frame = message.second();
                delimited = false;
            } else if (message.parts() == 3 && message.second() != null && message.second().size() == 0
                    && message.third() != null) {
                frame = message.third();
                delimited = true;
            } else {
                LOG.debug("Request channel: dropped a message of {} frames from {}", message.parts(),
                        ZmqPeer.addressOf(peerAddress(message.second())));
                continue;
            }
            deliver(new ZmqPeer(message.first().data(), ZmqPeer.addressOf(peerAddress(frame)), delimited),
                    frame.data());
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

    // ---- helpers ----

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

    sealed interface Command permits Reply, Publication, Unbind, Bind {
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

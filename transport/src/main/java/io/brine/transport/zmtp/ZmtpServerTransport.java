// Over 400 lines: one transport serves both ZMTP sockets and, sharing their ports, Salt's TCP transport (issue 15).
package io.brine.transport.zmtp;

import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.UndeliveredListener;
import io.brine.transport.server.AcceptedConnections;
import io.brine.transport.server.GuardedInbound;
import io.brine.transport.server.InflightBudget;
import io.brine.transport.server.Outbox;
import io.brine.transport.server.RunState;
import io.brine.transport.server.ServerBootstraps;
import io.brine.transport.server.ServerConnection;
import io.brine.transport.zmtp.ZmtpConnection.Port;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's side of the ZeroMQ transport, served on Netty: ZMTP 3.0/3.1 (transport/ZMTP.md) with ROUTER
 * semantics on the request port and PUB semantics on the publish port, and the TCP transport's bounds.
 *
 * <p><b>Request port (ROUTER).</b> Peers are DEALERs (one-part messages: a brine frame) and REQs (an empty
 * delimiter, then the frame; replies carry it too). Routing is by connection: the {@link Peer} is the connection.
 * A message of another shape, or an empty frame, closes its connection. A connection may send messages up to
 * {@link ZmtpServerOptions#maxUnauthenticatedFrame()} until a minion is {@link #bind bound} to it, then up to
 * {@link ZmtpServerOptions#maxFrame()}; sizes are judged on each frame header, before any room is made.
 *
 * <p><b>Publish port (PUB).</b> Peers are SUBs and XSUBs; they send subscriptions (both ZMTP forms) and nothing else,
 * at most {@link ZmtpServerOptions#maxTopicsPerConnection()}. Which subscription receives a minion's publications is
 * decided by {@link Subscriptions}: {@code m/ID/} only from the address of ID's live, bound request connection.
 * {@link #publish} sends {@code [m/ID/][frame]} to each minion's honoured connections (one, unless a reconnection or
 * NAT neighbours hold it too) and returns at once the ids with none: a publication never vanishes silently.
 *
 * <p><b>Connections, timeouts, back-pressure</b> as on TCP: caps in total, unauthenticated, and unauthenticated per
 * source address, with a part of the unauthenticated cap reserved for this host and minions' addresses, checked on
 * accept; the unauthenticated and idle timeouts of {@link ZmtpServerHandler}; at most
 * {@link ZmtpServerOptions#maxQueuedBytes()} queued per connection (over it the connection is closed and its
 * minions reported), reading paused above the high water mark, and each request message counted in flight until
 * the master says it is {@link #handled}: a connection over {@link ZmtpServerOptions#maxInflightPerConnection()},
 * or any that delivers while the total is over {@link ZmtpServerOptions#maxInflightBytes()}, is not read until back
 * under ({@link InflightBudget}, TCP's). Writes go through an {@link Outbox}: one flush per
 * connection per batch; a publication's body is one direct buffer shared by every connection it goes to.
 */
public final class ZmtpServerTransport implements ServerTransport {

    private static final Logger LOG = LoggerFactory.getLogger(ZmtpServerTransport.class);
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

    private final String bindHost;
    private final int requestPort;
    private final int publishPort;
    private final ZmtpServerOptions options;
    private final EventLoopGroup sharedGroup;
    private final RunState state = new RunState();
    private final Subscriptions subscriptions;
    /** Salt's TCP transport on both ports, told apart by the client's first byte (issue 15); off by default. */
    private final boolean saltTcp;

    private final SaltTcpSubscribers saltSubscribers = new SaltTcpSubscribers();
    private final AcceptedConnections accepted;
    private final InflightBudget inflight;
    private volatile Addresses addresses;
    private volatile InboundHandler handler;
    private EventLoopGroup group;
    private final List<Channel> serverChannels = new ArrayList<>();

    /** Default options, its own event loops; lost publications are logged. */
    public ZmtpServerTransport(String bindHost, int requestPort, int publishPort) {
        this(bindHost, requestPort, publishPort, ZmtpServerOptions.defaults(), null, null);
    }

    /**
     * @param bindHost the interface to bind ({@code 0.0.0.0}, {@code ::}, an address or a name)
     * @param requestPort {@code ret_port}; 0 for any free port
     * @param publishPort {@code publish_port}; 0 for any free port
     * @param sharedGroup event loops to run on, owned by the caller; null to make (and close) its own
     * @param undeliveredListener told about publications lost when their connection closed; null to log them
     */
    public ZmtpServerTransport(
            String bindHost,
            int requestPort,
            int publishPort,
            ZmtpServerOptions options,
            EventLoopGroup sharedGroup,
            UndeliveredListener undeliveredListener) {
        this(bindHost, requestPort, publishPort, options, sharedGroup, undeliveredListener, false);
    }

    /**
     * @param saltTcp also serve stock Salt minions over Salt's TCP transport on both ports ({@link PortUnification}):
     *     ZMTP's greeting then waits for the client's first byte
     */
    public ZmtpServerTransport(
            String bindHost,
            int requestPort,
            int publishPort,
            ZmtpServerOptions options,
            EventLoopGroup sharedGroup,
            UndeliveredListener undeliveredListener,
            boolean saltTcp) {
        this.saltTcp = saltTcp;
        this.bindHost = Objects.requireNonNull(bindHost, "bindHost");
        this.requestPort = requirePort(requestPort);
        this.publishPort = requirePort(publishPort);
        this.options = Objects.requireNonNull(options, "options");
        this.sharedGroup = sharedGroup;
        this.accepted = new AcceptedConnections("brine-zmtp", options, undeliveredListener, LOG);
        this.subscriptions = new Subscriptions(options.maxTopicsPerConnection());
        this.inflight = new InflightBudget(options);
    }

    @Override
    public void start(InboundHandler handler) throws IOException {
        Objects.requireNonNull(handler, "handler");
        state.start();
        this.handler = new GuardedInbound(handler, LOG);
        group = ServerBootstraps.group(sharedGroup, options, "brine-zmtp-server");
        try {
            InetSocketAddress request = bind(Port.REQUEST, requestPort);
            InetSocketAddress publish = bind(Port.PUBLISH, publishPort);
            addresses = new Addresses(request, publish);
        } catch (Exception e) {
            // Netty rethrows the bind's checked exception without declaring it; either way the port is not ours.
            serverChannels.forEach(channel -> channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS));
            shutDownGroup();
            state.close();
            throw new IOException(
                    "cannot bind the ZeroMQ transport on " + bindHost + " ports " + requestPort + "/" + publishPort
                            + ": " + e.getMessage(),
                    e);
        }
        LOG.info(
                "ZeroMQ transport (ZMTP on Netty, {} I/O): request channel on {}, publish channel on {}",
                ServerBootstraps.ioName(group),
                addresses.request(),
                addresses.publish());
    }

    private InetSocketAddress bind(Port port, int number) {
        Channel channel = ServerBootstraps.of(group, options, new ZmtpServerInitializer(this, options, port, saltTcp))
                .bind(bindHost, number)
                .syncUninterruptibly()
                .channel();
        serverChannels.add(channel);
        return (InetSocketAddress) channel.localAddress();
    }

    @Override
    public Addresses addresses() {
        return Addresses.requireStarted(addresses);
    }

    /**
     * Queues {@code frame} for {@code peer}'s connection (after an empty delimiter for a REQ). False when the
     * connection is gone, the frame is over {@link ZmtpServerOptions#maxFrame()}, or its queue is full (then it is
     * closed).
     */
    @Override
    public boolean send(Peer peer, byte[] frame) {
        ZmtpConnection connection = connectionOf(peer);
        Objects.requireNonNull(frame, "frame");
        if (!state.isRunning() || !connection.isOpen() || frame.length > options.maxFrame()) {
            return false;
        }
        if (connection.saltTcp) { // a whole Salt TCP frame, made by the master
            return connection.enqueue(Unpooled.wrappedBuffer(frame), null, null, frame, options.maxQueuedBytes());
        }
        ByteBuf header = ZmtpEncoder.replyHeader(ALLOC, connection.peerType() == SocketType.REQ, frame.length);
        return connection.enqueue(header, Unpooled.wrappedBuffer(frame), null, frame, options.maxQueuedBytes());
    }

    /**
     * Queues {@code [m/ID/][frame]} for each minion's honoured subscriptions, sharing one copy of the frame. Returns
     * the ids with none, or whose queue was full (their connection is closed), or all of them when the frame is
     * over {@link ZmtpServerOptions#maxFrame()} or the transport is closed. Duplicate ids are sent once.
     */
    @Override
    public Set<String> publish(Collection<String> minionIds, byte[] frame) {
        Objects.requireNonNull(frame, "frame");
        Set<String> undeliverable = new HashSet<>();
        if (!state.isRunning() || frame.length > options.maxFrame()) {
            undeliverable.addAll(minionIds);
            return undeliverable;
        }
        try (Fanout fanout = new Fanout(ALLOC, frame, options.maxQueuedBytes())) {
            Boolean unprovenSent = null; // to the unproven Salt TCP connections: not yet
            for (String id : new LinkedHashSet<>(minionIds)) {
                boolean queued = false;
                for (ZmtpConnection connection : saltSubscribers.of(id)) {
                    queued |= fanout.send(connection, SaltTcpSubscribers.header(ALLOC, frame.length), id);
                }
                SaltHolders.Route salt = queued ? null : subscriptions.saltRoute(id);
                Subscriptions.Route route = queued || salt != null ? null : subscriptions.route(id);
                if (salt != null) {
                    queued = fanout.salt(salt, id);
                } else if (route != null) {
                    for (ZmtpConnection connection : route.connections()) {
                        if (connection.isOpen()) {
                            queued |= fanout.send(
                                    connection, ZmtpEncoder.publicationHeader(ALLOC, route.topic(), frame.length), id);
                        }
                    }
                }
                if (!queued && Subscriptions.isSaltPayload(frame)) {
                    // A Salt minion not bound since the master started (a restart): its envelope goes to every Salt
                    // subscriber, as from a Salt master; only holders of the current aes key can open it, and the
                    // minion, failing its MAC, signs in again and is bound (SALT.md 6).
                    // On TCP, so do the publish connections whose hello was sealed with the aes key before it
                    // (once per publication: the envelope is the same for every target).
                    queued = fanout.everySalt(subscriptions.allSaltHolders(), id);
                    if (unprovenSent == null) {
                        unprovenSent = false;
                        for (ZmtpConnection connection : saltSubscribers.unproven()) {
                            unprovenSent |= fanout.send(connection, SaltTcpSubscribers.header(ALLOC, frame.length), id);
                        }
                    }
                    queued |= unprovenSent;
                }
                if (!queued) {
                    undeliverable.add(id);
                }
            }
        }
        return undeliverable;
    }

    /**
     * {@code minionId} holds its session through {@code peer}: lifts that connection to the authenticated limits
     * and timeout, and honours the minion's subscription from the same address (Subscriptions). Ignored when the
     * connection has closed meanwhile.
     */
    @Override
    public void bind(String minionId, Peer peer) {
        Objects.requireNonNull(minionId, "minionId");
        ZmtpConnection connection = connectionOf(peer);
        if (!connection.authenticate() && !connection.isAuthenticated()) {
            return; // closed
        }
        connection.minionIds().add(minionId);
        if (connection.saltTcp && connection.port() == Port.PUBLISH) {
            saltSubscribers.add(minionId, connection); // its hello verified
            if (!connection.isOpen()) {
                saltSubscribers.closed(connection);
            }
            LOG.debug(
                    "Minion {} ({}): Salt TCP publish connection {}", minionId, connection.remoteAddress(), connection);
            return;
        }
        subscriptions.bind(minionId, connection);
        LOG.debug("Minion {} ({}): bound to request connection {}", minionId, connection.remoteAddress(), connection);
    }

    /** A publisher on {@code peer}: its connection takes the authenticated limits and timeout (ZmtpServerHandler). */
    @Override
    public void authenticated(Peer peer) {
        connectionOf(peer).authenticate();
    }

    /**
     * {@code minionId} was removed: its subscriptions are dropped, and its request connection and honoured publish
     * connection closed (a live minion connects and subscribes anew, and is honoured once bound again).
     */
    @Override
    public void unbind(String minionId) {
        Objects.requireNonNull(minionId, "minionId");
        for (ZmtpConnection connection : subscriptions.unbind(minionId)) {
            connection.minionIds().remove(minionId);
            if (connection.salt && connection.port() == Port.PUBLISH) {
                // A Salt SUB is honoured by address and cannot be told apart from its neighbours': closing it would
                // cut every Salt minion on that host off for a reconnection. It stays; the removed minion's aes key
                // is stale (rotated on the removal), so what it still receives it cannot open.
                continue;
            }
            LOG.debug(
                    "Minion {} ({}): unbound; closing its connection {}",
                    minionId,
                    connection.remoteAddress(),
                    connection);
            connection.channel().close();
        }
        for (ZmtpConnection connection : saltSubscribers.remove(minionId)) {
            connection.minionIds().remove(minionId);
            LOG.debug(
                    "Minion {} ({}): unbound; closing its Salt TCP publish connection {}",
                    minionId,
                    connection.remoteAddress(),
                    connection);
            connection.channel().close();
        }
    }

    /** Counts the message out of the bytes in flight; resumes reading connections paused for them, now under. */
    @Override
    public void handled(Peer peer, int bytes) {
        inflight.handled(connectionOf(peer), bytes);
    }

    /** Closes {@code peer}'s request connection: it sent a frame the master could not decode. */
    @Override
    public void disconnect(Peer peer) {
        connectionOf(peer).channel().close();
    }

    /** Closes every connection and both listening sockets, then the event loops if they are this transport's. */
    @Override
    public void close() {
        if (!state.close()) {
            return;
        }
        serverChannels.forEach(channel -> channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS));
        accepted.closeAll();
        shutDownGroup();
        accepted.discardQueued();
        LOG.info("ZeroMQ transport closed");
    }

    /** {@link #subscribedMinions()}: a minion's publications go down its honoured subscriptions. */
    @Override
    public Set<String> reachableMinions() {
        return subscribedMinions();
    }

    /**
     * Minion ids whose publications have somewhere to go now (an honoured subscription, a proven Salt TCP publish
     * connection): for metrics and tests.
     */
    public Set<String> subscribedMinions() {
        Set<String> ids = new HashSet<>(subscriptions.honouredMinions());
        ids.addAll(saltSubscribers.ids());
        return ids;
    }

    /** Open ZeroMQ connections subscribed as Salt's SUB does, honoured or not yet: for metrics and tests. */
    public int saltSubscriptions() {
        return subscriptions.saltHolders().size();
    }

    /** How many publish connections take {@code minionId}'s publications now (tests). */
    int publishRouteSize(String minionId) {
        SaltHolders.Route salt = subscriptions.saltRoute(minionId);
        if (salt != null) {
            return salt.size();
        }
        Subscriptions.Route route = subscriptions.route(minionId);
        return route == null ? 0 : route.connections().size();
    }

    /** Of those, the ones subscribed with Salt's {@code zmq_filtering} (topics {@code broadcast} and an id's hash). */
    public int saltFilteringSubscriptions() {
        return (int) subscriptions.saltHolders().stream()
                .filter(connection -> connection.saltFiltering)
                .count();
    }

    /**
     * Minion ids whose topic an open publish connection holds, honoured or not (a minion without a session is held,
     * never honoured): for tests.
     */
    public Set<String> heldMinions() {
        return subscriptions.heldMinions();
    }

    /** Frames handed to connections (written or dropped because closed), and flushes, since start. */
    public record OutboundStats(long writes, long flushes) {}

    public OutboundStats outboundStats() {
        return new OutboundStats(accepted.writes(), accepted.flushes());
    }

    /** Open connections now, on both ports, authenticated or not. */
    public int connectionCount() {
        return accepted.count();
    }

    /** Open connections now without a bound minion or an honoured subscription. */
    public int unauthenticatedCount() {
        return accepted.unauthenticatedCount();
    }

    /** Inbound bytes handed to the master and not yet handled, over all connections: for metrics and tests. */
    public long inflightBytes() {
        return inflight.bytes();
    }

    /** The most inbound bytes that were ever in flight at once, since start. */
    public long peakInflightBytes() {
        return inflight.peakBytes();
    }

    // ---- called by the pipeline ----

    /** A new connection: counted and given its state, or null when it is over a cap (the caller closes it). */
    ZmtpConnection admit(Channel channel, Port port) {
        if (!state.isRunning()) {
            return null;
        }
        return accepted.admit(
                channel, (ch, remote, outbox, owner) -> new ZmtpConnection(ch, remote, port, outbox, owner));
    }

    /** A whole message on the request port; false when it is not one brine frame in a DEALER's or REQ's form. */
    boolean message(ZmtpConnection connection, List<byte[]> parts) {
        byte[] frame;
        if (connection.peerType() == SocketType.REQ) {
            if (parts.size() != 2 || parts.get(0).length != 0) {
                LOG.debug("Connection {}: closed: a REQ message that is not [delimiter, frame]", connection);
                return false;
            }
            frame = parts.get(1);
        } else if (parts.size() == 1) {
            frame = parts.get(0);
        } else {
            LOG.debug("Connection {}: closed: a message of {} parts", connection, parts.size());
            return false;
        }
        if (frame.length == 0) {
            LOG.debug("Connection {}: closed: an empty frame", connection);
            return false;
        }
        if (Subscriptions.isSaltPayload(frame)) {
            connection.salt = true; // routes the Salt minions bound here to Salt subscribers (Subscriptions)
        }
        inflight.received(connection, frame.length);
        handler.onFrame(connection.peer(), frame);
        return true;
    }

    /** A whole Salt TCP frame on either port: to the master, whose peer says which port ({@link Peer#framing}). */
    void saltFrame(ZmtpConnection connection, byte[] frame) {
        inflight.received(connection, frame.length);
        handler.onFrame(connection.peer(), frame);
    }

    /** A subscription on the publish port; false when the connection holds too many (close it). */
    boolean subscribe(ZmtpConnection connection, byte[] topic) {
        if (!subscriptions.subscribe(connection, topic)) {
            LOG.debug(
                    "Connection {}: closed: more than {} subscriptions", connection, options.maxTopicsPerConnection());
            return false;
        }
        return true;
    }

    /** Reads {@code connection} when it is writable and not over its inbound bounds. Its event loop only. */
    void updateAutoRead(ZmtpConnection connection) {
        inflight.updateAutoRead(connection);
    }

    void cancel(ZmtpConnection connection, byte[] topic) {
        subscriptions.cancel(connection, topic);
    }

    /**
     * A Salt TCP publish connection whose hello the master could not open with its current aes key stays open,
     * unbound (it stays in the unauthenticated connection budget, and is timed as a proven one: Salt has no heartbeat
     * on TCP), and takes the envelopes of Salt minions that have no proven connection; anything else is closed, as
     * {@link #disconnect} does.
     */
    @Override
    public void keepUnproven(Peer peer) {
        ZmtpConnection connection = connectionOf(peer);
        if (!connection.saltTcp || connection.port() != Port.PUBLISH) {
            disconnect(peer);
            return;
        }
        connection.saltUnproven = true;
        saltSubscribers.addUnproven(connection);
        LOG.debug(
                "Connection {} ({}): Salt TCP publish connection kept unproven",
                connection,
                connection.remoteAddress());
        if (!connection.isOpen()) {
            saltSubscribers.closed(connection);
        }
    }

    void disconnected(ZmtpConnection connection) {
        inflight.closed(connection);
        if (connection.saltTcp && connection.port() == Port.PUBLISH) {
            saltSubscribers.closed(connection);
            return;
        }
        if (connection.port() == Port.PUBLISH) {
            subscriptions.publishClosed(connection);
            return;
        }
        subscriptions.requestClosed(connection);
        handler.onDisconnect(connection.peer());
    }

    // ---- helpers ----

    private static ZmtpConnection connectionOf(Peer peer) {
        return ServerConnection.of(peer, ZmtpConnection.class);
    }

    private void shutDownGroup() {
        ServerBootstraps.shutDown(group, sharedGroup);
    }

    private static int requirePort(int port) {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        return port;
    }
}

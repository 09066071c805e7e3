package io.brine.transport.tcp;

import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.UndeliveredListener;
import io.brine.transport.server.AcceptedConnections;
import io.brine.transport.server.GuardedInbound;
import io.brine.transport.server.InflightBudget;
import io.brine.transport.server.RunState;
import io.brine.transport.server.ServerBootstraps;
import io.brine.transport.server.ServerConnection;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's side of the TCP transport (PROTOCOL.md 2.2): one connection per minion carries both channels, each
 * frame behind a 4-byte big-endian length. Built on Netty; the pipeline is {@link TcpServerInitializer}'s.
 *
 * <p><b>Limits.</b> A connection may announce frames up to {@link TcpServerOptions#maxUnauthenticatedFrame()}
 * until a minion is {@link #bind bound} to it, then up to {@link TcpServerOptions#maxFrame()}; a length over the
 * limit (or 0) closes the connection before the frame is buffered. A connection with no bound minion that
 * delivers no whole frame within {@link TcpServerOptions#unauthenticatedTimeout()} is closed (half-open
 * connections, slowloris peers); a bound one after {@link TcpServerOptions#idleTimeout()}. Connections over
 * {@link TcpServerOptions#maxConnections()}, or over {@link TcpServerOptions#maxUnauthenticatedConnections()}
 * without a bound minion, or over {@link TcpServerOptions#maxUnauthenticatedPerSource()} of those from one source
 * address, or over the part of the unauthenticated cap not reserved for this host and minions' addresses
 * ({@link io.brine.transport.server.ServerOptions#reservedUnauthenticated()}) from any other source, are closed as
 * they are accepted. The master {@link #disconnect disconnects} a peer whose frame it could
 * not decode.
 *
 * <p><b>Inbound.</b> Frames are handed to the {@link InboundHandler} on the connection's event loop, which must
 * only enqueue work. {@link InboundHandler#onDisconnect} is called when a connection closes. Each frame counts as
 * in flight until the master says it is {@link #handled}: a connection over
 * {@link TcpServerOptions#maxInflightPerConnection()}, or any connection that delivers while the total is over
 * {@link TcpServerOptions#maxInflightBytes()}, is not read until it is back under (back-pressure: the bytes wait in
 * the kernel and in the minion, not in the master's heap).
 *
 * <p><b>Outbound and back-pressure.</b> {@link #send} and {@link #publish} never wait: they queue each frame for
 * the connection's event loop, which writes a batch and flushes each connection once ({@link Outbox}). A
 * publication is wrapped once and shared by every connection it goes to, never copied. Each connection may have at
 * most {@link TcpServerOptions#maxQueuedBytes()} queued and not yet written to its socket: a frame that would go
 * over closes the connection (INFO: "disconnected: outbound queue over N bytes") and the minion is reported
 * undeliverable, so a stalled minion costs a bounded amount of memory and never holds up the others. Above the
 * high water mark the master stops reading from that connection until it drains. Publications lost because their
 * connection closed before they were written go to the {@link UndeliveredListener}.
 *
 * <p><b>Routing.</b> {@link #bind} maps a minion id to the connection it authenticated on; {@link #publish}
 * follows that map and returns ids without a live connection. {@link #unbind} drops the route and closes the
 * connection. Auth replies name publish port 0: publications come down the same connection.
 */
public final class TcpServerTransport implements ServerTransport {

    private static final Logger LOG = LoggerFactory.getLogger(TcpServerTransport.class);

    private final String bindHost;
    private final int port;
    private final TcpServerOptions options;
    private final SslContext tls;
    private final EventLoopGroup sharedGroup;
    private final RunState state = new RunState();
    private final Map<String, TcpConnection> routes = new ConcurrentHashMap<>();
    private final AcceptedConnections accepted;
    private final InflightBudget inflight;
    private volatile Addresses addresses;
    private volatile InboundHandler handler;
    private EventLoopGroup group;
    private Channel serverChannel;

    /** Plain TCP with default options, its own event loops; lost publications are logged. */
    public TcpServerTransport(String bindHost, int port) {
        this(bindHost, port, TcpServerOptions.defaults(), null, null, null);
    }

    /**
     * @param bindHost the interface to bind ({@code 0.0.0.0}, {@code ::}, an address or a name)
     * @param port the port ({@code tcp_port}); 0 for any free port
     * @param tls a server TLS context ({@link TcpTls#server}); null for plain TCP
     * @param sharedGroup event loops to run on, owned by the caller; null to make (and close) its own
     * @param undeliveredListener told about publications lost when their connection closed; null to log them
     */
    public TcpServerTransport(
            String bindHost,
            int port,
            TcpServerOptions options,
            SslContext tls,
            EventLoopGroup sharedGroup,
            UndeliveredListener undeliveredListener) {
        this.bindHost = Objects.requireNonNull(bindHost, "bindHost");
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        this.port = port;
        this.options = Objects.requireNonNull(options, "options");
        this.tls = tls;
        this.sharedGroup = sharedGroup;
        this.accepted = new AcceptedConnections("brine-tcp", options, undeliveredListener, LOG);
        this.inflight = new InflightBudget(options);
    }

    @Override
    public void start(InboundHandler handler) throws IOException {
        Objects.requireNonNull(handler, "handler");
        state.start();
        this.handler = new GuardedInbound(handler, LOG);
        group = ServerBootstraps.group(sharedGroup, options, "brine-tcp-server");
        ServerBootstrap bootstrap = ServerBootstraps.of(group, options, new TcpServerInitializer(this, options, tls));
        try {
            serverChannel = bootstrap.bind(bindHost, port).syncUninterruptibly().channel();
        } catch (Exception e) {
            // Netty rethrows the bind's checked exception without declaring it; either way the port is not ours.
            shutDownGroup();
            state.close();
            throw new IOException(
                    "cannot bind the TCP transport on " + bindHost + " port " + port + ": " + e.getMessage(), e);
        }
        InetSocketAddress bound = (InetSocketAddress) serverChannel.localAddress();
        addresses = new Addresses(bound, bound);
        LOG.info(
                "TCP transport{}: both channels on {} ({} I/O)",
                tls != null ? " with TLS" : "",
                bound,
                ServerBootstraps.ioName(group));
    }

    @Override
    public Addresses addresses() {
        return Addresses.requireStarted(addresses);
    }

    /** 0: publications come down the minion's own connection. */
    @Override
    public int publishPort(Peer peer) {
        return 0;
    }

    /**
     * Queues {@code frame} for {@code peer}'s connection. False when the connection is gone, the frame is over
     * {@link TcpServerOptions#maxFrame()}, or the connection's queue is full (then it is closed).
     */
    @Override
    public boolean send(Peer peer, byte[] frame) {
        TcpConnection connection = connectionOf(peer);
        Objects.requireNonNull(frame, "frame");
        if (!state.isRunning() || !connection.isOpen() || frame.length > options.maxFrame()) {
            return false;
        }
        return connection.enqueue(Unpooled.wrappedBuffer(frame), null, frame, options.maxQueuedBytes());
    }

    /**
     * Queues {@code frame} for each minion's connection, sharing one buffer. Returns the ids with no live
     * connection, or whose queue was full (their connection is closed), or all of them when the frame is over
     * {@link TcpServerOptions#maxFrame()} or the transport is closed. Duplicate ids are sent once.
     */
    @Override
    public Set<String> publish(Collection<String> minionIds, byte[] frame) {
        Objects.requireNonNull(frame, "frame");
        Set<String> undeliverable = new HashSet<>();
        if (!state.isRunning() || frame.length > options.maxFrame()) {
            undeliverable.addAll(minionIds);
            return undeliverable;
        }
        ByteBuf shared = Unpooled.wrappedBuffer(frame);
        try {
            for (String id : new LinkedHashSet<>(minionIds)) {
                TcpConnection connection = routes.get(id);
                if (connection == null
                        || !connection.isOpen()
                        || !connection.enqueue(shared.retainedDuplicate(), id, frame, options.maxQueuedBytes())) {
                    undeliverable.add(id);
                }
            }
        } finally {
            shared.release();
        }
        return undeliverable;
    }

    /** A publisher on {@code peer}: its connection takes the authenticated frame limit and idle timeout. */
    @Override
    public void authenticated(Peer peer) {
        lift(connectionOf(peer));
    }

    /** Lifts {@code connection} to the authenticated frame limit and idle timeout; false when it has closed. */
    private boolean lift(TcpConnection connection) {
        if (connection.authenticate()) {
            Channel channel = connection.channel();
            channel.eventLoop().execute(() -> {
                if (channel.pipeline().get(TcpServerInitializer.IDLE) != null) {
                    channel.pipeline()
                            .replace(
                                    TcpServerInitializer.IDLE,
                                    TcpServerInitializer.IDLE,
                                    TcpServerInitializer.idleHandler(
                                            options.idleTimeout().toMillis()));
                }
            });
            return true;
        }
        return connection.isAuthenticated();
    }

    /**
     * Routes {@code minionId}'s publications to {@code peer}'s connection, and lifts that connection to the
     * authenticated frame limit and idle timeout. Ignored when the connection has closed meanwhile.
     */
    @Override
    public void bind(String minionId, Peer peer) {
        Objects.requireNonNull(minionId, "minionId");
        TcpConnection connection = connectionOf(peer);
        if (!lift(connection)) {
            return; // closed
        }
        connection.minionIds().add(minionId);
        TcpConnection previous = routes.put(minionId, connection);
        if (previous != null && previous != connection) {
            previous.minionIds().remove(minionId);
        }
        if (!connection.isOpen()) {
            // It closed while we bound: disconnected() may have run before the put.
            routes.remove(minionId, connection);
        }
        LOG.debug("Minion {} ({}): bound to connection {}", minionId, connection.remoteAddress(), connection.peer());
    }

    /** Drops {@code minionId}'s route and closes its connection. */
    @Override
    public void unbind(String minionId) {
        TcpConnection connection = routes.remove(Objects.requireNonNull(minionId, "minionId"));
        if (connection != null) {
            connection.minionIds().remove(minionId);
            LOG.debug("Minion {} ({}): unbound; closing its connection", minionId, connection.remoteAddress());
            connection.channel().close();
        }
    }

    /** Counts the frame out of the bytes in flight; resumes reading connections paused for them, now under. */
    @Override
    public void handled(Peer peer, int bytes) {
        inflight.handled(connectionOf(peer), bytes);
    }

    /** Closes {@code peer}'s connection: it sent a frame the master could not decode. */
    @Override
    public void disconnect(Peer peer) {
        connectionOf(peer).channel().close();
    }

    /** Closes every connection and the listening socket, then the event loops if they are this transport's. */
    @Override
    public void close() {
        if (!state.close()) {
            return;
        }
        if (serverChannel != null) {
            serverChannel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        accepted.closeAll();
        shutDownGroup();
        accepted.discardQueued();
        routes.clear();
        LOG.info("TCP transport closed");
    }

    /** Publications go down the minion's own connection: those with a live route. */
    @Override
    public Set<String> reachableMinions() {
        return boundMinions();
    }

    /** Minion ids with a live route now: a snapshot, for metrics and tests. */
    public Set<String> boundMinions() {
        Set<String> bound = new HashSet<>();
        routes.forEach((id, connection) -> {
            if (connection.isOpen()) {
                bound.add(id);
            }
        });
        return bound;
    }

    /** Frames handed to connections (written or dropped because closed), and flushes, since start. */
    public record OutboundStats(long writes, long flushes) {}

    public OutboundStats outboundStats() {
        return new OutboundStats(accepted.writes(), accepted.flushes());
    }

    /** Open connections now, bound or not. */
    public int connectionCount() {
        return accepted.count();
    }

    // ---- called by the pipeline ----

    /** A new connection: counted and given its state, or null when it is over a cap (the caller closes it). */
    TcpConnection admit(Channel channel) {
        if (!state.isRunning()) {
            return null;
        }
        return accepted.admit(channel, TcpConnection::new);
    }

    void deliver(TcpConnection connection, byte[] frame) {
        inflight.received(connection, frame.length);
        handler.onFrame(connection.peer(), frame);
    }

    /** Reads {@code connection} when it is writable and not over its inbound bounds. Its event loop only. */
    void updateAutoRead(TcpConnection connection) {
        inflight.updateAutoRead(connection);
    }

    /** Inbound bytes handed to the master and not yet handled, over all connections: for metrics and tests. */
    public long inflightBytes() {
        return inflight.bytes();
    }

    /** The most inbound bytes that were ever in flight at once, since start. */
    public long peakInflightBytes() {
        return inflight.peakBytes();
    }

    void disconnected(TcpConnection connection) {
        inflight.closed(connection);
        for (String id : connection.minionIds()) {
            routes.remove(id, connection);
        }
        handler.onDisconnect(connection.peer());
    }

    // ---- helpers ----

    private static TcpConnection connectionOf(Peer peer) {
        return ServerConnection.of(peer, TcpConnection.class);
    }

    private void shutDownGroup() {
        ServerBootstraps.shutDown(group, sharedGroup);
    }
}

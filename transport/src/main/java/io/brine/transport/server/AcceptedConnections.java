package io.brine.transport.server;

import io.brine.transport.DropLog;
import io.brine.transport.UndeliveredListener;
import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * The connections a server transport on Netty has accepted, and what they share: the {@link ConnectionBudget}
 * checked as each arrives, the {@link ReservedSources} its reserve is kept for (fed as connections authenticate),
 * the {@link Outbox} of each event loop, the channel group closed with the transport, and where lost publications,
 * overflowed queues and refused frames are reported. Thread-safe. Both the TCP and the ZMTP transport keep one; log
 * lines go to the transport's logger.
 */
public final class AcceptedConnections {

    /** Makes a transport's connection for an admitted channel. */
    @FunctionalInterface
    public interface Factory<C extends ServerConnection> {
        C connection(Channel channel, String remoteAddress, Outbox outbox, AcceptedConnections owner);
    }

    private final Logger log;
    private final ConnectionBudget budget;
    private final ReservedSources reservedSources;
    private final Outboxes outboxes = new Outboxes();
    private final ChannelGroup channels;
    private final UndeliveredListener undelivered;
    private final DropLog refusals;

    /**
     * @param name the channel group's name
     * @param undelivered told about publications lost when their connection closed; null to log them at DEBUG
     * @param log the transport's logger
     */
    public AcceptedConnections(String name, ServerOptions options, UndeliveredListener undelivered, Logger log) {
        this.log = log;
        this.budget = new ConnectionBudget(options);
        this.reservedSources = new ReservedSources(options.maxConnections());
        this.channels = new DefaultChannelGroup(name, GlobalEventExecutor.INSTANCE);
        this.undelivered = undelivered != null ? undelivered : this::logLost;
        this.refusals = new DropLog(log);
    }

    /**
     * {@code connection} sent what it may not and is being closed: a WARN line for the first such frame of each
     * reason from its source address, then at most one per {@link DropLog#INTERVAL} with the count.
     */
    void refused(ServerConnection connection, String reason, String detail) {
        refusals.dropped(connection.remoteAddress(), reason + "; connection closed", detail);
    }

    /**
     * A new connection: counted and given its state, or null when it is over a cap (the caller closes it; one WARN
     * per cap and source address a minute says so). It is counted until its channel closes, unauthenticated until
     * {@link #authenticated} or then.
     */
    public <C extends ServerConnection> C admit(Channel channel, Factory<C> factory) {
        String remote = ServerConnection.remoteAddressOf(channel);
        boolean reserved = reservedSources.contains(channel, remote);
        String refusal = budget.admit(remote, reserved);
        if (refusal != null) {
            refusals.dropped(remote, "a connection closed on arrival: " + refusal);
            return null;
        }
        C connection = factory.connection(channel, remote, outboxes.of(channel.eventLoop()), this);
        connection.reserved = reserved;
        channels.add(channel);
        channel.closeFuture().addListener(future -> budget.closed(remote, reserved, connection.markClosed()));
        return connection;
    }

    /**
     * {@code connection} left the unauthenticated budget (a minion bound, a subscription honoured for one): its
     * address is one the reserve is kept for from now on.
     */
    void authenticated(ServerConnection connection) {
        budget.authenticated(connection.remoteAddress(), connection.reserved);
        reservedSources.minionBound(connection.remoteAddress());
    }

    /** Open connections now, authenticated or not. */
    public int count() {
        return budget.connections();
    }

    /** Open connections now that are not authenticated. */
    public int unauthenticatedCount() {
        return budget.unauthenticated();
    }

    /** Frames handed to connections (written or dropped because closed) since start. */
    public long writes() {
        return outboxes.writes();
    }

    public long flushes() {
        return outboxes.flushes();
    }

    /** Closes every connection (the transport closed its listening sockets first). */
    public void closeAll() {
        channels.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /** After the event loops stopped: releases what was never written, reporting lost publications. */
    public void discardQueued() {
        outboxes.discard();
    }

    /** {@code connection}'s queue would go over {@code maxQueuedBytes}: it is closed. */
    void overflowed(ServerConnection connection, long maxQueuedBytes) {
        Set<String> ids = connection.minionIds();
        if (ids.isEmpty()) {
            log.info("Connection {}: disconnected: outbound queue over {} bytes", connection, maxQueuedBytes);
        } else {
            log.info(
                    "Minion {} ({}): disconnected: outbound queue over {} bytes",
                    String.join(",", ids),
                    connection.remoteAddress(),
                    maxQueuedBytes);
        }
    }

    /** A publication queued for {@code minionId} that its connection closed on. */
    void lost(String minionId, byte[] frame) {
        try {
            undelivered.onUndelivered(Set.of(minionId), frame);
        } catch (RuntimeException e) {
            log.error("Publish channel: the undelivered listener failed", e);
        }
    }

    private void logLost(Set<String> minionIds, byte[] frame) {
        log.debug("Minion {}: a publication queued for it was lost with its connection", minionIds);
    }
}

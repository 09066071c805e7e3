package io.brine.transport.server;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The connection caps of {@link ServerOptions}: open connections in total, unauthenticated ones in total, and
 * unauthenticated ones per source address; of the unauthenticated ones, {@link ServerOptions#reservedUnauthenticated}
 * are kept for reserved sources (this host, addresses minions bound from), so that other sources together hold at
 * most the rest. Thread-safe; a connection is counted from {@link #admit} until {@link #closed}, and leaves the
 * unauthenticated counts at {@link #authenticated} or at its close, each call naming the same source and whether it
 * was admitted as reserved.
 */
final class ConnectionBudget {

    private final ServerOptions options;
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger unauthenticated = new AtomicInteger();
    /** Unauthenticated connections admitted from sources outside the reserve. */
    private final AtomicInteger unreserved = new AtomicInteger();

    private final Map<String, Integer> unauthenticatedBySource = new ConcurrentHashMap<>();

    ConnectionBudget(ServerOptions options) {
        this.options = options;
    }

    /**
     * Counts a new unauthenticated connection from {@code source}, {@code reserved} when it comes from a source the
     * reserve is kept for; the cap it is over when not (nothing counted).
     */
    String admit(String source, boolean reserved) {
        if (connections.incrementAndGet() > options.maxConnections()) {
            connections.decrementAndGet();
            return options.maxConnections() + " connections open";
        }
        if (unauthenticated.incrementAndGet() > options.maxUnauthenticatedConnections()) {
            unauthenticated.decrementAndGet();
            connections.decrementAndGet();
            return options.maxUnauthenticatedConnections() + " unauthenticated connections open";
        }
        int share = options.maxUnauthenticatedConnections() - options.reservedUnauthenticated();
        if (!reserved && unreserved.incrementAndGet() > share) {
            unreserved.decrementAndGet();
            unauthenticated.decrementAndGet();
            connections.decrementAndGet();
            return share + " unauthenticated connections open from sources outside the reserve";
        }
        boolean[] admitted = {false};
        unauthenticatedBySource.compute(source, (key, count) -> {
            int now = count == null ? 0 : count;
            if (now >= options.maxUnauthenticatedPerSource()) {
                return count;
            }
            admitted[0] = true;
            return now + 1;
        });
        if (!admitted[0]) {
            if (!reserved) {
                unreserved.decrementAndGet();
            }
            unauthenticated.decrementAndGet();
            connections.decrementAndGet();
            return options.maxUnauthenticatedPerSource() + " unauthenticated connections open from there";
        }
        return null;
    }

    /** A connection from {@code source} left the unauthenticated budget (a minion bound, a subscription honoured). */
    void authenticated(String source, boolean reserved) {
        leaveUnauthenticated(source, reserved);
    }

    /** A connection closed; {@code unauthenticatedStill} when it still counted as such. */
    void closed(String source, boolean reserved, boolean unauthenticatedStill) {
        connections.decrementAndGet();
        if (unauthenticatedStill) {
            leaveUnauthenticated(source, reserved);
        }
    }

    int connections() {
        return connections.get();
    }

    int unauthenticated() {
        return unauthenticated.get();
    }

    /** Unauthenticated connections now from sources outside the reserve. */
    int unreserved() {
        return unreserved.get();
    }

    private void leaveUnauthenticated(String source, boolean reserved) {
        unauthenticated.decrementAndGet();
        if (!reserved) {
            unreserved.decrementAndGet();
        }
        unauthenticatedBySource.computeIfPresent(source, (key, count) -> count <= 1 ? null : count - 1);
    }
}

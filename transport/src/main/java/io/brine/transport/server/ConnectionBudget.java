package io.brine.transport.server;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The connection caps of {@link ServerOptions}: open connections in total, unauthenticated ones in total, and
 * unauthenticated ones per source address. Thread-safe; a connection is counted from {@link #admit} until
 * {@link #closed}, and leaves the unauthenticated counts at {@link #authenticated} or at its close.
 */
final class ConnectionBudget {

    private final ServerOptions options;
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger unauthenticated = new AtomicInteger();
    private final Map<String, Integer> unauthenticatedBySource = new ConcurrentHashMap<>();

    ConnectionBudget(ServerOptions options) {
        this.options = options;
    }

    /** Counts a new unauthenticated connection from {@code source}; the cap it is over when not (nothing counted). */
    String admit(String source) {
        if (connections.incrementAndGet() > options.maxConnections()) {
            connections.decrementAndGet();
            return options.maxConnections() + " connections open";
        }
        if (unauthenticated.incrementAndGet() > options.maxUnauthenticatedConnections()) {
            unauthenticated.decrementAndGet();
            connections.decrementAndGet();
            return options.maxUnauthenticatedConnections() + " unauthenticated connections open";
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
            unauthenticated.decrementAndGet();
            connections.decrementAndGet();
            return options.maxUnauthenticatedPerSource() + " unauthenticated connections open from there";
        }
        return null;
    }

    /** A connection from {@code source} left the unauthenticated budget (a minion bound, a subscription honoured). */
    void authenticated(String source) {
        unauthenticated.decrementAndGet();
        release(source);
    }

    /** A connection closed; {@code unauthenticated} when it still counted as such. */
    void closed(String source, boolean unauthenticatedStill) {
        connections.decrementAndGet();
        if (unauthenticatedStill) {
            unauthenticated.decrementAndGet();
            release(source);
        }
    }

    int connections() {
        return connections.get();
    }

    int unauthenticated() {
        return unauthenticated.get();
    }

    private void release(String source) {
        unauthenticatedBySource.computeIfPresent(source, (key, count) -> count <= 1 ? null : count - 1);
    }
}

package io.brine.daemon.config;

import java.util.OptionalInt;

/**
 * The connection caps of master.yaml, each empty for the served transport's own default (PROTOCOL.md 10.1): they
 * apply to each transport served, and a ZeroMQ minion holds two connections (request and publish), a TCP one one.
 *
 * @param maxConnections {@code max_connections}: open connections at most
 * @param maxUnauthenticatedConnections {@code max_unauthenticated_connections}: of those, without a session at most
 * @param maxUnauthenticatedPerSource {@code max_unauthenticated_per_source}: of those, from one source address at
 *     most (raise it for a fleet behind one NAT address, whose minions all reconnect at once after a master restart)
 */
public record ConnectionLimits(
        OptionalInt maxConnections,
        OptionalInt maxUnauthenticatedConnections,
        OptionalInt maxUnauthenticatedPerSource) {

    /** The highest value any of the three may take: the process's descriptors bound them long before. */
    public static final int MAX_VALUE = 10_000_000;

    public static final ConnectionLimits DEFAULTS =
            new ConnectionLimits(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty());

    public ConnectionLimits {
        check(maxConnections, "max_connections");
        check(maxUnauthenticatedConnections, "max_unauthenticated_connections");
        check(maxUnauthenticatedPerSource, "max_unauthenticated_per_source");
        notAbove(maxUnauthenticatedConnections, "max_unauthenticated_connections", maxConnections, "max_connections");
        notAbove(
                maxUnauthenticatedPerSource,
                "max_unauthenticated_per_source",
                maxUnauthenticatedConnections,
                "max_unauthenticated_connections");
    }

    private static void check(OptionalInt value, String key) {
        if (value.isPresent() && (value.getAsInt() < 1 || value.getAsInt() > MAX_VALUE)) {
            throw new IllegalArgumentException(key + " must be from 1 to " + MAX_VALUE);
        }
    }

    private static void notAbove(OptionalInt inner, String innerKey, OptionalInt outer, String outerKey) {
        if (inner.isPresent() && outer.isPresent() && inner.getAsInt() > outer.getAsInt()) {
            throw new IllegalArgumentException(innerKey + " (" + inner.getAsInt() + ") must not exceed " + outerKey
                    + " (" + outer.getAsInt() + ")");
        }
    }

    /**
     * The three caps for one transport, given its defaults: a default above a configured outer cap is lowered to
     * it, so that {@code max_connections: 100} alone does not leave 20,000 connections without a session allowed.
     */
    public int[] resolve(int defaultMax, int defaultUnauthenticated, int defaultPerSource) {
        int max = maxConnections.orElse(defaultMax);
        int unauthenticated = Math.min(maxUnauthenticatedConnections.orElse(defaultUnauthenticated), max);
        int perSource = Math.min(maxUnauthenticatedPerSource.orElse(defaultPerSource), unauthenticated);
        return new int[] {max, unauthenticated, perSource};
    }
}

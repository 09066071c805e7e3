package io.brine.cluster;

import java.time.Instant;
import java.util.Objects;

/**
 * Whether this master can change the cluster's shared state now, as its ZooKeeper connection says. While it cannot,
 * the master serves from its last view: accepted minions and their sessions go on, new keys are answered "pending,
 * try later" without a write, and admin changes are refused with {@link #describe()}.
 *
 * @param state what the connection is
 * @param since when it became so (the clock of the master)
 */
public record ClusterHealth(State state, Instant since) {

    /** The connection's states as far as writes are concerned. */
    public enum State {
        /** Connected to a server of an ensemble with quorum: writes go through. */
        CONNECTED,
        /** No server answers, or the ensemble lost quorum; the session may still come back. */
        DISCONNECTED,
        /** The session expired while this master was cut off (a partition): a new one is being made. */
        SESSION_EXPIRED
    }

    public ClusterHealth {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(since, "since");
    }

    public boolean writable() {
        return state == State.CONNECTED;
    }

    /** One line for logs, refusals and status. */
    public String describe() {
        return switch (state) {
            case CONNECTED -> "connected to ZooKeeper since " + since;
            case DISCONNECTED ->
                "disconnected from ZooKeeper since " + since + " (no server reachable or no quorum);"
                        + " serving from the last view";
            case SESSION_EXPIRED ->
                "ZooKeeper session expired at " + since + " (this master was cut off from the"
                        + " ensemble); serving from the last view until it reconnects";
        };
    }
}

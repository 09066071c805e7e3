package io.brine.transport;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * The waits between a client transport's connection attempts, by ZeroMQ's rule (jeromq 0.5.4's {@code
 * TcpConnecter}, which the minion's ZeroMQ sockets follow): the first wait is the interval, each failed attempt
 * doubles it up to the maximum, and each wait is moved by up to one interval either way at random, so that minions
 * that lost a master at the same moment do not all come back at the same moment. With the defaults (1 s doubling to
 * 5 s) a minion whose master is down tries every 4-6 s, and is back within 6 s of the master listening again.
 *
 * <p>Not thread-safe: each transport keeps its own, on its event loop.
 */
public final class ReconnectBackoff {

    private final long intervalMillis;
    private final long maxMillis;
    /** Uniform in [0, 1). */
    private final DoubleSupplier random;

    private long current;

    /** {@code random} gives values in [0, 1) (a test gives fixed ones). */
    public ReconnectBackoff(Duration interval, Duration max, DoubleSupplier random) {
        OptionChecks.requireBackoff("reconnect", interval, max);
        this.intervalMillis = interval.toMillis();
        this.maxMillis = max.toMillis();
        this.random = random;
        this.current = intervalMillis;
    }

    /** The wait before the next attempt, in milliseconds (at least 1); each call counts as one more failed attempt. */
    public long nextMillis() {
        long jitter = (long) ((2 * random.getAsDouble() - 1) * intervalMillis);
        long wait = Math.max(1, current + jitter);
        current = Math.min(maxMillis, current * 2);
        return wait;
    }

    /** A connection worked: the next wait starts from the interval again. */
    public void reset() {
        current = intervalMillis;
    }
}

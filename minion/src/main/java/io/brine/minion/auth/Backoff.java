package io.brine.minion.auth;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * Salt's acceptance wait: {@code acceptance_wait_time}, doubled after each unanswered or pending attempt up to
 * {@code acceptance_wait_time_max} (when that is larger), and every wait stretched by a random 0-25 % so that a
 * thousand minions never retry in lockstep.
 */
public final class Backoff {

    private final Duration base;
    private final Duration max;
    private final DoubleSupplier random;
    private int attempts;

    public Backoff(Duration base, Duration max, DoubleSupplier random) {
        this.base = base;
        this.max = max.compareTo(base) > 0 ? max : base;
        this.random = random;
    }

    /** The wait before the next attempt; each call counts as one more attempt. */
    public Duration next() {
        long millis = base.toMillis();
        for (int i = 0; i < attempts && millis < max.toMillis(); i++) {
            millis = Math.min(millis * 2, max.toMillis());
        }
        attempts++;
        return Duration.ofMillis(millis + (long) (millis * 0.25 * random.getAsDouble()));
    }

    public void reset() {
        attempts = 0;
    }
}

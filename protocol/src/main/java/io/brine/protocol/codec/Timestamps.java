package io.brine.protocol.codec;

import java.time.Clock;
import java.time.Duration;

/** The clock-skew rule for the timestamps in auth requests, auth replies and session-unknown answers. */
public final class Timestamps {

    /** How far a peer's clock may be from ours, either way. */
    public static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(5);

    private Timestamps() {}

    /** Whether {@code timestampMs} (epoch milliseconds) is within {@link #MAX_CLOCK_SKEW} of {@code clock}. */
    public static boolean withinSkew(long timestampMs, Clock clock) {
        long now = clock.millis();
        long skew = MAX_CLOCK_SKEW.toMillis();
        return timestampMs >= now - skew && timestampMs <= now + skew;
    }
}

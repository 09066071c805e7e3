package io.brine.transport;

import io.brine.protocol.codec.FrameLimits;
import java.time.Duration;
import java.util.Objects;

/** The checks the transports' option records run in their constructors, with one wording for each failure. */
public final class OptionChecks {

    private OptionChecks() {
    }

    public static void requirePositive(String name, long value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " must be positive: " + value);
        }
    }

    /** A frame limit: 1 to {@link FrameLimits#MAX_FRAME}. */
    public static void requireFrameLimit(String name, long value) {
        if (value < 1 || value > FrameLimits.MAX_FRAME) {
            throw new IllegalArgumentException(name + " out of range (1 to FrameLimits.MAX_FRAME): " + value);
        }
    }

    /** A duration of {@code min} to {@link Integer#MAX_VALUE} milliseconds (what socket options take). */
    public static void requireMillis(String name, Duration value, long min) {
        Objects.requireNonNull(value, name);
        if (value.toMillis() < min || value.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(name + " out of range: " + value);
        }
    }

    /** A back-off: both at least 1 ms, the maximum not below the first wait. */
    public static void requireBackoff(String name, Duration interval, Duration intervalMax) {
        requireMillis(name + "Interval", interval, 1);
        requireMillis(name + "IntervalMax", intervalMax, 1);
        if (intervalMax.compareTo(interval) < 0) {
            throw new IllegalArgumentException(name + "IntervalMax below " + name + "Interval");
        }
    }
}

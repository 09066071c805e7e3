package io.brine.it;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The system clock plus an offset that a test moves forward: time keeps flowing (timeouts, heartbeats), and a day
 * passes when the test says so.
 */
final class TestClock extends Clock {

    private final AtomicReference<Duration> offset = new AtomicReference<>(Duration.ZERO);

    void advance(Duration by) {
        offset.accumulateAndGet(by, Duration::plus);
    }

    @Override
    public Instant instant() {
        return Instant.now().plus(offset.get());
    }

    @Override
    public long millis() {
        return System.currentTimeMillis() + offset.get().toMillis();
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("a test clock is UTC");
    }
}

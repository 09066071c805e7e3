package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.minion.WarnThrottle.Reason;
import io.brine.protocol.testing.MovableClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class WarnThrottleTest {

    private final MovableClock clock = new MovableClock(Instant.parse("2026-11-25T00:00:00Z"));
    private final WarnThrottle throttle = new WarnThrottle(clock);

    @Test
    void oneLinePerReasonAndIntervalStandingForEveryEventSinceTheLastLine() {
        assertThat(throttle.count(Reason.FORGED_AUTH_REPLY))
                .as("the first is logged at once")
                .isEqualTo(1);
        for (int i = 0; i < 1000; i++) {
            assertThat(throttle.count(Reason.FORGED_AUTH_REPLY)).isZero();
        }
        assertThat(throttle.count(Reason.STALE_PUBLICATION))
                .as("each reason has its own interval")
                .isEqualTo(1);
        clock.advance(WarnThrottle.INTERVAL.minusMillis(1));
        assertThat(throttle.count(Reason.FORGED_AUTH_REPLY)).isZero();
        clock.advance(Duration.ofMillis(1));
        assertThat(throttle.count(Reason.FORGED_AUTH_REPLY))
                .as("this one and the 1,001 not logged")
                .isEqualTo(1002);
        assertThat(throttle.count(Reason.FORGED_AUTH_REPLY)).isZero();
    }
}

package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.testing.MovableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The test scheduler the minion's tests rely on: timers fire in order, each at its own time, when time moves. */
class ManualSchedulerTest {

    private static final Instant T0 = Instant.parse("2025-03-01T10:00:00Z");

    private final MovableClock clock = new MovableClock(T0);
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final List<String> ran = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() {
        scheduler.close();
        assertThat(scheduler.failures()).isEmpty();
    }

    private Runnable record(String name) {
        return () -> ran.add(name + "@" + Duration.between(T0, clock.instant()).toMillis());
    }

    @Test
    void timersFireOnlyWhenTimeMovesPastThemInOrderEachAtItsOwnTime() {
        scheduler.schedule(Duration.ofSeconds(2), record("b"));
        scheduler.schedule(Duration.ofSeconds(1), record("a"));
        scheduler.advance(Duration.ofMillis(999));
        assertThat(ran).isEmpty();
        scheduler.advance(Duration.ofSeconds(5));
        assertThat(ran).containsExactly("a@1000", "b@2000");
        assertThat(clock.instant()).isEqualTo(T0.plusMillis(5999));
    }

    @Test
    void aTimerSetByAFiringOneFiresInTheSameAdvanceWhenDue() {
        scheduler.schedule(Duration.ofSeconds(1), () -> {
            record("first").run();
            scheduler.schedule(Duration.ofSeconds(1), record("second"));
        });
        scheduler.advance(Duration.ofSeconds(3));
        assertThat(ran).containsExactly("first@1000", "second@2000");
    }

    @Test
    void aDueTimerRunsWithoutTimeMovingAndCancelledOnesNever() {
        scheduler.schedule(Duration.ofSeconds(1), record("cancelled")).cancel();
        scheduler.schedule(Duration.ZERO, record("now"));
        scheduler.idle();
        assertThat(ran).containsExactly("now@0");
        scheduler.advance(Duration.ofSeconds(2));
        assertThat(ran).containsExactly("now@0");
    }
}

package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongUnaryOperator;
import org.junit.jupiter.api.Test;

class GrowthWaitTest {

    private static final Duration STALL = Duration.ofSeconds(60);

    /** A clock that the wait's pauses move, and a count that is a function of that clock's seconds. */
    private static GrowthWait.Outcome await(long goal, LongUnaryOperator countAtSecond) {
        AtomicLong nanos = new AtomicLong();
        return GrowthWait.await(
                goal,
                STALL,
                () -> countAtSecond.applyAsLong(TimeUnit.NANOSECONDS.toSeconds(nanos.get())),
                nanos::get,
                millis -> nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis)));
    }

    @Test
    void aCountThatKeepsGrowingIsWaitedForLongAfterAFixedDeadlineWouldHaveEnded() {
        // The TCP run at 10,000 that the old 110 s deadline stopped at 8,153: 74 more open files a second.
        GrowthWait.Outcome outcome = await(10_071, second -> 81 + 74 * second);

        assertThat(outcome.reached()).isTrue();
        assertThat(outcome.count()).isGreaterThanOrEqualTo(10_071);
        assertThat(outcome.waitedNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(135));
        assertThat(outcome.longestStallNanos()).isLessThan(TimeUnit.SECONDS.toNanos(1));
    }

    @Test
    void slowGrowthWithPausesShorterThanTheStallIsStillProgress() {
        // One more open file every 50 s: never a stall of 60 s.
        GrowthWait.Outcome outcome = await(120, second -> 100 + second / 50);

        assertThat(outcome.reached()).isTrue();
        assertThat(outcome.waitedNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(1000));
        assertThat(outcome.longestStallNanos()).isBetween(TimeUnit.SECONDS.toNanos(49), TimeUnit.SECONDS.toNanos(50));
    }

    @Test
    void aCountThatStopsGrowingEndsTheWaitOneStallAfterItsLastNewHighest() {
        GrowthWait.Outcome outcome = await(10_071, second -> Math.min(8_153, 81 + 74 * second));

        assertThat(outcome.reached()).isFalse();
        assertThat(outcome.count()).isEqualTo(8_153);
        assertThat(outcome.highest()).isEqualTo(8_153);
        // 8,153 is reached at 110 s; the wait ends 60 s later.
        assertThat(outcome.waitedNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(110 + 60));
    }

    @Test
    void aCountThatFallsAndClimbsBackToItsHighestIsNotProgress() {
        // 5,000 at 10 s, then connections dropped and made again below and up to it: no new highest.
        GrowthWait.Outcome outcome = await(10_000, second -> second <= 10 ? 500 * second : 4_000 + (second % 3) * 500);

        assertThat(outcome.reached()).isFalse();
        assertThat(outcome.highest()).isEqualTo(5_000);
        assertThat(outcome.waitedNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(10 + 60));
    }

    @Test
    void aCountAlreadyThereIsNotWaitedFor() {
        GrowthWait.Outcome outcome = await(10, second -> 12);

        assertThat(outcome.reached()).isTrue();
        assertThat(outcome.waitedNanos()).isZero();
    }
}

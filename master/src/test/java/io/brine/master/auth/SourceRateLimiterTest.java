package io.brine.master.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.benmanes.caffeine.cache.Ticker;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The unauthenticated path's token bucket at its edges, on a moved clock: the burst and not one more, a token back
 * exactly when the rate has earned it and not a nanosecond before, never more than the burst however long a source
 * was idle, each source its own bucket.
 */
class SourceRateLimiterTest {

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final Ticker ticker = nanos::get;

    @Test
    void aSourceSpendsExactlyItsBurstThenOneTokenPerEarnedInterval() {
        SourceRateLimiter limiter = new SourceRateLimiter(4, 3, 100, ticker);
        for (String source : new String[] {"10.0.0.1", "10.0.0.2"}) {
            for (int i = 0; i < 3; i++) {
                assertThat(limiter.tryAcquire(source))
                        .as("token %d of the burst", i)
                        .isTrue();
            }
            assertThat(limiter.tryAcquire(source)).isFalse();
        }
        assertThat(limiter.tryAcquire("10.0.0.3"))
                .as("another source has its own bucket")
                .isTrue();

        nanos.addAndGet(250_000_000L - 1); // a quarter second at 4/s earns one token: one nanosecond short
        assertThat(limiter.tryAcquire("10.0.0.1")).isFalse();
        nanos.addAndGet(1);
        assertThat(limiter.tryAcquire("10.0.0.2")).isTrue();
        assertThat(limiter.tryAcquire("10.0.0.2")).isFalse();
    }

    @Test
    void pastItsRateASourceGetsItsBurstOfTryLaterAnswersSpreadOverTheRefillThenNothing() {
        SourceRateLimiter limiter = new SourceRateLimiter(2, 4, 100, ticker);
        for (int i = 0; i < 4; i++) {
            assertThat(limiter.tryAcquire("10.0.0.1")).isTrue();
        }
        assertThat(limiter.tryAcquire("10.0.0.1")).isFalse();
        // 2 a second: the first two asked again in 1 s, the next two in 2 s, then none (a fifth would wait longer).
        assertThat(new int[] {
                    limiter.tryLater("10.0.0.1"),
                    limiter.tryLater("10.0.0.1"),
                    limiter.tryLater("10.0.0.1"),
                    limiter.tryLater("10.0.0.1")
                })
                .containsExactly(1, 1, 2, 2);
        assertThat(limiter.tryLater("10.0.0.1")).isEqualTo(-1);
        assertThat(limiter.tryLater("10.0.0.2"))
                .as("another source has its own")
                .isEqualTo(1);

        nanos.addAndGet(500_000_000L); // one earned back of each
        assertThat(limiter.tryLater("10.0.0.1")).isEqualTo(2);
        assertThat(limiter.tryLater("10.0.0.1")).isEqualTo(-1);
        assertThat(limiter.tryAcquire("10.0.0.1")).isTrue();
    }

    @Test
    void aLongIdleSourceGetsItsBurstBackAndNoMore() {
        SourceRateLimiter limiter = new SourceRateLimiter(4, 3, 100, ticker);
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.tryAcquire("10.0.0.1")).isTrue();
        }
        // Refilled after 750 ms; a bucket kept past that (or forgotten and made anew) holds the burst, not more.
        for (long idle : new long[] {750_000_000L, 900_000_000L, 3_600_000_000_000L}) {
            nanos.addAndGet(idle);
            for (int i = 0; i < 3; i++) {
                assertThat(limiter.tryAcquire("10.0.0.1")).isTrue();
            }
            assertThat(limiter.tryAcquire("10.0.0.1"))
                    .as("after %d ns idle", idle)
                    .isFalse();
        }
    }
}

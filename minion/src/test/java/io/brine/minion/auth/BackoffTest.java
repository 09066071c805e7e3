package io.brine.minion.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void doublesUpToTheMaximumAndStartsOverAfterAReset() {
        Backoff backoff = new Backoff(Duration.ofSeconds(10), Duration.ofSeconds(60), () -> 0.0);

        assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(10));
        assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(20));
        assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(40));
        assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(60));
        assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(60));
        backoff.reset();
        assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void aMaximumNotAboveTheWaitMeansTheWaitNeverGrows() {
        Backoff backoff = new Backoff(Duration.ofSeconds(30), Duration.ZERO, () -> 0.0);

        for (int i = 0; i < 5; i++) {
            assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(30));
        }
    }

    @Test
    void everyWaitIsStretchedByUpToAQuarter() {
        assertThat(new Backoff(Duration.ofSeconds(30), Duration.ZERO, () -> 0.999).next())
                .isBetween(Duration.ofMillis(37_400), Duration.ofMillis(37_500));
        assertThat(new Backoff(Duration.ofSeconds(8), Duration.ofSeconds(60), () -> 0.5).next())
                .isEqualTo(Duration.ofSeconds(9));
    }
}

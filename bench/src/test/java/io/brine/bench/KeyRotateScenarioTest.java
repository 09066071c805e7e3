package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class KeyRotateScenarioTest {

    @Test
    void aNegativeWholeMasterFigureDoesNotMeetTheTargetWhenTheAuthWorkersSpentMore() {
        // The TCP run at 10,000: the pings' rate taken off came out above the window's, the auth workers 2.77.
        assertThat(KeyRotateScenario.met(0, 10_000, 10_000, -0.12, 2.77)).isFalse();
    }

    @Test
    void theTargetIsMetOnlyWithEveryFigureWithinIt() {
        assertThat(KeyRotateScenario.met(0, 1_000, 1_000, 0.9, 0.95)).isTrue();
        assertThat(KeyRotateScenario.met(0, 1_000, 1_000, 1.2, 0.95)).isFalse();
        assertThat(KeyRotateScenario.met(1, 1_000, 1_000, 0.9, 0.95)).isFalse();
        assertThat(KeyRotateScenario.met(0, 999, 1_000, 0.9, 0.95)).isFalse();
    }
}

package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ApiScenarioTest {

    @Test
    void theComparisonTakesEachSidesPercentilesOverItsRoundsAndTheirRatio() {
        // Microseconds; 20 rounds each: p50 is the 10th smallest, p99 the largest.
        List<Long> brine = new ArrayList<>();
        List<Long> api = new ArrayList<>();
        for (long i = 20; i >= 1; i--) {
            brine.add(i * 10_000);
            api.add(i * 15_000);
        }
        brine.set(0, 400_000L);
        ApiScenario.Comparison comparison = ApiScenario.Comparison.of(brine, api);
        assertThat(comparison.brineP50Ms()).isEqualTo(100.0);
        assertThat(comparison.brineP99Ms()).isEqualTo(400.0);
        assertThat(comparison.apiP50Ms()).isEqualTo(150.0);
        assertThat(comparison.apiP99Ms()).isEqualTo(300.0);
        assertThat(comparison.ratioP50()).isEqualTo(1.5);
        assertThat(comparison.ratioP99()).isEqualTo(0.75);
    }

    @Test
    void deliveryCountsWhatEachSubscriberMissedOfEachJobAndADuplicateDoesNotMakeUpALoss() {
        Map<String, Integer> emitted = new LinkedHashMap<>();
        emitted.put("j1", 1001);
        emitted.put("j2", 1001);
        ApiScenario.Delivery delivery = ApiScenario.Delivery.of(
                List.of(Map.of("j1", 1001, "j2", 1001), Map.of("j1", 1000, "j2", 1002), Map.of("j2", 1001)), emitted);
        assertThat(delivery.subscribers()).isEqualTo(3);
        assertThat(delivery.perSubscriberEmitted()).isEqualTo(2002);
        assertThat(delivery.min()).isEqualTo(1001);
        assertThat(delivery.max()).isEqualTo(2002);
        assertThat(delivery.complete()).isEqualTo(1);
        assertThat(delivery.lost()).isEqualTo(1 + 1001);
        assertThat(delivery.delivered()).isEqualTo(2002 + 2002 + 1001);

        ApiScenario.Delivery none = ApiScenario.Delivery.of(List.of(), emitted);
        assertThat(none.min()).isZero();
        assertThat(none.lost()).isZero();
    }

    @Test
    void anEventsJobIsReadFromItsTagAndOtherEventsHaveNone() {
        assertThat(ApiScenario.jobOf("{\"tag\":\"brine/job/20261128234500123456/ret/bench-1\",\"time_ms\":1}"))
                .contains("20261128234500123456");
        assertThat(ApiScenario.jobOf("{\"tag\":\"brine/job/20261128234500123456/new\"}"))
                .contains("20261128234500123456");
        assertThat(ApiScenario.jobOf("{\"tag\":\"brine/auth/accepted\"}")).isEmpty();
        assertThat(ApiScenario.jobOf("{\"tag\":\"brine/job/unended")).isEqualTo(Optional.empty());
    }

    @Test
    void theMedianOfTheRoundsIsTheLowerMiddleAndNothingIsZero() {
        assertThat(ApiScenario.median(List.of(30L, 10L, 20L, 40L))).isEqualTo(20.0);
        assertThat(ApiScenario.median(List.of())).isZero();
    }

    @Test
    void theMastersApiSectionIsOnLoopbackWithThePerTokenRateLifted() {
        assertThat(ApiScenario.yaml(8443))
                .contains("api:\n  interface: 127.0.0.1\n  port: 8443\n", "  requests_per_second: 100000\n");
    }
}

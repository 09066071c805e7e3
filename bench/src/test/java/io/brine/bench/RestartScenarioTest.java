package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RestartScenarioTest {

    private static final String EXPOSITION = String.join(
            "\n",
            "# HELP brine_resumptions_total Sessions resumed with a ticket, without an RSA operation",
            "# TYPE brine_resumptions_total counter",
            "brine_resumptions_total 998.0",
            "brine_resumptions_refused_total 2.0",
            "brine_auth_answers_total{outcome=\"accepted\",rule=\"auto_accept\",} 2.0",
            "brine_auth_answers_total{outcome=\"accepted\",rule=\"accepted_key\",} 1.0",
            "brine_auth_answers_total{outcome=\"pending\",rule=\"none\",} 7.0",
            "");

    @Test
    void aCounterIsReadByItsExactNameAndSummedOverTheLabelsAsked() {
        MetricsScrape scrape = new MetricsScrape(EXPOSITION);

        assertThat(scrape.sum("brine_resumptions_total", "")).isEqualTo(998);
        assertThat(scrape.sum("brine_resumptions_refused_total", "")).isEqualTo(2);
        assertThat(scrape.sum("brine_auth_answers_total", "outcome=\"accepted\""))
                .isEqualTo(3);
        assertThat(scrape.sum("brine_auth_answers_total", "")).isEqualTo(10);
    }

    @Test
    void aCounterNotYetIncrementedIsZero() {
        assertThat(new MetricsScrape(EXPOSITION).sum("brine_resumption_tickets_total", ""))
                .isZero();
        assertThat(new MetricsScrape("").sum("brine_resumptions_total", "")).isZero();
    }

    @Test
    void theCpuPerMinionIsInPrivateOperationsAndTheTargetAppliesFromNineThousand() {
        RestartScenario.Recovery thousand =
                new RestartScenario.Recovery("resuming", 1000, 4000, 2000, 3000, 500, 1000, 0, 0, 0, 1, 0);
        assertThat(thousand.cpuPerMinionMs()).isEqualTo(0.5);
        assertThat(thousand.cpuPerMinionInPrivateOps(2.0)).isEqualTo(0.25);
        assertThat(thousand.met(2.0)).isNull();
        RestartScenario.Recovery compiling =
                new RestartScenario.Recovery("resuming", 1000, 4000, 2000, 3000, 500, 1000, 0, 0, 0, 1, 300);
        assertThat(compiling.cpuPerMinionInPrivateOpsWithoutJit(2.0)).isEqualTo(0.1);

        RestartScenario.Recovery fast =
                new RestartScenario.Recovery("resuming", 10_000, 4000, 10_000, 3000, 2000, 10_000, 0, 0, 0, 1, 0);
        assertThat(fast.met(2.0)).isTrue(); // 0.1 private ops per minion and 10 s: both at the bound
        RestartScenario.Recovery slow =
                new RestartScenario.Recovery("resuming", 10_000, 4000, 10_001, 3000, 2000, 10_000, 0, 0, 0, 1, 0);
        assertThat(slow.met(2.0)).isFalse();
        RestartScenario.Recovery costly =
                new RestartScenario.Recovery("resuming", 10_000, 4000, 10_000, 3000, 2001, 10_000, 0, 0, 0, 1, 0);
        assertThat(costly.met(2.0)).isFalse();
    }

    @Test
    void theRatiosAreFullAuthOverResuming() {
        RestartScenario.Recovery resumed =
                new RestartScenario.Recovery("resuming", 1000, 4000, 500, 3000, 200, 1000, 0, 0, 0, 1, 0);
        RestartScenario.Recovery full =
                new RestartScenario.Recovery("full auth", 1000, 4000, 5000, 3000, 3000, 0, 1000, 0, 0, 1, 0);

        assertThat(RestartScenario.ratios(full, resumed))
                .containsEntry("served_full_over_resumed", 10.0)
                .containsEntry("cpu_full_over_resumed", 15.0);
    }

    @Test
    void aMinionIsServedByTheFirstRoundItAnsweredAndTheRestartWhenTheLastOneFirstAnswered() {
        RestartScenario.FirstReturns returns = new RestartScenario.FirstReturns();
        // Round 1 ends with m3 missing; round 2 is published to all three again.
        returns.note("m1", 100);
        returns.note("m2", 250);
        returns.note("m1", 900);
        returns.note("m2", 950);
        assertThat(returns.count()).isEqualTo(2);
        returns.note("m3", 700);

        assertThat(returns.count()).isEqualTo(3);
        assertThat(returns.last()).isEqualTo(700);
    }
}

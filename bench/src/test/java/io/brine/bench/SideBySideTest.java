package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SideBySideTest {

    private static final Map<String, Object> BRINE_RUN = Map.of(
            "minions",
            1000,
            "scenarios",
            Map.of(
                    "auth", Map.of("auths_per_s", 2000.0, "master_cpu_ms_per_auth", 2.5),
                    "ping", Map.of("last_ms", 120.0),
                    "memory",
                            Map.of(
                                    "master_rss_idle_mib",
                                    100.0,
                                    "master_rss_connected_mib",
                                    150.0,
                                    "master_idle_cpu_pct_connected",
                                    0.5)));

    @Test
    void brineFiguresAreReadFromABenchRunsJsonWithRssGrowthPerMinion() {
        SideBySide.MasterFigures figures = SideBySide.brineFigures(BRINE_RUN);

        assertThat(figures).isEqualTo(new SideBySide.MasterFigures(2000, 2.5, 120, 51.2, 0.5));
    }

    @Test
    void aFigureMissingFromTheJsonIsNotMeasuredRatherThanZero() {
        SideBySide.MasterFigures figures = SideBySide.brineFigures(Map.of("minions", 10, "scenarios", Map.of()));

        assertThat(figures.authsPerSecond()).isNaN();
        assertThat(figures.rssKibPerMinion()).isNaN();
    }

    @Test
    void everyRatioSaysByHowMuchBrineDoesBetter() {
        SideBySide.MasterFigures brine = new SideBySide.MasterFigures(2000, 2.5, 120, 50, 0.5);
        SideBySide.MasterFigures salt = new SideBySide.MasterFigures(40, 50, 2400, 400, 5);

        List<SideBySide.Row> rows = SideBySide.rows(brine, salt);

        // Without the state scenario, no state rows.
        assertThat(rows).extracting(SideBySide.Row::advantage).containsExactly(50.0, 20.0, 20.0, 8.0, 10.0);
    }

    @Test
    void aRunWithTheStateScenarioComparesStateApplysLastReturnAndCpuPerMinion() {
        Map<String, Object> json = Map.of(
                "minions",
                1000,
                "scenarios",
                Map.of("state", Map.of("last_ms", 9000.0, "master_cpu_ms_per_minion", 12.5)));
        SideBySide.MasterFigures brine = SideBySide.brineFigures(json);
        SideBySide.MasterFigures salt = new SideBySide.MasterFigures(40, 50, 2400, 400, 5, 45000, 100);

        List<SideBySide.Row> rows = SideBySide.rows(brine, salt);

        assertThat(rows)
                .extracting(SideBySide.Row::name)
                .endsWith("state.apply last return", "master CPU per state.apply");
        assertThat(rows.subList(5, 7)).extracting(SideBySide.Row::advantage).containsExactly(5.0, 8.0);
    }

    @Test
    void aRatioWithAZeroOrUnmeasuredSideIsNotAvailable() {
        assertThat(SideBySide.ratio(5, 0)).isNaN();
        assertThat(SideBySide.ratio(0, 5)).isNaN();
        assertThat(SideBySide.ratio(Double.NaN, 5)).isNaN();
        assertThat(SideBySide.ratio(Double.POSITIVE_INFINITY, 5)).isNaN();
        assertThat(SideBySide.ratio(6, 3)).isEqualTo(2.0);
    }

    @Test
    void theTableAndTheJsonShowAnUnavailableRatioAsSuch() {
        List<SideBySide.Row> rows = SideBySide.rows(
                new SideBySide.MasterFigures(2000, 2.5, 120, 50, 0),
                new SideBySide.MasterFigures(40, 50, 2400, 400, 5));

        assertThat(SideBySide.lines(rows))
                .hasSize(6)
                .last()
                .asString()
                .startsWith("master CPU idle, minions connected (% of a core)")
                .endsWith("n/a");
        assertThat(SideBySide.lines(rows).get(1)).contains("2,000").endsWith("50.0");
        assertThat(SideBySide.json(rows).get(4))
                .containsEntry("brine_advantage", null)
                .containsEntry("salt", 5.0);
    }

    @Test
    void theRestartRowsCompareBothOfBrinesRestartsWithTheSaltMasters() {
        Map<String, Object> brineRun = Map.of(
                "scenarios",
                Map.of(
                        "restart",
                        Map.of(
                                "resumed", Map.of("served_ms", 2000.0, "master_cpu_ms", 500L),
                                "full_auth", Map.of("served_ms", 8000.0, "master_cpu_ms", 4000L))));
        Map<String, Object> salt = Map.of("restart", Map.of("served_ms", 40000.0, "master_cpu_ms", 20000L));

        List<SideBySide.Row> rows = SideBySide.restartRows(brineRun, salt);

        assertThat(rows)
                .extracting(SideBySide.Row::name)
                .containsExactly(
                        "restart to every test.ping, brine resuming", "restart to every test.ping, brine full auth",
                        "master CPU for the restart, brine resuming", "master CPU for the restart, brine full auth");
        assertThat(rows).extracting(SideBySide.Row::advantage).containsExactly(20.0, 5.0, 40.0, 5.0);
        assertThat(SideBySide.restartRows(Map.of(), salt))
                .extracting(SideBySide.Row::advantage)
                .allMatch(advantage -> advantage.isNaN());
    }
}

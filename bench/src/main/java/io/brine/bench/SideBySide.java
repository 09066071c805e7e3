package io.brine.bench;

import static io.brine.bench.Figures.round;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * brine's master and a real salt-master measured on the same swarm in one run ({@code brine-bench --against salt}):
 * the figures of each, and each ratio oriented so that above 1 means brine does better by that factor.
 */
final class SideBySide {

    /** One master's figures; a figure that was not measured is NaN (the state ones without scenario state). */
    record MasterFigures(
            double authsPerSecond,
            double cpuMsPerAuth,
            double pingLastMs,
            double rssKibPerMinion,
            double idleCpuPct,
            double stateLastMs,
            double stateCpuMsPerMinion) {

        MasterFigures(
                double authsPerSecond,
                double cpuMsPerAuth,
                double pingLastMs,
                double rssKibPerMinion,
                double idleCpuPct) {
            this(authsPerSecond, cpuMsPerAuth, pingLastMs, rssKibPerMinion, idleCpuPct, Double.NaN, Double.NaN);
        }
    }

    /** One compared figure: its name, unit, both values, and brine's advantage (NaN when it cannot be formed). */
    record Row(String name, String unit, double brine, double salt, double advantage) {}

    private SideBySide() {}

    /**
     * brine's figures out of a {@link Bench} run's JSON ({@code scenarios.auth}, {@code scenarios.ping},
     * {@code scenarios.memory}); RSS per minion is its growth from idle to every minion connected, as for Salt.
     */
    static MasterFigures brineFigures(Map<String, Object> json) {
        Map<String, Object> scenarios = map(json.get("scenarios"));
        Map<String, Object> auth = map(scenarios.get("auth"));
        Map<String, Object> ping = map(scenarios.get("ping"));
        Map<String, Object> memory = map(scenarios.get("memory"));
        Map<String, Object> state = map(scenarios.get("state"));
        double minions = number(json.get("minions"));
        double rssPerMinion =
                (number(memory.get("master_rss_connected_mib")) - number(memory.get("master_rss_idle_mib")))
                        * 1024
                        / minions;
        return new MasterFigures(
                number(auth.get("auths_per_s")),
                number(auth.get("master_cpu_ms_per_auth")),
                number(ping.get("last_ms")),
                rssPerMinion,
                number(memory.get("master_idle_cpu_pct_connected")),
                number(state.get("last_ms")),
                number(state.get("master_cpu_ms_per_minion")));
    }

    /** The compared rows: higher is better for auths/s, lower for everything else. */
    static List<Row> rows(MasterFigures brine, MasterFigures salt) {
        List<Row> rows = new ArrayList<>();
        rows.add(new Row(
                "first auths",
                "/s",
                brine.authsPerSecond(),
                salt.authsPerSecond(),
                ratio(brine.authsPerSecond(), salt.authsPerSecond())));
        rows.add(new Row(
                "master CPU per first auth",
                "ms",
                brine.cpuMsPerAuth(),
                salt.cpuMsPerAuth(),
                ratio(salt.cpuMsPerAuth(), brine.cpuMsPerAuth())));
        rows.add(new Row(
                "test.ping last return",
                "ms",
                brine.pingLastMs(),
                salt.pingLastMs(),
                ratio(salt.pingLastMs(), brine.pingLastMs())));
        rows.add(new Row(
                "master memory per minion",
                "KiB",
                brine.rssKibPerMinion(),
                salt.rssKibPerMinion(),
                ratio(salt.rssKibPerMinion(), brine.rssKibPerMinion())));
        rows.add(new Row(
                "master CPU idle, minions connected",
                "% of a core",
                brine.idleCpuPct(),
                salt.idleCpuPct(),
                ratio(salt.idleCpuPct(), brine.idleCpuPct())));
        if (!Double.isNaN(brine.stateLastMs()) || !Double.isNaN(salt.stateLastMs())) {
            rows.add(new Row(
                    "state.apply last return",
                    "ms",
                    brine.stateLastMs(),
                    salt.stateLastMs(),
                    ratio(salt.stateLastMs(), brine.stateLastMs())));
            rows.add(new Row(
                    "master CPU per state.apply",
                    "ms",
                    brine.stateCpuMsPerMinion(),
                    salt.stateCpuMsPerMinion(),
                    ratio(salt.stateCpuMsPerMinion(), brine.stateCpuMsPerMinion())));
        }
        return rows;
    }

    /**
     * The restart rows: from the new master listening until every minion answered a test.ping, and the master's CPU
     * over it; brine's minions resuming and authenticating in full ({@code scenarios.restart} of brine's restart run)
     * against the salt-master's ({@code restart} of its scenarios).
     */
    static List<Row> restartRows(Map<String, Object> brineRun, Map<String, Object> saltScenarios) {
        Map<String, Object> brine = map(map(brineRun.get("scenarios")).get("restart"));
        Map<String, Object> salt = map(saltScenarios.get("restart"));
        List<Row> rows = new ArrayList<>();
        for (String[] figure : List.of(
                new String[] {"served_ms", "restart to every test.ping"},
                new String[] {"master_cpu_ms", "master CPU for the restart"})) {
            for (String mode : List.of("resumed", "full_auth")) {
                double brineValue = number(map(brine.get(mode)).get(figure[0]));
                double saltValue = number(salt.get(figure[0]));
                rows.add(new Row(
                        figure[1] + ", brine " + (mode.equals("resumed") ? "resuming" : "full auth"),
                        "ms",
                        brineValue,
                        saltValue,
                        ratio(saltValue, brineValue)));
            }
        }
        return rows;
    }

    /** {@code better / worse}; NaN unless both are measured and positive (a zero is below what /proc resolves). */
    static double ratio(double numerator, double denominator) {
        if (!(numerator > 0) || !(denominator > 0) || Double.isInfinite(numerator) || Double.isInfinite(denominator)) {
            return Double.NaN;
        }
        return numerator / denominator;
    }

    /** The table as printed: one line per row. */
    static List<String> lines(List<Row> rows) {
        List<String> lines = new ArrayList<>();
        lines.add(String.format("%-48s %14s %14s %10s", "side by side", "brine", "salt-master", "brine x"));
        for (Row row : rows) {
            lines.add(String.format(
                    "%-48s %14s %14s %10s",
                    row.name() + " (" + row.unit() + ")",
                    value(row.brine()),
                    value(row.salt()),
                    Double.isNaN(row.advantage()) ? "n/a" : String.format("%.1f", row.advantage())));
        }
        return lines;
    }

    /** The rows for the JSON. */
    static List<Map<String, Object>> json(List<Row> rows) {
        List<Map<String, Object>> json = new ArrayList<>();
        for (Row row : rows) {
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("figure", row.name());
            figures.put("unit", row.unit());
            figures.put("brine", Double.isNaN(row.brine()) ? null : round(row.brine(), 3));
            figures.put("salt", Double.isNaN(row.salt()) ? null : round(row.salt(), 3));
            figures.put("brine_advantage", Double.isNaN(row.advantage()) ? null : round(row.advantage(), 2));
            json.add(figures);
        }
        return json;
    }

    private static String value(double value) {
        return Double.isNaN(value)
                ? "n/a"
                : value >= 100 ? String.format("%,.0f", value) : String.format("%.2f", value);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        return value instanceof Map<?, ?> map ? (Map<String, Object>) map : Map.of();
    }

    private static double number(Object value) {
        return value instanceof Number number ? number.doubleValue() : Double.NaN;
    }
}

package io.brine.bench;

import static io.brine.bench.Figures.round;

import io.brine.client.BrineClient;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code state.apply} to every simulated Salt minion ({@code --protocol salt}, scenario {@code state}), round after
 * round: each minion fetches what a highstate fetches from the master's file server ({@link StateRun}: the tree of
 * {@link StateRun#TREE_FILES} files written for the run, served from {@code file_roots}) and returns. Measured per
 * round: when the median, the 99th percentile and the last return arrive, the master's CPU per minion, the file
 * server requests answered a second up to the last return, the file bytes served; after the rounds, the master's
 * memory. The same rounds run against brine's master (BrineClient publishes, returns counted as the client receives
 * them) and against a real salt-master ({@link SaltPing}: returns counted in its job cache).
 */
final class StateScenario {

    /** One round: the returns and the master's CPU (from a {@link PingScenario.PingRound}), the runs' counts. */
    record Round(
            double p50Ms,
            double p99Ms,
            double lastMs,
            int returned,
            int missing,
            long masterCpuMs,
            Swarm.StateCounts counts) {

        double requestsPerSecond() {
            return lastMs > 0 ? counts.requests() / (lastMs / 1000) : 0;
        }

        Map<String, Object> figures() {
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("p50_ms", round(p50Ms, 1));
            figures.put("p99_ms", round(p99Ms, 1));
            figures.put("last_ms", round(lastMs, 1));
            figures.put("returned", returned);
            figures.put("missing", missing);
            figures.put("master_cpu_ms", masterCpuMs);
            figures.put("master_cpu_ms_per_minion", round(masterCpuMs / (double) Math.max(1, returned), 2));
            figures.put("fileserver_requests", counts.requests());
            figures.put("fileserver_requests_per_s", round(requestsPerSecond(), 0));
            figures.put("bytes_served", counts.bytes());
            figures.put("runs_failed", counts.failed());
            if (!counts.failure().isEmpty()) {
                figures.put("a_failure", counts.failure());
            }
            return figures;
        }
    }

    /** One round against the master measured: publishes {@code state.apply} and waits for the returns. */
    interface RoundRunner {
        Round round(Duration timeout) throws Exception;
    }

    private StateScenario() {}

    /** The master.yaml lines that serve {@code root} as {@code base}. */
    static String yaml(Path root) {
        return "# The state scenario's tree (brine-bench --scenarios state).\nfile_roots:\n  base:\n    - " + root
                + "\n";
    }

    /** A round of brine's master: {@code state.apply} published by the run's client. */
    static Round brineRound(PingScenario ping, BrineClient client, Swarm swarm, Duration timeout) throws Exception {
        swarm.resetDeliveries();
        PingScenario.PingRound round = ping.pingRound(client, StateRun.FUNCTION, timeout);
        return new Round(
                round.p50Ms(),
                round.p99Ms(),
                round.lastMs(),
                round.returned(),
                round.missing(),
                round.masterCpuMs(),
                swarm.stateCounts());
    }

    /** A round of a salt-master: {@code state.apply} published as {@code salt 'bench-*' state.apply} does. */
    static Round saltRound(SaltPing salt, int minions, Swarm swarm, Duration timeout) throws Exception {
        swarm.resetDeliveries();
        SaltPing.Round round = salt.publish(Bench.PREFIX + "*", StateRun.FUNCTION, minions, timeout);
        List<Double> returns = round.returnsMs();
        double p50 = returns.isEmpty() ? -1 : returns.get(returns.size() / 2);
        double p99 = returns.isEmpty() ? -1 : returns.get(Math.max(0, (int) Math.ceil(0.99 * returns.size()) - 1));
        return new Round(
                p50, p99, round.lastMs(), returns.size(), round.missing(), round.masterCpuMs(), swarm.stateCounts());
    }

    /**
     * A warm-up round, then {@code rounds} measured ones; puts the median round by its last return (with every
     * round, and the master's memory after them) in {@code scenarios} as {@code state} and prints its line.
     * {@code who} names the master in the line. Fails when the median round misses a return or a run failed.
     */
    static Map<String, Object> run(BenchRun run, String who, int rounds, RoundRunner runner) throws Exception {
        int minions = run.minions();
        // Twenty requests a minion, one after the other: at 1,000 minions on 2 busy cores a salt-master took minutes.
        Duration timeout = Duration.ofSeconds(120 + minions / 4);
        Round warm = runner.round(timeout);
        System.out.printf(
                "ready    warm-up state.apply: %d of %d returned (last after %.0f ms)%n",
                warm.returned(), minions, warm.lastMs());
        List<Round> measured = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            measured.add(runner.round(timeout));
            MasterProcess.sleep(500);
        }
        List<Round> byLast = new ArrayList<>(measured);
        byLast.sort(Comparator.comparingDouble(r -> r.missing() > 0 ? Double.MAX_VALUE : r.lastMs()));
        Round median = byLast.get((byLast.size() - 1) / 2);
        long memoryKib = run.master().rssKib();
        Map<String, Object> figures = median.figures();
        figures.put(
                "bytes_served_per_minion", round(median.counts().bytes() / (double) Math.max(1, median.returned()), 0));
        figures.put(
                "fileserver_requests_per_minion",
                round(median.counts().requests() / (double) Math.max(1, median.returned()), 1));
        figures.put("master_memory_mib_after", round(memoryKib / 1024.0, 1));
        figures.put(
                "master_memory_is",
                run.master().salt ? "PSS of the salt-master's processes" : "RSS of the master's JVM");
        figures.put(
                "tree",
                StateRun.TREE_FILES + " files; each run fetches top.sls, " + StateRun.STATE + " and "
                        + StateRun.MANAGED.size() + " managed files ("
                        + StateRun.MANAGED.values().stream()
                                .mapToInt(Integer::intValue)
                                .sum() + " bytes)");
        figures.put(
                "reported_round",
                "the median of " + measured.size() + " rounds by last_ms, after a warm-up " + "round");
        figures.put("rounds", measured.stream().map(Round::figures).toList());
        figures.put("load_average", Machine.loadAverage());
        run.scenarios().put("state", figures);
        System.out.printf(
                "state    state.apply on %,d minions (%s): p50 %.0f ms, p99 %.0f ms, last %.0f ms%s; master "
                        + "CPU %.2f ms per minion; %,d file server requests (%.0f/s), %,d bytes served; master memory "
                        + "after %.0f MiB (median of %d rounds)%n",
                minions,
                who,
                median.p50Ms(),
                median.p99Ms(),
                median.lastMs(),
                median.missing() > 0 ? " (" + median.missing() + " missing)" : "",
                median.masterCpuMs() / (double) Math.max(1, median.returned()),
                median.counts().requests(),
                median.requestsPerSecond(),
                median.counts().bytes(),
                memoryKib / 1024.0,
                measured.size());
        if (median.counts().failed() > 0) {
            throw new IOException(median.counts().failed() + " state runs failed against " + who + ", for example: "
                    + median.counts().failure());
        }
        if (median.missing() > 0) {
            throw new IOException(median.missing() + " minions did not return state.apply to " + who);
        }
        return figures;
    }
}

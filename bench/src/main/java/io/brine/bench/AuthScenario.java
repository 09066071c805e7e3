package io.brine.bench;

import static io.brine.bench.Figures.round;
import static io.brine.bench.Figures.verdict;

import io.brine.bench.BenchMain.Scenario;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every minion authenticates with a new key (the measured, profiled round), unwraps its session key, and later
 * authenticates again with the key the master already holds. Runs always: the other scenarios need accepted minions.
 */
final class AuthScenario {

    /** Requests without an answer at once, over all workers: under the master's auth queue (8,192). */
    private static final int AUTH_WINDOW = 2048;
    /** A minion with no answer this long asks again, as a real one does after auth_timeout (60 s). */
    private static final long AUTH_TIMEOUT_MS = 60_000;
    /** Issue 26's target for a first auth on brine's master: master CPU per auth in private ops. */
    static final double TARGET_PRIVATE_OPS = 1.5;

    private final BenchRun run;
    private final int minions;
    private final RsaLimits limits;

    AuthScenario(BenchRun run) {
        this.run = run;
        this.minions = run.minions();
        this.limits = run.limits();
    }

    /** The first auth of every minion, then the unwrap of their session keys. */
    void auth() throws IOException {
        Map<String, Object> figures = authRound(true);
        boolean brine = !run.master().salt;
        if (brine) {
            double ratio = (double) figures.get("master_cpu_ms_per_auth") / limits.privateOpMillis();
            figures.put("target_master_cpu_per_auth_in_private_ops", TARGET_PRIVATE_OPS);
            figures.put("met", ratio <= TARGET_PRIVATE_OPS);
        }
        run.scenarios().put("auth", figures);
        System.out.println(line(minions, figures, limits, brine));
        System.out.println(run.profiler().cpuLine(cpuByThread(figures)));
        long[] unwrapped = unwrap();
        long presignMillis = run.swarm().presignMillis();
        figures.put("swarm_presign_ms", presignMillis);
        figures.put("swarm_unwrap_ms", unwrapped[1]);
        double endToEnd = ((Number) figures.get("wall_ms")).doubleValue() + presignMillis + unwrapped[1];
        figures.put("auths_per_s_with_swarm_crypto_in_window", round(minions / (endToEnd / 1000), 1));
        requireUnwrapped(unwrapped);
    }

    /**
     * Every minion authenticates again with the key the master already holds, as after a master restart: no key
     * store write, so this is the auth path's own cost, with the code compiled. With {@code --auth-flood-sources},
     * beside a hostile flood ({@link AuthFlood}).
     */
    void reauth() throws IOException {
        for (WorkerProcess worker : run.swarm().workers()) {
            worker.command("reset-sessions", Duration.ofMinutes(1));
        }
        run.swarm().presign();
        int sources = run.options().authFloodSources();
        AuthFlood flood = null;
        long floodCpu0 = run.master().cpuMillis();
        long floodStarted = System.nanoTime();
        if (sources > 0) {
            flood = AuthFlood.start(run.master().tcpPort, sources);
            // The flood's requests reach the master's queues before the minions ask.
            MasterProcess.sleep(1000);
        }
        Map<String, Object> again;
        long[] flooded = null;
        try {
            again = authRound(false);
        } finally {
            if (flood != null) {
                try {
                    flooded = flood.stop();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                flood.close();
            }
        }
        double floodSeconds = (System.nanoTime() - floodStarted) / 1e9;
        long floodCpu = run.master().cpuMillis() - floodCpu0;
        List<Double> waits = new ArrayList<>();
        for (String answer : run.swarm().all("auth-waits", "auth-waits", Duration.ofMinutes(1))) {
            String[] words = answer.split(" ");
            for (int i = 1; i < words.length; i++) {
                waits.add(Double.parseDouble(words[i]));
            }
        }
        Collections.sort(waits);
        double median = waits.isEmpty() ? 0 : waits.get(waits.size() / 2);
        double worst = waits.isEmpty() ? 0 : waits.get(waits.size() - 1);
        again.put("wait_median_ms", round(median, 1));
        again.put("wait_worst_ms", round(worst, 1));
        again.put(
                "waits_over_auth_timeout",
                waits.stream().filter(w -> w > AUTH_TIMEOUT_MS).count());
        if (flooded != null) {
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("sources", sources);
            figures.put("per_source_per_s", AuthFlood.PER_SOURCE_PER_SECOND);
            figures.put("seconds", round(floodSeconds, 1));
            figures.put("requests", flooded[0]);
            figures.put("answered", flooded[1]);
            figures.put("send_failures", flooded[2]);
            figures.put("master_cpu_ms", floodCpu);
            again.put("flood", figures);
            System.out.printf(
                    "flood    %d sources x %d auth requests/s (half not signed by their key, half an "
                            + "unusable key) for %.1f s: %,d sent, %,d answered (%.1f/s), %d send failures; master CPU %.2f "
                            + "cores over the flood%n",
                    sources,
                    AuthFlood.PER_SOURCE_PER_SECOND,
                    floodSeconds,
                    flooded[0],
                    flooded[1],
                    flooded[1] / floodSeconds,
                    flooded[2],
                    floodCpu / 1000.0 / floodSeconds);
        }
        System.out.printf(
                "re-auth  waits from the first request to acceptance: median %.1f ms, worst %.1f ms; %d "
                        + "over auth_timeout (%d s) [%s]%n",
                median,
                worst,
                (long) again.get("waits_over_auth_timeout"),
                AUTH_TIMEOUT_MS / 1000,
                verdict((long) again.get("waits_over_auth_timeout") == 0));
        requireUnwrapped(unwrap());
        @SuppressWarnings("unchecked")
        Map<String, Object> auth = (Map<String, Object>) run.scenarios().get("auth");
        auth.put("reauth", again);
        double cpuPerAuth = (double) again.get("master_cpu_ms_per_auth");
        System.out.printf(
                "re-auth  %,d known minions authenticated again in %.2f s: %.0f auths/s; master CPU %.2f "
                        + "ms per auth = %.2f private ops (%.2f without the JIT compiler)%n",
                minions,
                (double) again.get("wall_ms") / 1000,
                (double) again.get("auths_per_s"),
                cpuPerAuth,
                cpuPerAuth / limits.privateOpMillis(),
                (double) again.get("master_cpu_ms_per_auth_without_jit") / limits.privateOpMillis());
        System.out.println(run.profiler().cpuLine(cpuByThread(again)));
    }

    /** One auth round of every minion; figures as for the JSON. */
    Map<String, Object> authRound(boolean profiled) throws IOException {
        MasterProcess master = run.master();
        Swarm swarm = run.swarm();
        Map<String, Object> figures = new LinkedHashMap<>();
        if (profiled) {
            run.profiler().start(Scenario.AUTH);
        }
        Map<String, Long> threads0 = run.profiler().threads();
        long cpu0 = master.cpuMillis();
        long t0 = System.nanoTime();
        int window = Math.max(1, AUTH_WINDOW / swarm.size());
        // A worker answers once it has sent its window, each request signed then unless presigned (a restart's full
        // auth round is not): 30 s plus 4 of this run's private ops per request, for a machine loaded meanwhile.
        swarm.all(
                "auth " + window + " " + AUTH_TIMEOUT_MS,
                "auth",
                Duration.ofSeconds(30)
                        .plusMillis((long) (4 * window * run.limits().privateOpMillis())));
        long last = 0;
        long first = Long.MAX_VALUE;
        int retries = 0;
        Duration timeout = Duration.ofSeconds(120 + minions / 20);
        long deadline = System.nanoTime() + timeout.toNanos();
        for (WorkerProcess worker : swarm.workers()) {
            String event = null;
            while (event == null && System.nanoTime() < deadline) {
                event = worker.event(Duration.ofSeconds(1));
            }
            if (event == null) {
                throw new IOException(
                        "auth: not every minion was accepted within " + timeout.toSeconds() + " s" + swarm.status());
            }
            String[] words = event.split(" ");
            first = Math.min(first, worker.toLocal(Long.parseLong(words[3])));
            last = Math.max(last, worker.toLocal(Long.parseLong(words[4])));
            retries += Integer.parseInt(words[5]);
        }
        long cpu1 = master.cpuMillis();
        Map<String, Object> byThread = run.profiler().threadCpuSince(threads0);
        if (profiled) {
            run.profiler().stop(Scenario.AUTH);
        }
        long jit = Profiler.jitMillis(byThread);
        double wallMs = (last - t0) / 1e6;
        double cpuPerAuth = (cpu1 - cpu0) / (double) minions;
        double authsPerSecond = minions / (wallMs / 1000);
        figures.put("minions", minions);
        figures.put("wall_ms", round(wallMs, 1));
        figures.put("first_accepted_ms", round((first - t0) / 1e6, 1));
        figures.put("auths_per_s", round(authsPerSecond, 1));
        figures.put("master_cpu_ms", cpu1 - cpu0);
        figures.put("master_cpu_ms_per_auth", round(cpuPerAuth, 3));
        figures.put("master_cpu_per_auth_in_private_ops", round(cpuPerAuth / limits.privateOpMillis(), 3));
        figures.put("master_jit_cpu_ms", jit);
        figures.put("master_cpu_ms_per_auth_without_jit", round((cpu1 - cpu0 - jit) / (double) minions, 3));
        figures.put("auths_per_s_over_private_ops_per_s", round(authsPerSecond / limits.privateOpsPerSecond(), 3));
        figures.put("retries", retries);
        figures.put("window", AUTH_WINDOW);
        // A salt-master is a tree of processes: its CPU by process name (Profiler.threads).
        figures.put(master.salt ? "master_cpu_ms_by_process" : "master_cpu_ms_by_thread", byThread);
        return figures;
    }

    /**
     * The first auth's line: the target (brine's, issue 26) and its verdict only on a brine master's line
     * ({@code brine}), not on a salt-master's.
     */
    static String line(int minions, Map<String, Object> figures, RsaLimits limits, boolean brine) {
        double cpuPerAuth = (double) figures.get("master_cpu_ms_per_auth");
        double ratio = cpuPerAuth / limits.privateOpMillis();
        double authsPerSecond = (double) figures.get("auths_per_s");
        return String.format(
                "auth     %,d new minions accepted in %.2f s: %.0f auths/s (%.2f x one core's private "
                        + "ops/s); master CPU %.2f ms per auth = %.2f private ops (%.2f without the JIT compiler)%s",
                minions,
                (double) figures.get("wall_ms") / 1000,
                authsPerSecond,
                authsPerSecond / limits.privateOpsPerSecond(),
                cpuPerAuth,
                ratio,
                (double) figures.get("master_cpu_ms_per_auth_without_jit") / limits.privateOpMillis(),
                brine ? " [target <= 1.5: " + verdict(ratio <= TARGET_PRIVATE_OPS) + "]" : "");
    }

    /** Every minion unwraps its session key: {minions that failed, the slowest worker's milliseconds}. */
    long[] unwrap() throws IOException {
        long failed = 0;
        long millis = 0;
        for (String answer : run.swarm().all("unwrap", "unwrap", Duration.ofMinutes(30))) {
            String[] words = answer.split(" ");
            failed += Long.parseLong(words[2]);
            millis = Math.max(millis, Long.parseLong(words[3]));
        }
        return new long[] {failed, millis};
    }

    static void requireUnwrapped(long[] unwrapped) throws IOException {
        if (unwrapped[0] > 0) {
            throw new IOException(unwrapped[0] + " minions could not unwrap their session keys");
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cpuByThread(Map<String, Object> figures) {
        return (Map<String, Object>) figures.get(
                figures.containsKey("master_cpu_ms_by_process")
                        ? "master_cpu_ms_by_process"
                        : "master_cpu_ms_by_thread");
    }
}

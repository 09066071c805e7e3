package io.brine.bench;

import static io.brine.bench.Figures.round;
import static io.brine.bench.Figures.verdict;

import io.brine.bench.BenchMain.Scenario;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * One real {@code bin/brine-minion} joins the swarm and idles: its RSS and CPU, and the master's CPU meanwhile with
 * every minion connected. The master's memory figures, taken by the coordinator, are reported with it.
 *
 * <p>The idle window starts once the master's JIT compiler threads are quiet ({@link #settle}): a fresh master
 * compiles for a while after the scenarios before, and starting a JFR recording ({@code --profile memory}) makes it
 * compile seconds' worth more: that C2 time was most of the "idle" CPU measured before. The master's idle CPU is
 * printed in total and without the compiler threads.
 */
final class MemoryScenario {

    /** The compiler threads are quiet when they used at most this much CPU over one {@link #SETTLE_STEP_MS}. */
    private static final long COMPILER_QUIET_MS = 20;

    private static final long SETTLE_STEP_MS = 5_000;
    /** The idle window starts after this at the latest, quiet or not (the output says which). */
    private static final long SETTLE_MAX_MS = 180_000;

    private final BenchRun run;
    private final int minions;

    MemoryScenario(BenchRun run) {
        this.run = run;
        this.minions = run.minions();
    }

    /**
     * @param home the build whose {@code bin/brine-minion} runs
     * @param memory the master's memory figures so far; the minion's are added
     */
    void run(Path home, Map<String, Object> memory, long rssIdleKib, long rssConnectedKib) throws IOException {
        realMinion(home, memory);
        double heapPerMinion = (double) memory.get("master_heap_per_minion_kib");
        System.out.printf(
                "memory   master RSS %.0f MiB idle, %.0f MiB with %,d minions; live heap %.1f KiB per "
                        + "minion [target <= 20: %s]; %.2f fds per minion in the master%n",
                rssIdleKib / 1024.0,
                rssConnectedKib / 1024.0,
                minions,
                heapPerMinion,
                verdict(heapPerMinion <= 20),
                (double) memory.get("master_fds_per_minion"));
        run.scenarios().put("memory", memory);
    }

    /**
     * Waits until the master's compiler threads used at most {@link #COMPILER_QUIET_MS} in the last
     * {@link #SETTLE_STEP_MS}, or {@link #SETTLE_MAX_MS} have passed, and records how long that took.
     */
    private void settle(Map<String, Object> memory) {
        long start = System.nanoTime();
        long compiled = 0;
        boolean quiet = false;
        Map<String, Long> before = run.profiler().threads();
        while (!quiet && System.nanoTime() - start < SETTLE_MAX_MS * 1_000_000) {
            MasterProcess.sleep(SETTLE_STEP_MS);
            Map<String, Long> after = run.profiler().threads();
            long step = Profiler.jitMillis(Profiler.threadCpu(before, after));
            compiled += step;
            quiet = step <= COMPILER_QUIET_MS;
            before = after;
        }
        long settledMs = (System.nanoTime() - start) / 1_000_000;
        memory.put("master_settle_ms", settledMs);
        memory.put("master_settle_compiler_ms", compiled);
        memory.put("master_settled", quiet);
        System.out.printf(
                "memory   master settled in %,d ms (its JIT compiler threads: %,d ms of CPU meanwhile)%s%n",
                settledMs, compiled, quiet ? "" : "; NOT quiet: the idle window includes compilation");
    }

    private void realMinion(Path home, Map<String, Object> memory) throws IOException {
        MasterProcess master = run.master();
        Path dir = run.runDir().resolve("real-minion");
        Files.createDirectories(dir);
        Files.writeString(
                dir.resolve("minion.yaml"),
                String.join(
                        "\n",
                        "id: real-minion",
                        "master: 127.0.0.1",
                        "transport: " + run.options().transport().configValue,
                        "ret_port: " + master.retPort,
                        "publish_port: " + master.publishPort,
                        "tcp_port: " + master.tcpPort,
                        "pki_dir: pki",
                        "cachedir: cache",
                        "log_file: minion.log",
                        "acceptance_wait_time: 1",
                        ""),
                StandardCharsets.UTF_8);
        Process minion = new ProcessBuilder(home.resolve("bin/brine-minion").toString(), "-c", dir.toString())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("minion.out").toFile())
                .start();
        try {
            Path status = dir.resolve("cache/status.json");
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!(Files.isRegularFile(status) && Files.readString(status).contains("\"accepted\""))) {
                if (!minion.isAlive() || System.nanoTime() > deadline) {
                    throw new IOException("the real brine-minion was not accepted within 60 s; see " + dir);
                }
                MasterProcess.sleep(100);
            }
            MasterProcess.sleep(5000);
            // JFR first, when profiling: starting it compiles seconds' worth of its own code, which must not land
            // in the idle window.
            run.profiler().start(Scenario.MEMORY);
            settle(memory);
            Map<String, Long> threads0 = run.profiler().threads();
            long minionCpu0 = ProcStats.cpuMillis(minion.pid());
            long masterCpu0 = master.cpuMillis();
            long t0 = System.nanoTime();
            MasterProcess.sleep(run.options().idleSeconds() * 1000L);
            Map<String, Object> byThread = run.profiler().threadCpuSince(threads0);
            run.profiler().stop(Scenario.MEMORY);
            memory.put("master_idle_cpu_ms_by_thread", byThread);
            long minionCpu1 = ProcStats.cpuMillis(minion.pid());
            long masterCpu1 = master.cpuMillis();
            double seconds = (System.nanoTime() - t0) / 1e9;
            long rss = ProcStats.rssKib(minion.pid());
            double minionPct = (minionCpu1 - minionCpu0) / 10.0 / seconds;
            double masterPct = (masterCpu1 - masterCpu0) / 10.0 / seconds;
            memory.put("minion_rss_mib", round(rss / 1024.0, 1));
            memory.put("minion_cpu_pct", round(minionPct, 3));
            memory.put("minion_idle_seconds", round(seconds, 1));
            memory.put("minion_threads", ProcStats.threads(minion.pid()));
            long compilerMs = Profiler.jitMillis(byThread);
            double masterNoJitPct = (masterCpu1 - masterCpu0 - compilerMs) / 10.0 / seconds;
            memory.put("master_idle_cpu_pct_connected", round(masterPct, 2));
            memory.put("master_idle_cpu_pct_without_compiler", round(masterNoJitPct, 2));
            memory.put("master_idle_compiler_ms", compilerMs);
            memory.put("target_minion_rss_mib", 64);
            memory.put("target_minion_cpu_pct", 0.5);
            memory.put(
                    "met",
                    (double) memory.get("master_heap_per_minion_kib") <= 20 && rss / 1024.0 <= 64 && minionPct <= 0.5);
            System.out.printf(
                    "minion   one real bin/brine-minion idle for %.0f s: RSS %.1f MiB [target <= 64: %s], "
                            + "CPU %.3f %% of a core [target <= 0.5: %s]; the master meanwhile: %.2f %% of a core with %,d "
                            + "minions connected, %.2f %% without its JIT compiler threads (%,d ms)%n",
                    seconds,
                    rss / 1024.0,
                    verdict(rss / 1024.0 <= 64),
                    minionPct,
                    verdict(minionPct <= 0.5),
                    masterPct,
                    minions,
                    masterNoJitPct,
                    compilerMs);
            System.out.println(Profiler.threadLine(byThread));
        } finally {
            minion.destroy();
            try {
                minion.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

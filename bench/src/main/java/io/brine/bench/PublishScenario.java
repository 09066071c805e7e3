package io.brine.bench;

import static io.brine.bench.Figures.round;

import io.brine.bench.BenchMain.Scenario;
import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** Signed, encrypted publications back to back, each to every minion: how many a second reach them all. */
final class PublishScenario {

    private final BenchRun run;
    private final int minions;

    PublishScenario(BenchRun run) {
        this.run = run;
        this.minions = run.minions();
    }

    void run(BrineClient client) throws IOException, ClientException {
        MasterProcess master = run.master();
        Swarm swarm = run.swarm();
        RsaLimits limits = run.limits();
        int count = run.options().publications() > 0
                ? run.options().publications()
                : Math.max(10, Math.min(500, 200_000 / minions));
        // Warm-up: a few, until every minion got them.
        swarm.resetDeliveries();
        for (int i = 0; i < 3; i++) {
            client.publish(BrineClient.Job.of("glob", Bench.PREFIX + "*", SimMinion.DELIVER_FUNCTION));
        }
        awaitDeliveries(3L * minions, Duration.ofSeconds(60 + minions / 100));
        swarm.resetDeliveries();
        run.profiler().start(Scenario.PUBLISH);
        Map<String, Long> threads0 = run.profiler().threads();
        long cpu0 = master.cpuMillis();
        long swarm0 = swarm.cpuMillis();
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            client.publish(BrineClient.Job.of("glob", Bench.PREFIX + "*", SimMinion.DELIVER_FUNCTION));
        }
        long requested = System.nanoTime();
        long[] delivered = awaitDeliveries((long) count * minions, Duration.ofSeconds(120 + count * minions / 20_000));
        long cpu1 = master.cpuMillis();
        long swarmCpu = swarm.cpuMillis() - swarm0;
        Map<String, Object> byThread = run.profiler().threadCpuSince(threads0);
        run.profiler().stop(Scenario.PUBLISH);
        long jit = Profiler.jitMillis(byThread);
        double wallS = (delivered[1] - t0) / 1e9;
        double perSecond = count / wallS;
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("publications", count);
        figures.put("minions", minions);
        figures.put("per_s", round(perSecond, 2));
        figures.put("deliveries_per_s", round(count * (double) minions / wallS, 0));
        figures.put("wall_ms", round(wallS * 1000, 1));
        figures.put("requests_per_s", round(count / ((requested - t0) / 1e9), 2));
        figures.put("delivered", delivered[0]);
        figures.put("missing", (long) count * minions - delivered[0]);
        figures.put("master_cpu_ms", cpu1 - cpu0);
        figures.put("master_cpu_ms_per_publication", round((cpu1 - cpu0) / (double) count, 2));
        figures.put("master_cpu_ms_per_publication_without_jit", round((cpu1 - cpu0 - jit) / (double) count, 2));
        figures.put("per_s_over_private_ops_per_s", round(perSecond / limits.privateOpsPerSecond(), 4));
        figures.put("master_cpu_ms_by_thread", byThread);
        figures.put("swarm_cpu_ms", swarmCpu);
        figures.put(
                "how",
                "one publisher session publishing back to back (each waits for the master's "
                        + "PublishReply); per_s counts publications that reached every minion, verified and opened");
        run.scenarios().put("publish", figures);
        System.out.printf(
                "publish  %d signed, encrypted publications to %,d minions: %.1f/s = %,.0f deliveries/s "
                        + "(%.3f x one core's private ops/s); master CPU %.1f ms per publication (%.1f without the JIT "
                        + "compiler), the swarm's %.1f%n",
                count,
                minions,
                perSecond,
                count * (double) minions / wallS,
                perSecond / limits.privateOpsPerSecond(),
                (cpu1 - cpu0) / (double) count,
                (cpu1 - cpu0 - jit) / (double) count,
                swarmCpu / (double) count);
        System.out.println(Profiler.threadLine(byThread));
    }

    /** Waits until {@code expected} deliveries are counted; returns {count, the last delivery's local time}. */
    private long[] awaitDeliveries(long expected, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long[] counted = run.swarm().deliveries();
            if (counted[0] >= expected || System.nanoTime() > deadline) {
                if (counted[0] < expected) {
                    run.failures()
                            .add("publish: " + (expected - counted[0]) + " of " + expected + " deliveries missing");
                }
                return counted;
            }
            MasterProcess.sleep(50);
        }
    }
}

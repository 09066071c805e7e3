package io.brine.bench;

import static io.brine.bench.Figures.ms;
import static io.brine.bench.Figures.percentile;
import static io.brine.bench.Figures.round;
import static io.brine.bench.Figures.verdict;

import io.brine.bench.BenchMain.Scenario;
import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.protocol.message.SessionMessage;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/** test.ping to every minion, round after round: when the first, the median, the last return arrives. */
final class PingScenario {

    private final BenchRun run;
    private final int minions;

    PingScenario(BenchRun run) {
        this.run = run;
        this.minions = run.minions();
    }

    record PingRound(
            String jid,
            double firstMs,
            double p50Ms,
            double p99Ms,
            double lastMs,
            int returned,
            int missing,
            long masterCpuMs,
            long swarmCpuMs) {

        Map<String, Object> figures() {
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("jid", jid);
            figures.put("first_ms", round(firstMs, 1));
            figures.put("p50_ms", round(p50Ms, 1));
            figures.put("p99_ms", round(p99Ms, 1));
            figures.put("last_ms", round(lastMs, 1));
            figures.put("returned", returned);
            figures.put("missing", missing);
            figures.put("master_cpu_ms", masterCpuMs);
            figures.put("swarm_cpu_ms", swarmCpuMs);
            return figures;
        }
    }

    /** Until every minion answers a test.ping: each has its keys, its subscription, and the paths are compiled. */
    void readiness(BrineClient client) throws IOException, ClientException {
        for (int round = 1; ; round++) {
            PingRound warm = pingRound(client, Duration.ofSeconds(60 + minions / 100));
            if (warm.missing() == 0) {
                System.out.printf(
                        "ready    every minion answered a warm-up test.ping (last after %.0f ms)%n", warm.lastMs());
                return;
            }
            if (round == 3) {
                throw new IOException(warm.missing() + " minions never answered a warm-up test.ping");
            }
        }
    }

    void run(BrineClient client) throws ClientException {
        RsaLimits limits = run.limits();
        run.profiler().start(Scenario.PING);
        Map<String, Long> threads0 = run.profiler().threads();
        List<PingRound> rounds = new ArrayList<>();
        for (int i = 0; i < run.options().pingRounds(); i++) {
            rounds.add(pingRound(client, Duration.ofSeconds(60 + minions / 100)));
            run.options().settle(500);
        }
        Map<String, Object> byThread = run.profiler().threadCpuSince(threads0);
        run.profiler().stop(Scenario.PING);
        List<PingRound> byLast = new ArrayList<>(rounds);
        byLast.sort(Comparator.comparingDouble(r -> r.missing() > 0 ? Double.MAX_VALUE : r.lastMs()));
        PingRound median = byLast.get((byLast.size() - 1) / 2);
        double target = minions <= 1000 ? 1000 : 3000;
        boolean met = median.missing() == 0 && median.lastMs() <= target;
        Map<String, Object> figures = median.figures();
        figures.put(
                "master_cpu_ms_per_return", round(median.masterCpuMs() / (double) Math.max(1, median.returned()), 4));
        figures.put("last_ms_in_private_ops", round(median.lastMs() / limits.privateOpMillis(), 1));
        figures.put("reported_round", "the median of " + rounds.size() + " rounds by last_ms, after a warm-up round");
        figures.put("rounds", rounds.stream().map(PingRound::figures).toList());
        figures.put("master_cpu_ms_by_thread_all_rounds", byThread);
        figures.put("target_last_ms", target);
        figures.put("met", met);
        run.scenarios().put("ping", figures);
        System.out.printf(
                "ping     test.ping to %,d minions: first %.0f ms, p50 %.0f ms, p99 %.0f ms, last %.0f ms%s "
                        + "(median of %d rounds; master CPU %.3f ms per return; the swarm's CPU %.3f ms per minion) [target "
                        + "last <= %.0f ms: %s]%n",
                minions,
                median.firstMs(),
                median.p50Ms(),
                median.p99Ms(),
                median.lastMs(),
                median.missing() > 0 ? " (" + median.missing() + " missing)" : "",
                rounds.size(),
                median.masterCpuMs() / (double) Math.max(1, median.returned()),
                median.swarmCpuMs() / (double) Math.max(1, median.returned()),
                target,
                verdict(met));
        System.out.println(Profiler.threadLine(byThread));
    }

    /** One test.ping to every minion, timed from the publication to each return. */
    PingRound pingRound(BrineClient client, Duration timeout) throws ClientException {
        return pingRound(client, "test.ping", timeout);
    }

    /** One job of {@code fun} to every minion, timed from the publication to each return. */
    PingRound pingRound(BrineClient client, String fun, Duration timeout) throws ClientException {
        return pingRound(client, fun, timeout, event -> {});
    }

    /** As {@link #pingRound(BrineClient, String, Duration)}, telling {@code each} of every return as it comes. */
    PingRound pingRound(BrineClient client, String fun, Duration timeout, Consumer<SessionMessage.ReturnEvent> each)
            throws ClientException {
        MasterProcess master = run.master();
        long cpu0 = master.cpuMillis();
        long swarm0 = run.swarm().cpuMillis();
        long t0 = System.nanoTime();
        BrineClient.Published published = client.publish(BrineClient.Job.of("glob", Bench.PREFIX + "*", fun));
        List<Long> times = new ArrayList<>(published.minions().size());
        client.awaitReturns(published.jid(), published.minions(), timeout, event -> {
            times.add(System.nanoTime());
            each.accept(event);
        });
        long cpu1 = master.cpuMillis();
        long swarm = run.swarm().cpuMillis() - swarm0;
        times.sort(Comparator.naturalOrder());
        int n = times.size();
        int missing = minions - n;
        if (n == 0) {
            return new PingRound(published.jid(), -1, -1, -1, -1, 0, missing, cpu1 - cpu0, swarm);
        }
        return new PingRound(
                published.jid(),
                ms(times.get(0), t0),
                ms(percentile(times, 0.50), t0),
                ms(percentile(times, 0.99), t0),
                ms(times.get(n - 1), t0),
                n,
                missing,
                cpu1 - cpu0,
                swarm);
    }
}

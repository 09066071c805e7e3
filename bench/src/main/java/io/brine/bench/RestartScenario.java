package io.brine.bench;

import static io.brine.bench.Figures.round;
import static io.brine.bench.Figures.verdict;

import io.brine.bench.BenchMain.Scenario;
import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The master restarted (SIGTERM, then {@code bin/brine-master} again on the same master.yaml, pki dir and ports)
 * with every minion connected: the time from the new master listening until every minion has answered a
 * {@code test.ping}, the master's CPU over that time, and how it served them (resumptions and full auths, from its
 * {@code /metrics}). Twice: the minions resuming with their tickets (PROTOCOL.md 8.9, what a brine-minion does),
 * then authenticating in full (what a minion without a ticket does, and every minion did before resumption).
 */
final class RestartScenario {

    /** What the target (issue 26) asks of a restart with 10,000 minions. */
    static final double TARGET_SERVED_MS = 10_000;

    static final double TARGET_PRIVATE_OPS_PER_MINION = 0.1;
    /** The mode of a salt-master's {@link Recovery} ({@code --against salt}). */
    static final String SALT_MASTER = "salt-master";
    /** Each test.ping round after the restart waits this long plus a millisecond per minion for its returns. */
    private static final Duration ROUND = Duration.ofSeconds(3);

    private static final int MAX_ROUNDS = 20;

    /**
     * One restart's figures: when the new master listened ({@code servingMs} after the old one was told to stop),
     * when the last minion to answer a test.ping first answered one ({@code servedMs} after it listened), the
     * master's CPU from its start to listening and from listening to served, and its counters.
     */
    record Recovery(
            String mode,
            int minions,
            double servingMs,
            double servedMs,
            long startCpuMs,
            long cpuMs,
            long resumed,
            long fullAuths,
            long refused,
            long signedAnswers,
            int pingRounds,
            long jitMs) {

        double cpuPerMinionMs() {
            return cpuMs / (double) minions;
        }

        double cpuPerMinionInPrivateOps(double privateOpMillis) {
            return cpuPerMinionMs() / privateOpMillis;
        }

        /** As {@link #cpuPerMinionInPrivateOps}, without the JIT compiler threads' CPU (a fresh JVM compiles). */
        double cpuPerMinionInPrivateOpsWithoutJit(double privateOpMillis) {
            return (cpuMs - jitMs) / (double) minions / privateOpMillis;
        }

        /** A salt-master's restart ({@code --against salt}): no target, no resumptions, no brine counters. */
        boolean saltMaster() {
            return mode.equals(SALT_MASTER);
        }

        /** The target (brine's) applies from 9,000 minions (10,000 or the most that fit); null below, and for Salt. */
        Boolean met(double privateOpMillis) {
            if (minions < 9000 || saltMaster()) {
                return null;
            }
            return servedMs <= TARGET_SERVED_MS
                    && cpuPerMinionInPrivateOps(privateOpMillis) <= TARGET_PRIVATE_OPS_PER_MINION;
        }

        Map<String, Object> figures(double privateOpMillis) {
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("mode", mode);
            figures.put("minions", minions);
            figures.put("serving_ms", round(servingMs, 1));
            figures.put("served_ms", round(servedMs, 1));
            figures.put("master_start_cpu_ms", startCpuMs);
            figures.put("master_cpu_ms", cpuMs);
            figures.put("master_cpu_ms_per_minion", round(cpuPerMinionMs(), 3));
            figures.put("master_cpu_per_minion_in_private_ops", round(cpuPerMinionInPrivateOps(privateOpMillis), 3));
            figures.put("master_jit_cpu_ms", jitMs);
            figures.put(
                    "master_cpu_per_minion_in_private_ops_without_jit",
                    round(cpuPerMinionInPrivateOpsWithoutJit(privateOpMillis), 3));
            if (saltMaster()) {
                figures.put("full_auths", fullAuths);
                figures.put("ping_rounds", pingRounds);
                return figures;
            }
            figures.put("resumed", resumed);
            figures.put("full_auths", fullAuths);
            figures.put("resumptions_refused", refused);
            figures.put("signed_answers_from_budget", signedAnswers);
            figures.put("ping_rounds", pingRounds);
            figures.put("met", met(privateOpMillis));
            return figures;
        }

        String line(double privateOpMillis) {
            String served = String.format(
                    "restart  %s: %,d minions served %.0f ms after the master listened (it listened "
                            + "%.0f ms after SIGTERM, %d ms of CPU to start); master CPU %d ms = %.3f ms = %.3f private ops "
                            + "per minion",
                    mode,
                    minions,
                    servedMs,
                    servingMs,
                    startCpuMs,
                    cpuMs,
                    cpuPerMinionMs(),
                    cpuPerMinionInPrivateOps(privateOpMillis));
            if (saltMaster()) {
                // No JIT, no resumption, and the target is brine's; its sign-ins have a line of their own.
                return served;
            }
            Boolean met = met(privateOpMillis);
            return served
                    + String.format(
                            " (%.3f without the JIT's %d ms); %,d resumed, %,d full auths, %,d resumptions refused, %,d "
                                    + "signed answers to unknown sessions and the like [target at 10,000: served <= 10 s, "
                                    + "<= 0.1 private ops: %s]",
                            cpuPerMinionInPrivateOpsWithoutJit(privateOpMillis),
                            jitMs,
                            resumed,
                            fullAuths,
                            refused,
                            signedAnswers,
                            met == null ? "applies to 10,000 only" : verdict(met));
        }
    }

    /** How many times faster, and how much less master CPU, {@code resumed} recovered than {@code full}. */
    static Map<String, Object> ratios(Recovery full, Recovery resumed) {
        Map<String, Object> ratios = new LinkedHashMap<>();
        ratios.put(
                "served_full_over_resumed",
                resumed.servedMs() > 0 ? round(full.servedMs() / resumed.servedMs(), 2) : null);
        ratios.put(
                "cpu_full_over_resumed",
                resumed.cpuMs() > 0 ? round(full.cpuMs() / (double) resumed.cpuMs(), 2) : null);
        return ratios;
    }

    private final BenchRun run;
    private final Path home;
    private final int metricsPort;
    private final Consumer<MasterProcess> started;

    /** {@code started} hears of each new master as soon as it runs, so that whoever stops the run stops it. */
    RestartScenario(BenchRun run, Path home, int metricsPort, Consumer<MasterProcess> started) {
        this.run = run;
        this.home = home;
        this.metricsPort = metricsPort;
        this.started = started;
    }

    /** Both restarts; the run's figures under "restart". */
    void run() throws IOException, ClientException {
        double privateOp = run.limits().privateOpMillis();
        awaitTickets();
        Restarted first = restart(run, true);
        Recovery resumed = first.recovery();
        System.out.println(resumed.line(privateOp));
        Restarted second = restart(first.run(), false);
        Recovery full = second.recovery();
        System.out.println(full.line(privateOp));
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("resumed", first.figures(privateOp));
        figures.put("full_auth", second.figures(privateOp));
        figures.put("ratios", ratios(full, resumed));
        figures.put(
                "how",
                "SIGTERM to the master with every minion connected and holding a ticket, bin/brine-master "
                        + "again on the same master.yaml, pki dir and ports; from the new master listening until every "
                        + "minion answered one test.ping (rounds of " + ROUND.toSeconds()
                        + " s + 1 ms per minion, published again until every minion has answered one: the last "
                        + "minion's first return); each minion resumes (or, the second time, authenticates in full) by itself "
                        + "as its connection comes back, as brine-minion does; rejoined_ms: until every minion's session "
                        + "was back; counters from its /metrics");
        run.scenarios().put("restart", figures);
        System.out.printf(
                "restart  resuming vs full auth: served %sx sooner, %sx less master CPU%n",
                ratios(full, resumed).get("served_full_over_resumed"),
                ratios(full, resumed).get("cpu_full_over_resumed"));
    }

    /**
     * When each minion first answered a test.ping after the restart, over every round: a minion is served once it
     * has answered one, whichever round it was (a round ends after its wait, and one that ended without every
     * minion is published again; at a high load a round's wait can end before the last returns of minions served
     * in time, and requiring one complete round measured the rounds, not the minions).
     */
    static final class FirstReturns {
        private final Map<String, Long> first = new HashMap<>();
        private long last;

        void note(String minion, long nanos) {
            if (first.putIfAbsent(minion, nanos) == null) {
                last = Math.max(last, nanos);
            }
        }

        int count() {
            return first.size();
        }

        /** When the last minion to answer first answered (System.nanoTime()); 0 before any. */
        long last() {
            return last;
        }
    }

    /** The run with its new master, and what the restart measured. */
    private record Restarted(BenchRun run, Recovery recovery, double rejoinedMs) {

        Map<String, Object> figures(double privateOpMillis) {
            Map<String, Object> figures = recovery.figures(privateOpMillis);
            figures.put("rejoined_ms", round(rejoinedMs, 1));
            return figures;
        }
    }

    /** Until every minion holds a resumption ticket (asked for after its full auth). */
    private void awaitTickets() throws IOException {
        long deadline =
                System.nanoTime() + Duration.ofSeconds(60 + run.minions() / 100).toNanos();
        while (true) {
            long holding = 0;
            for (String answer : run.swarm().all("tickets", "tickets", Duration.ofSeconds(30))) {
                holding += Long.parseLong(answer.split(" ")[1]);
            }
            if (holding >= run.minions()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("restart: " + (run.minions() - holding) + " minions hold no resumption ticket");
            }
            MasterProcess.sleep(200);
        }
    }

    private Restarted restart(BenchRun before, boolean tickets) throws IOException, ClientException {
        Swarm swarm = before.swarm();
        String label = tickets ? "restart-resuming" : "restart-full";
        // --profile restart: a JFR recording of each new master from its launch (no jcmd attach while it serves),
        // summarised from listening until served, one per restart.
        String javaOptions = before.options().masterOpts();
        if (before.options().profile().equals(Optional.of(Scenario.RESTART))) {
            javaOptions += " " + MasterProcess.recordingFromLaunch(Profiler.recording(before.runDir(), label));
        }
        if (!tickets) {
            // Each full auth's request signed ahead, as every timed auth of the bench: the swarm's RSA stays out of
            // the master's window, and each request follows its queued frames within the master's grace.
            swarm.presign();
        }
        long stopped = System.nanoTime();
        // The minions rejoin by themselves as their connections come back, as brine-minion does: armed while no
        // master runs, so that none rejoins the master being stopped; nothing the bench does after the new master
        // listens delays them.
        MasterProcess master = before.master()
                .restart(
                        home,
                        before.options().transport(),
                        javaOptions,
                        () -> swarm.all("rejoin " + (tickets ? "resume" : "full"), "rejoin", Duration.ofMinutes(5)));
        long listening = System.nanoTime();
        Instant listeningAt = Instant.now();
        long startCpu = master.cpuMillis();
        Profiler profiler =
                new Profiler(master, before.runDir(), before.options().profile(), label);
        Map<String, Long> threads0 = profiler.threads();
        started.accept(master);
        BenchRun after = new BenchRun(
                before.options(),
                master,
                before.limits(),
                before.runDir(),
                before.minions(),
                swarm,
                profiler,
                before.scenarios(),
                before.failures());
        long rejoined = awaitRejoined(swarm, before.minions());
        // As the salt-master's side waits for every minion's connections: a publication sent before a minion's
        // subscription is back would wait out a round's timeout for nothing, not measure the master.
        awaitReachable(metricsPort, before.minions());
        PingScenario ping = new PingScenario(after);
        FirstReturns returns = new FirstReturns();
        int rounds = 0;
        try (BrineClient client = after.publisher()) {
            while (returns.count() < before.minions()) {
                if (++rounds > MAX_ROUNDS) {
                    throw new IOException("restart: " + (before.minions() - returns.count())
                            + " minions answered no test.ping in " + MAX_ROUNDS + " rounds");
                }
                ping.pingRound(
                        client,
                        "test.ping",
                        ROUND.plusMillis(before.minions()),
                        event -> returns.note(event.minionId(), System.nanoTime()));
            }
        }
        long served = returns.last();
        long cpu = master.cpuMillis() - startCpu;
        Map<String, Object> byThread = profiler.threadCpuSince(threads0);
        swarm.all("rejoin off", "rejoin", Duration.ofMinutes(1));
        profiler.stop(Scenario.RESTART, listeningAt);
        MetricsScrape metrics = MetricsScrape.of(metricsPort);
        Recovery recovery = new Recovery(
                tickets ? "resuming" : "full auth",
                before.minions(),
                (listening - stopped) / 1e6,
                (served - listening) / 1e6,
                startCpu,
                cpu,
                (long) metrics.sum("brine_resumptions_total", ""),
                (long) metrics.sum("brine_auth_answers_total", "outcome=\"accepted\""),
                (long) metrics.sum("brine_resumptions_refused_total", ""),
                (long) metrics.sum("brine_auth_budget_answers_total", ""),
                rounds,
                Profiler.jitMillis(byThread));
        System.out.printf(
                "restart  %s: every minion's session back %.0f ms after the master listened%n",
                recovery.mode(), (rejoined - listening) / 1e6);
        System.out.println(Profiler.threadLine(byThread));
        return new Restarted(after, recovery, (rejoined - listening) / 1e6);
    }

    /**
     * Until every worker says each of its minions has its session back (resumed, or authenticated in full and
     * unwrapped); when the last one had (System.nanoTime()).
     */
    private static long awaitRejoined(Swarm swarm, int minions) throws IOException {
        Duration timeout = Duration.ofSeconds(120 + minions / 20);
        long deadline = System.nanoTime() + timeout.toNanos();
        long last = 0;
        for (WorkerProcess worker : swarm.workers()) {
            String event = null;
            while ((event == null || !event.startsWith("event rejoined ")) && System.nanoTime() < deadline) {
                event = worker.event(Duration.ofSeconds(1));
            }
            if (event == null || !event.startsWith("event rejoined ")) {
                throw new IOException(
                        "restart: not every minion rejoined within " + timeout.toSeconds() + " s" + swarm.status());
            }
            last = Math.max(last, worker.toLocal(Long.parseLong(event.split(" ")[4])));
        }
        return last;
    }

    /**
     * Waits until the master says every minion is reachable ({@code brine_minions_reachable}: a live session and, on
     * ZeroMQ, its subscription honoured), polling its metrics every 100 ms.
     */
    private static void awaitReachable(int metricsPort, int minions) throws IOException {
        Duration timeout = Duration.ofSeconds(120 + minions / 20);
        long deadline = System.nanoTime() + timeout.toNanos();
        double reachable = 0;
        while (System.nanoTime() < deadline) {
            reachable = MetricsScrape.of(metricsPort).sum("brine_minions_reachable", "");
            if (reachable >= minions) {
                return;
            }
            MasterProcess.sleep(100);
        }
        throw new IOException("restart: " + (long) reachable + " of " + minions + " minions reachable after "
                + timeout.toSeconds() + " s");
    }

    /** master.yaml's lines for the scenario: the metrics endpoint on loopback, read after each restart. */
    static String yaml(int metricsPort) {
        return "# The restart scenario reads the master's counters from /metrics.\nhttp_port: " + metricsPort + "\n";
    }
}

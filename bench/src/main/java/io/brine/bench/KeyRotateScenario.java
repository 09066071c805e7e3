package io.brine.bench;

import static io.brine.bench.Figures.round;
import static io.brine.bench.Figures.verdict;

import io.brine.bench.BenchMain.Scenario;
import io.brine.client.BrineClient;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Every minion's key rotated the way an admin asks for it ({@code brine-key --rotate-keys 'bench-*'}: the key store's
 * {@link KeyStore#askRotation}), with {@code test.ping} rounds running meanwhile (PROTOCOL.md 6.3). The master asks
 * each minion at its next heartbeat (every 30 to 37.5 s), each simulated minion sends the request a real one sends,
 * signed by its key and its second key from the key cache ({@link KeyCache#secondKey}), and switches on the master's
 * signed answer. Measured: the time until every minion's new key is accepted, the master's CPU per rotation in private
 * RSA operations (target: at most 1), the returns lost (target 0), the rotations refused.
 */
final class KeyRotateScenario {

    /** Ping rounds before the ask, which measure what the master spends on pings alone. */
    private static final int BASELINE_ROUNDS = 3;
    /** One ping round at most this often. */
    private static final long ROUND_EVERY_MS = 1000;
    /**
     * Given up when no minion rotated for this long after the ask: every minion heartbeats within 37.5 s, and the
     * master answers each request (a slow store keeps the rotations coming, not stopped).
     */
    private static final Duration STALLED = Duration.ofSeconds(75);

    private final BenchRun run;
    private final int minions;

    KeyRotateScenario(BenchRun run) {
        this.run = run;
        this.minions = run.minions();
    }

    /** What the ping rounds of one run saw: rounds published, returns expected and got. */
    private static final class Pings {
        final List<PingScenario.PingRound> rounds = new ArrayList<>();
        /** The master's CPU, its JIT compiler's, and the time when the baseline rounds were done. */
        long baselineCpu;

        long baselineJit;

        long baselineNanos;
        final CompletableFuture<Void> baselineDone = new CompletableFuture<>();

        synchronized void add(PingScenario.PingRound round) {
            rounds.add(round);
        }

        synchronized List<PingScenario.PingRound> rounds() {
            return List.copyOf(rounds);
        }
    }

    void run(BrineClient client) throws IOException {
        MasterProcess master = run.master();
        Swarm swarm = run.swarm();
        RsaLimits limits = run.limits();
        int base = KeyCache.secondKey(run.options().minions(), run.options().warmupMinions(), 0);
        swarm.all("second-keys " + base, "second-keys", Duration.ofMinutes(10));

        PingScenario ping = new PingScenario(run);
        Pings pings = new Pings();
        AtomicBoolean stop = new AtomicBoolean();
        Duration roundTimeout = Duration.ofSeconds(60 + minions / 100);
        long cpuStart = master.cpuMillis();
        Map<String, Long> threadsStart = run.profiler().threads();
        long startNanos = System.nanoTime();
        CompletableFuture<Void> loop = CompletableFuture.runAsync(() -> {
            try {
                while (!stop.get()) {
                    long roundStarted = System.nanoTime();
                    pings.add(ping.pingRound(client, roundTimeout));
                    if (pings.rounds().size() == BASELINE_ROUNDS) {
                        pings.baselineCpu = master.cpuMillis();
                        pings.baselineJit = Profiler.jitMillis(run.profiler().threadCpuSince(threadsStart));
                        pings.baselineNanos = System.nanoTime();
                        pings.baselineDone.complete(null);
                    }
                    long rest = ROUND_EVERY_MS - (System.nanoTime() - roundStarted) / 1_000_000;
                    if (rest > 0) {
                        MasterProcess.sleep(rest);
                    }
                }
            } catch (Exception e) {
                pings.baselineDone.completeExceptionally(e);
                throw new IllegalStateException("test.ping during the rotations: " + e.getMessage(), e);
            }
        });
        try {
            await(pings.baselineDone, roundTimeout.multipliedBy(BASELINE_ROUNDS + 1));
            double seconds = Math.max(1, pings.baselineNanos - startNanos) / 1e9;
            double baselinePerSecond = (pings.baselineCpu - cpuStart) / seconds;
            double baselineNoJitPerSecond = (pings.baselineCpu - cpuStart - pings.baselineJit) / seconds;
            Map<String, Object> figures = rotate();
            figures.put("baseline_master_cpu_ms_per_s", round(baselinePerSecond, 1));
            figures.put("baseline_master_cpu_ms_per_s_without_jit", round(baselineNoJitPerSecond, 1));
            stop.set(true);
            await(loop, roundTimeout.plusSeconds(30));
            report(figures, pings, baselinePerSecond, baselineNoJitPerSecond, limits);
        } finally {
            stop.set(true);
        }
    }

    /** Asks every minion to rotate and waits until each has its new key accepted (or the deadline). */
    private Map<String, Object> rotate() throws IOException {
        MasterProcess master = run.master();
        List<String> ids = new ArrayList<>(minions);
        for (int i = 0; i < minions; i++) {
            ids.add(String.format("%s%05d", Bench.PREFIX, i));
        }
        Map<String, Object> figures = new LinkedHashMap<>();
        run.profiler().start(Scenario.KEYROTATE);
        Map<String, Long> threads0 = run.profiler().threads();
        long cpu0 = master.cpuMillis();
        long t0 = System.nanoTime();
        try (AuditLog audit = AuditLog.open(master.dir.resolve("cache"), Clock.systemUTC());
                KeyStore keyStore = RotateScenario.openKeyStore(master, audit)) {
            List<AdminResult> asked = keyStore.askRotation(ids, "brine-bench");
            long notAsked = asked.stream()
                    .filter(result -> result.status() != AdminResult.Status.DONE)
                    .count();
            if (notAsked > 0) {
                throw new IOException(notAsked + " of " + minions + " minions not asked to rotate: "
                        + asked.stream()
                                .filter(result -> result.status() != AdminResult.Status.DONE)
                                .findFirst()
                                .orElseThrow()
                                .message());
            }
        } catch (KeyStoreException e) {
            throw new IOException("cannot open the master's key store: " + e.getMessage(), e);
        }
        long askedNanos = System.nanoTime();
        // The master asks at each minion's next heartbeat (30 to 37.5 s apart): wait while rotations come.
        long progressNanos = askedNanos;
        int seen = 0;
        Rotations done;
        while (true) {
            done = rotations();
            if (done.rotated() + done.refused() > seen) {
                seen = done.rotated() + done.refused();
                progressNanos = System.nanoTime();
            }
            if (seen >= minions || System.nanoTime() - progressNanos > STALLED.toNanos()) {
                break;
            }
            MasterProcess.sleep(200);
        }
        long cpu1 = master.cpuMillis();
        long t1 = System.nanoTime();
        Map<String, Object> byThread = run.profiler().threadCpuSince(threads0);
        run.profiler().stop(Scenario.KEYROTATE);
        figures.put("minions", minions);
        figures.put("asked_ms", round((askedNanos - t0) / 1e6, 1));
        figures.put("all_rotated_ms", done.rotated() >= minions ? round((done.last() - t0) / 1e6, 1) : null);
        figures.put(
                "all_rotated_after_the_ask_ms",
                done.rotated() >= minions ? round((done.last() - askedNanos) / 1e6, 1) : null);
        figures.put("rotated", done.rotated());
        figures.put("refused", done.refused());
        figures.put("last_refusal", done.lastRefusal());
        figures.put("requests_sent", done.asked());
        figures.put("never_rotated", minions - done.rotated());
        figures.put("request_to_answer_ms_mean", round(done.waitSumNanos() / 1e6 / Math.max(1, done.rotated()), 2));
        figures.put("request_to_answer_ms_max", round(done.waitMaxNanos() / 1e6, 1));
        figures.put("window_ms", round((t1 - t0) / 1e6, 1));
        figures.put("master_cpu_ms", cpu1 - cpu0);
        figures.put("master_cpu_ms_by_thread", byThread);
        if (done.rotated() < minions) {
            run.failures()
                    .add("keyrotate: " + (minions - done.rotated()) + " minions' keys not rotated ("
                            + done.refused() + " refused"
                            + (done.lastRefusal().isEmpty() ? "" : ": " + done.lastRefusal())
                            + ")");
        }
        return figures;
    }

    record Rotations(
            int asked, int rotated, int refused, long last, long waitSumNanos, long waitMaxNanos, String lastRefusal) {}

    /** The rotations so far, summed over the workers; {@code last} in the coordinator's time. */
    private Rotations rotations() throws IOException {
        int asked = 0;
        int rotated = 0;
        int refused = 0;
        long last = 0;
        long waitSum = 0;
        long waitMax = 0;
        String refusal = "";
        for (WorkerProcess worker : run.swarm().workers()) {
            String[] words = worker.command("rotations", Duration.ofSeconds(30)).split(" ", 8);
            asked += Integer.parseInt(words[1]);
            rotated += Integer.parseInt(words[2]);
            refused += Integer.parseInt(words[3]);
            long lastNanos = Long.parseLong(words[4]);
            if (lastNanos != 0) {
                last = Math.max(last, worker.toLocal(lastNanos));
            }
            waitSum += Long.parseLong(words[5]);
            waitMax = Math.max(waitMax, Long.parseLong(words[6]));
            if (words.length > 7 && !words[7].isEmpty()) {
                refusal = words[7];
            }
        }
        return new Rotations(asked, rotated, refused, last, waitSum, waitMax, refusal);
    }

    private void report(
            Map<String, Object> figures,
            Pings pings,
            double baselinePerSecond,
            double baselineNoJitPerSecond,
            RsaLimits limits) {
        List<PingScenario.PingRound> rounds = pings.rounds();
        long expected = (long) rounds.size() * minions;
        long returned =
                rounds.stream().mapToLong(PingScenario.PingRound::returned).sum();
        long lost = expected - returned;
        int rotated = (int) figures.get("rotated");
        double windowMs = (double) figures.get("window_ms");
        long cpu = (long) figures.get("master_cpu_ms");
        @SuppressWarnings("unchecked")
        Map<String, Object> byThread = (Map<String, Object>) figures.get("master_cpu_ms_by_thread");
        long jit = Profiler.jitMillis(byThread);
        // What the master would have spent over the window on the pings and its idle work alone.
        double perRotation = (cpu - baselinePerSecond * windowMs / 1000) / Math.max(1, rotated);
        double perRotationNoJit = (cpu - jit - baselineNoJitPerSecond * windowMs / 1000) / Math.max(1, rotated);
        long authWorkers = threadGroup(byThread, "brine-auth");
        double onWorkers = authWorkers / (double) Math.max(1, rotated);
        double op = limits.privateOpMillis();
        figures.put("ping_rounds", rounds.size());
        figures.put("ping_rounds_before_the_ask", BASELINE_ROUNDS);
        figures.put("returns_expected", expected);
        figures.put("returns", returned);
        figures.put("returns_lost", lost);
        figures.put("master_jit_cpu_ms", jit);
        figures.put("master_cpu_ms_per_rotation", round(perRotation, 3));
        figures.put("master_cpu_per_rotation_in_private_ops", round(perRotation / op, 2));
        figures.put("master_cpu_per_rotation_in_private_ops_without_jit", round(perRotationNoJit / op, 2));
        figures.put("auth_worker_cpu_ms_per_rotation", round(onWorkers, 3));
        figures.put("auth_worker_cpu_per_rotation_in_private_ops", round(onWorkers / op, 2));
        figures.put(
                "how",
                "from the key store's askRotation of every bench minion (brine-key --rotate-keys) until every"
                        + " simulated minion holds the master's signed answer that its new key is accepted, with"
                        + " test.ping to every minion at most once a second; master CPU per rotation: the master's"
                        + " CPU over that window less its rate with the pings alone (the "
                        + BASELINE_ROUNDS
                        + " rounds before the ask), per rotation; on the auth workers: their CPU alone (where"
                        + " the master verifies, checks, stores and signs a rotation)");
        boolean met = met(lost, rotated, minions, perRotationNoJit / op, onWorkers / op);
        figures.put(
                "target",
                "at most 1 private op of master CPU per rotation (JIT excluded) and on the auth workers, 0 returns"
                        + " lost");
        figures.put("met", met);
        run.scenarios().put("keyrotate", figures);
        Object all = figures.get("all_rotated_ms");
        System.out.printf(
                "keyrotate %,d of %,d minions rotated their keys, the last %s after brine-key's ask (%d refused);"
                        + " pings meanwhile: %d rounds, %d of %d returns lost; master CPU per rotation %.2f ms = %.2f"
                        + " private ops (%.2f without the JIT compiler; on the auth workers %.2f) [target <= 1 private"
                        + " op, 0 lost: %s]%n",
                rotated,
                minions,
                all == null ? "never" : String.format("%.0f ms", (double) all),
                (int) figures.get("refused"),
                rounds.size(),
                lost,
                expected,
                perRotation,
                perRotation / op,
                perRotationNoJit / op,
                onWorkers / op,
                verdict(met));
        System.out.println(Profiler.threadLine(byThread));
        if (lost > 0) {
            run.failures()
                    .add("keyrotate: " + lost + " of " + expected + " test.ping returns lost during the rotations");
        }
    }

    /**
     * The verdict: every minion rotated, no return lost, and a rotation within 1 private op both over the whole master
     * and on the auth workers. The whole-master figure takes the pings' rate before the ask off the window's CPU, which
     * at 10,000 minions is off by more than a rotation costs (it came out negative over TCP); the auth workers'
     * CPU is measured, not estimated, and is where a rotation is handled, so it alone can miss the target.
     */
    static boolean met(long lost, int rotated, int minions, double wholeMasterOps, double authWorkerOps) {
        return lost == 0 && rotated == minions && wholeMasterOps <= 1 && authWorkerOps <= 1;
    }

    /** A thread group's CPU in a {@link Profiler#threadCpu} delta, user and system. */
    static long threadGroup(Map<String, Object> byThread, String group) {
        return byThread.entrySet().stream()
                .filter(e -> e.getKey().equals(group) || e.getKey().equals(group + " (sys)"))
                .mapToLong(e -> (Long) e.getValue())
                .sum();
    }

    private static void await(CompletableFuture<?> future, Duration timeout) throws IOException {
        try {
            future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IOException(e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("test.ping rounds did not finish within " + timeout.toSeconds() + " s");
        }
    }
}

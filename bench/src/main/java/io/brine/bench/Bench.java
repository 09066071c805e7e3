package io.brine.bench;

import static io.brine.bench.Figures.round;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.brine.bench.BenchMain.Scenario;
import io.brine.client.BrineClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The coordinator of one benchmark run: measures the RSA limits, starts the master and the {@link Swarm}, runs the
 * scenarios in order ({@link AuthScenario}, {@link RotateScenario}, {@link KeyRotateScenario}, {@link PingScenario},
 * {@link PublishScenario}, {@link ApiScenario}, {@link StateScenario}, {@link MemoryScenario}, {@link
 * RestartScenario}, {@link MasterKeyScenario}), each printing a
 * line of figures, and writes the JSON. Everything it starts, it stops.
 */
final class Bench {

    record Options(
            int minions,
            Transport transport,
            Set<Scenario> scenarios,
            Optional<Path> json,
            KeyCache keys,
            int minionsPerWorker,
            int pingRounds,
            int publications,
            int idleSeconds,
            Optional<Scenario> profile,
            boolean keep,
            String masterOpts,
            double rsaSeconds,
            int warmupMinions,
            Optional<Path> masterHome,
            int workerIoThreads,
            boolean salt,
            ZmqClient zmqClient,
            int authFloodSources,
            int apiRounds,
            int apiSubscribers,
            int stateRounds,
            boolean settle) {

        /**
         * A fixed pause that lets the master settle before a figure is taken (its idle memory, a compiled auth path,
         * a quiet moment between ping rounds); skipped with {@code --no-settle}, where only the run's steps matter.
         */
        void settle(long millis) {
            if (settle) {
                MasterProcess.sleep(millis);
            }
        }

        /** The same options without {@code --json}: for a run whose figures its caller writes. */
        Options withoutJson() {
            return new Options(
                    minions,
                    transport,
                    scenarios,
                    Optional.empty(),
                    keys,
                    minionsPerWorker,
                    pingRounds,
                    publications,
                    idleSeconds,
                    profile,
                    keep,
                    masterOpts,
                    rsaSeconds,
                    warmupMinions,
                    masterHome,
                    workerIoThreads,
                    salt,
                    zmqClient,
                    authFloodSources,
                    apiRounds,
                    apiSubscribers,
                    stateRounds,
                    settle);
        }

        /** File descriptors one simulated minion holds in a swarm worker. */
        int workerFdsPerMinion() {
            return transport == Transport.ZEROMQ ? zmqClient.workerFdsPerMinion : transport.workerFdsPerMinion;
        }
    }

    static final String PREFIX = "bench-";
    static final String WARM_PREFIX = "warm-";
    /** The publisher session and the real minion also connect to the master. */
    private static final int EXTRA_CONNECTIONS = 4;

    private final Options options;
    private final Map<String, Object> json = new LinkedHashMap<>();
    private final Map<String, Object> scenarios = new LinkedHashMap<>();
    private final List<String> failures = new ArrayList<>();
    private MasterProcess master;
    private Swarm swarm;
    private Path runDir;

    Bench(Options options) {
        this.options = options;
    }

    int run() throws Exception {
        return run(
                options,
                json,
                failures,
                () -> runDir,
                () -> {
                    try {
                        runScenarios();
                    } finally {
                        json.put("scenarios", scenarios);
                    }
                },
                this::stopAll);
    }

    /** The run's figures, as written to {@code --json} (complete after {@link #run()}). */
    Map<String, Object> figures() {
        return json;
    }

    /** A measurement that may throw: what {@link #run(Options, Map, List, Supplier, Body, Runnable)} runs. */
    interface Body {
        void run() throws Exception;
    }

    /**
     * Runs {@code body} with {@code stopAll} as a shutdown hook and after it, whatever happens; a failure is one
     * line of {@code failures}. Then writes {@code json} (with the failures) where {@code --json} says, keeps the run
     * directory if asked or if anything failed, else removes it. The exit code: 0 without failures, else 1. Shared by
     * the single-master bench and {@link ClusterBench}.
     */
    static int run(
            Options options,
            Map<String, Object> json,
            List<String> failures,
            Supplier<Path> runDir,
            Body body,
            Runnable stopAll)
            throws IOException {
        Thread cleanup = new Thread(stopAll, "bench-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            body.run();
        } catch (Exception e) {
            failures.add(e.getMessage() == null ? e.toString() : e.getMessage());
            System.out.println("FAILED: " + e);
            e.printStackTrace(System.err);
        } finally {
            stopAll.run();
            Runtime.getRuntime().removeShutdownHook(cleanup);
        }
        json.put("failures", failures);
        if (options.json().isPresent()) {
            ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
            Files.writeString(options.json().get(), mapper.writeValueAsString(json) + "\n", StandardCharsets.UTF_8);
            System.out.println("figures written to " + options.json().get());
        }
        Path dir = runDir.get();
        if (dir != null) {
            if (options.keep() || !failures.isEmpty()) {
                System.out.println("run directory kept: " + dir);
            } else {
                deleteTree(dir);
                System.out.println("run directory removed");
            }
        }
        return failures.isEmpty() ? 0 : 1;
    }

    private void runScenarios() throws Exception {
        Transport transport = options.transport();
        json.put("brine_bench", 1);
        json.put("started", Instant.now().toString());
        json.put("command", command());
        json.put("machine", Machine.describe());
        json.put("transport", transport.configValue);
        json.put("protocol", options.salt() ? "salt" : "brine");
        if (transport == Transport.ZEROMQ) {
            json.put("zmq_client", options.zmqClient().configValue);
        }
        json.put("minions_requested", options.minions());
        System.out.printf(
                "brine-bench: %d %sminions over %s%s on %s%n",
                options.minions(),
                options.salt() ? "simulated Salt " : "",
                transport.configValue,
                transport == Transport.ZEROMQ
                        ? " (the swarm's ZeroMQ client: " + options.zmqClient().configValue + ")"
                        : "",
                Machine.oneLine());

        int warm = options.warmupMinions();
        KeyCache keys = options.keys();
        int wanted = options.minions() + warm;
        // keyrotate: each minion's second key, after the warm-up's (KeyCache.secondKey).
        int keysWanted = options.scenarios().contains(Scenario.KEYROTATE) ? wanted + options.minions() : wanted;
        int missing = keys.missing(keysWanted);
        if (missing > 0) {
            System.out.printf(
                    "key cache %s: generating %d RSA-%d keys on %d threads (once; later runs reuse them)%n",
                    keys.dir(), missing, KeyCache.BITS, Runtime.getRuntime().availableProcessors());
            long started = System.nanoTime();
            keys.ensure(
                    keysWanted,
                    Runtime.getRuntime().availableProcessors(),
                    n -> System.out.printf("  %d of %d keys generated%n", n, missing));
            System.out.printf("  done in %.0f s%n", (System.nanoTime() - started) / 1e9);
        }

        RsaLimits limits = RsaLimits.measure(keys.load(0), options.rsaSeconds());
        Map<String, Object> limitFigures = new LinkedHashMap<>();
        limitFigures.put("rsa2048_private_ops_per_s", round(limits.privateOpsPerSecond(), 1));
        limitFigures.put("rsa2048_public_ops_per_s", round(limits.publicOpsPerSecond(), 1));
        limitFigures.put("rsa2048_private_op_ms", round(limits.privateOpMillis(), 3));
        limitFigures.put("rsa2048_public_op_ms", round(limits.publicOpMillis(), 4));
        limitFigures.put("key_check_us", round(limits.keyCheckMicros(), 1));
        limitFigures.put("rsa_timing_core_share", round(limits.coreShare(), 3));
        limitFigures.put(
                "how",
                "JCA RSASSA-PSS-SHA256 sign (private) and verify (public), RSA-2048, and the key "
                        + "store's small-prime check of a new key, one thread, after warm-up, " + options.rsaSeconds()
                        + " s each, before the master starts; per second of the thread's CPU time (core share: its CPU"
                        + " time over the wall clock's)");
        json.put("limits", limitFigures);
        System.out.printf(
                "limits   RSA-2048 on one core: private op (PSS sign) %.0f/s = %.2f ms; public op (PSS "
                        + "verify) %.0f/s = %.3f ms; new key's check %.0f us = %.3f private ops (by the thread's CPU"
                        + " time; it had %.0f %% of a core)%n",
                limits.privateOpsPerSecond(),
                limits.privateOpMillis(),
                limits.publicOpsPerSecond(),
                limits.publicOpMillis(),
                limits.keyCheckMicros(),
                limits.keyCheckMicros() / 1000 / limits.privateOpMillis(),
                100 * limits.coreShare());

        Path home = options.masterHome()
                .orElse(Path.of(System.getProperty("brine.home", ".")))
                .toAbsolutePath();
        json.put("master_home", home.toString());
        runDir = Files.createTempDirectory("brine-bench-");
        String saltYaml = "# The simulated minions are stock Salt minions (--protocol salt).\nsalt_minions: true\n";
        if (options.scenarios().contains(Scenario.STATE)) {
            StateRun.writeTree(runDir.resolve("srv"));
            saltYaml += StateScenario.yaml(runDir.resolve("srv"));
        }
        int apiPort = options.scenarios().contains(Scenario.API) ? MasterProcess.freePorts(1)[0] : 0;
        int metricsPort = options.scenarios().contains(Scenario.RESTART) ? MasterProcess.freePorts(1)[0] : 0;
        master = MasterProcess.start(
                home,
                runDir.resolve("master"),
                transport,
                options.masterOpts(),
                wanted,
                (options.salt() ? saltYaml : "")
                        + (apiPort > 0 ? ApiScenario.yaml(apiPort) : "")
                        + (metricsPort > 0 ? RestartScenario.yaml(metricsPort) : ""));
        options.settle(3000);
        long heapIdle = master.liveHeapKib();
        long rssIdle = master.rssKib();
        int fdsIdle = master.openFiles();
        Map<String, Object> memory = new LinkedHashMap<>();
        memory.put("master_rss_idle_mib", round(rssIdle / 1024.0, 1));
        memory.put("master_heap_idle_mib", round(heapIdle / 1024.0, 1));
        memory.put("master_fds_idle", fdsIdle);

        int minions = fitMinions(fdsIdle);
        json.put("minions", minions);
        json.put("master_config", Files.readString(master.dir.resolve("master.yaml")));

        // Warm-up: a few minions authenticate (the master's auth path gets compiled), then go away. Their keys stay
        // accepted; deleting the first two later is what triggers the measured rotations.
        Swarm.warmUp(options, master, runDir, warm);
        options.settle(1000);
        long heapBaseline = master.liveHeapKib();
        Map<String, Long> histogramBaseline = master.histogram();
        int fdsBaseline = master.openFiles();
        memory.put("master_heap_baseline_mib", round(heapBaseline / 1024.0, 1));

        swarm = Swarm.start(options, master, runDir, minions, json);
        BenchRun run = new BenchRun(
                options,
                master,
                limits,
                runDir,
                minions,
                swarm,
                new Profiler(master, runDir, options.profile()),
                scenarios,
                failures);
        AuthScenario auth = new AuthScenario(run);
        swarm.connect(fdsBaseline);
        auth.auth();
        swarm.awaitSubscriptions(fdsBaseline);
        auth.reauth();

        long heapConnected = master.liveHeapKib();
        memory.put("master_heap_per_minion_by_class", heapGrowth(histogramBaseline, master.histogram(), 40, minions));
        long rssConnected = master.rssKib();
        // Both RSS figures are taken right after the full collections of the heap measurement.
        int fdsConnected = master.openFiles();
        memory.put("master_rss_connected_mib", round(rssConnected / 1024.0, 1));
        memory.put("master_heap_connected_mib", round(heapConnected / 1024.0, 1));
        memory.put("master_heap_per_minion_kib", round((heapConnected - heapBaseline) / (double) minions, 2));
        memory.put("master_fds_connected", fdsConnected);
        memory.put("master_fds_per_minion", round((fdsConnected - fdsBaseline) / (double) minions, 3));
        memory.put("worker_fds_per_minion", round(swarm.fdsPerMinion(), 2));
        memory.put("target_heap_per_minion_kib", 20);

        try (BrineClient client = run.publisher()) {
            PingScenario ping = new PingScenario(run);
            ping.readiness(client);
            if (options.scenarios().contains(Scenario.ROTATE) && options.salt()) {
                // Salt minions hold one aes key per master run; a removal rotates it and each minion learns the
                // new one by signing in again after a failed MAC: not brine's rotation, not simulated.
                scenarios.put("rotate", Map.of("skipped", "Salt minions have no key rotation of brine's kind"));
                System.out.println(
                        "rotate   skipped: Salt minions learn a new aes key by signing in again (not " + "simulated)");
            } else if (options.scenarios().contains(Scenario.ROTATE)) {
                new RotateScenario(run).run();
            }
            if (options.scenarios().contains(Scenario.KEYROTATE)) {
                new KeyRotateScenario(run).run(client);
            }
            if (options.scenarios().contains(Scenario.PING)) {
                ping.run(client);
            }
            if (options.scenarios().contains(Scenario.PUBLISH)) {
                new PublishScenario(run).run(client);
            }
            if (options.scenarios().contains(Scenario.API)) {
                new ApiScenario(run, apiPort).run(client);
            }
            if (options.scenarios().contains(Scenario.STATE)) {
                StateScenario.run(
                        run,
                        "brine's master",
                        options.stateRounds(),
                        timeout -> StateScenario.brineRound(ping, client, swarm, timeout));
            }
        }
        if (options.scenarios().contains(Scenario.MEMORY)) {
            new MemoryScenario(run).run(home, memory, rssIdle, rssConnected);
        }
        if (options.scenarios().contains(Scenario.RESTART)) {
            new RestartScenario(run, home, metricsPort, this::restarted).run();
        }
        if (options.scenarios().contains(Scenario.MASTERKEY)) {
            // Last: the swarm checks auth replies and publications with the key the run started with.
            new MasterKeyScenario(run).run();
        }
    }

    /** The master restarted by the restart scenario: the one to stop. */
    private synchronized void restarted(MasterProcess started) {
        master = started;
    }

    // ---------------------------------------------------------------- sizing

    /** The largest N the master's open-files limit allows, if the requested N does not fit. */
    private int fitMinions(int fdsIdle) {
        long limit = ProcStats.openFilesLimit(Long.toString(master.pid()));
        int perMinion = options.transport().masterFdsPerMinion;
        long needed = fdsIdle + (long) perMinion * (options.minions() + EXTRA_CONNECTIONS);
        // Headroom for what the master opens on its own (job cache files, the key store's scans, the JVM).
        long usable = limit - Math.max(100, limit / 100);
        Map<String, Object> fd = new LinkedHashMap<>();
        fd.put("limit", limit);
        fd.put("master_fds_idle", fdsIdle);
        fd.put("master_fds_per_minion", perMinion);
        fd.put("needed_for_requested", needed);
        json.put("fd_limit", fd);
        if (needed <= usable) {
            return options.minions();
        }
        int fits = (int) ((usable - fdsIdle) / perMinion) - EXTRA_CONNECTIONS;
        fits = fits / 100 * 100;
        String why = String.format(
                "%,d minions over %s need about %,d open files in the master (%d idle + %d per "
                        + "minion) but a process may hold %,d here, and the limit cannot be raised: measuring the largest N "
                        + "that fits with headroom, %,d",
                options.minions(), options.transport().configValue, needed, fdsIdle, perMinion, limit, fits);
        fd.put("largest_n_that_fits", fits);
        fd.put("note", why);
        System.out.println("fd limit " + why);
        return fits;
    }

    /** The classes whose live bytes grew most from {@code before} to {@code after}, in bytes per minion. */
    private static Map<String, Object> heapGrowth(
            Map<String, Long> before, Map<String, Long> after, int top, int minions) {
        Map<String, Object> growth = new LinkedHashMap<>();
        after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(top)
                .forEach(e -> growth.put(e.getKey(), round(e.getValue() / (double) minions, 1)));
        return growth;
    }

    // ---------------------------------------------------------------- cleanup, helpers

    private synchronized void stopAll() {
        if (swarm != null) {
            swarm.close();
        }
        if (master != null) {
            master.close();
        }
    }

    private String command() {
        StringBuilder command = new StringBuilder("bin/brine-bench --minions " + options.minions() + " --transport "
                + options.transport().configValue + (options.salt() ? " --protocol salt" : "")
                + (options.transport() == Transport.ZEROMQ ? " --zmq-client " + options.zmqClient().configValue : "")
                + (options.authFloodSources() > 0 ? " --auth-flood-sources " + options.authFloodSources() : "")
                + (options.scenarios().contains(Scenario.API)
                        ? " --api-rounds " + options.apiRounds() + " --api-subscribers " + options.apiSubscribers()
                        : "")
                + (options.scenarios().contains(Scenario.STATE) ? " --state-rounds " + options.stateRounds() : "")
                + " --scenarios ");
        command.append(String.join(
                ",",
                options.scenarios().stream()
                        .map(s -> s.name().toLowerCase(Locale.ROOT))
                        .toList()));
        options.json().ifPresent(file -> command.append(" --json ").append(file));
        return command.toString();
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    // best effort
                }
            });
        } catch (IOException e) {
            // best effort
        }
    }
}

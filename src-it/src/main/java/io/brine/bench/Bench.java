package io.brine.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.brine.bench.BenchMain.Scenario;
import io.brine.master.client.BrineClient;
import io.brine.master.client.ClientException;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.daemon.config.TransportKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The coordinator of one benchmark run: measures the RSA limits, starts the master and the swarm workers, runs the
 * scenarios in order, prints a line of figures per scenario and writes the JSON. Everything it starts, it stops.
 */
final class Bench {

    record Options(int minions, Transport transport, Set<Scenario> scenarios, Optional<Path> json, KeyCache keys,
            int minionsPerWorker, int pingRounds, int publications, int idleSeconds, Optional<Scenario> profile,
            boolean keep, String masterOpts, double rsaSeconds, int warmupMinions, Optional<Path> masterHome,
            int workerIoThreads) {
    }

    static final String PREFIX = "bench-";
    static final String WARM_PREFIX = "warm-";
    /** The publisher session and the real minion also connect to the master. */
    private static final int EXTRA_CONNECTIONS = 4;
    /** Requests without an answer at once, over all workers: under the master's auth queue (8,192). */
    private static final int AUTH_WINDOW = 2048;
    /** A minion with no answer this long asks again, as a real one does after auth_timeout (60 s). */
    private static final long AUTH_TIMEOUT_MS = 60_000;
    /** Connections opened a second, over all workers: the master's listen backlog is 100 (jeromq's default). */
    private static final int CONNECTS_PER_SECOND = 2000;
    private static final Pattern ROTATED = Pattern.compile(
            "Publish key rotated to generation (\\d+) .*: sent to (\\d+) minions, (\\d+) unreachable.*, (\\d+) ms");

    private final Options options;
    private final Map<String, Object> json = new LinkedHashMap<>();
    private final Map<String, Object> scenarios = new LinkedHashMap<>();
    private final List<WorkerProcess> workers = new ArrayList<>();
    private final List<String> failures = new ArrayList<>();
    private MasterProcess master;
    private RsaLimits limits;
    private Path runDir;
    private int minions;

    Bench(Options options) {
        this.options = options;
    }

    int run() throws Exception {
        Thread cleanup = new Thread(this::stopAll, "bench-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            runScenarios();
        } catch (Exception e) {
            failures.add(e.getMessage() == null ? e.toString() : e.getMessage());
            System.out.println("FAILED: " + e);
            e.printStackTrace(System.err);
        } finally {
            stopAll();
            Runtime.getRuntime().removeShutdownHook(cleanup);
        }
        json.put("scenarios", scenarios);
        json.put("failures", failures);
        if (options.json().isPresent()) {
            ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
            Files.writeString(options.json().get(), mapper.writeValueAsString(json) + "\n", StandardCharsets.UTF_8);
            System.out.println("figures written to " + options.json().get());
        }
        if (runDir != null) {
            if (options.keep() || !failures.isEmpty()) {
                System.out.println("run directory kept: " + runDir);
            } else {
                deleteTree(runDir);
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
        json.put("minions_requested", options.minions());
        System.out.printf("brine-bench: %d minions over %s on %s%n", options.minions(), transport.configValue,
                Machine.oneLine());

        int warm = options.warmupMinions();
        KeyCache keys = options.keys();
        int wanted = options.minions() + warm;
        int missing = keys.missing(wanted);
        if (missing > 0) {
            System.out.printf("key cache %s: generating %d RSA-%d keys on %d threads (once; later runs reuse them)%n",
                    keys.dir(), missing, KeyCache.BITS, Runtime.getRuntime().availableProcessors());
            long started = System.nanoTime();
            keys.ensure(wanted, Runtime.getRuntime().availableProcessors(),
                    n -> System.out.printf("  %d of %d keys generated%n", n, missing));
            System.out.printf("  done in %.0f s%n", (System.nanoTime() - started) / 1e9);
        }

        limits = RsaLimits.measure(keys.load(0), options.rsaSeconds());
        Map<String, Object> limitFigures = new LinkedHashMap<>();
        limitFigures.put("rsa2048_private_ops_per_s", round(limits.privateOpsPerSecond(), 1));
        limitFigures.put("rsa2048_public_ops_per_s", round(limits.publicOpsPerSecond(), 1));
        limitFigures.put("rsa2048_private_op_ms", round(limits.privateOpMillis(), 3));
        limitFigures.put("rsa2048_public_op_ms", round(limits.publicOpMillis(), 4));
        limitFigures.put("how", "JCA RSASSA-PSS-SHA256 sign (private) and verify (public), RSA-2048, one thread, "
                + "after warm-up, " + options.rsaSeconds() + " s each, before the master starts");
        json.put("limits", limitFigures);
        System.out.printf("limits   RSA-2048 on one core: private op (PSS sign) %.0f/s = %.2f ms; public op (PSS "
                + "verify) %.0f/s = %.3f ms%n", limits.privateOpsPerSecond(), limits.privateOpMillis(),
                limits.publicOpsPerSecond(), limits.publicOpMillis());

        Path home = options.masterHome().orElse(Path.of(System.getProperty("brine.home", ".")))
                .toAbsolutePath();
        json.put("master_home", home.toString());
        runDir = Files.createTempDirectory("brine-bench-");
        master = MasterProcess.start(home, runDir.resolve("master"), transport, options.masterOpts());
        MasterProcess.sleep(3000);
        long heapIdle = master.liveHeapKib();
        long rssIdle = master.rssKib();
        int fdsIdle = master.openFiles();
        Map<String, Object> memory = new LinkedHashMap<>();
        memory.put("master_rss_idle_mib", round(rssIdle / 1024.0, 1));
        memory.put("master_heap_idle_mib", round(heapIdle / 1024.0, 1));
        memory.put("master_fds_idle", fdsIdle);

        minions = fitMinions(fdsIdle);
        json.put("minions", minions);
        json.put("master_config", Files.readString(master.dir.resolve("master.yaml")));

        // Warm-up: a few minions authenticate (the master's auth path gets compiled), then go away. Their keys stay
        // accepted; deleting the first two later is what triggers the measured rotations.
        warmUp(keys, warm);
        MasterProcess.sleep(1000);
        long heapBaseline = master.liveHeapKib();
        Map<String, Long> histogramBaseline = master.histogram();
        int fdsBaseline = master.openFiles();
        memory.put("master_heap_baseline_mib", round(heapBaseline / 1024.0, 1));

        startWorkers(keys, transport);
        connect(fdsBaseline);
        auth();
        unwrap();
        awaitSubscriptions(fdsBaseline);
        reauth();

        long heapConnected = master.liveHeapKib();
        memory.put("master_heap_per_minion_by_class", heapGrowth(histogramBaseline, master.histogram(), 40));
        long rssConnected = master.rssKib();
        // Both RSS figures are taken right after the full collections of the heap measurement.
        int fdsConnected = master.openFiles();
        memory.put("master_rss_connected_mib", round(rssConnected / 1024.0, 1));
        memory.put("master_heap_connected_mib", round(heapConnected / 1024.0, 1));
        memory.put("master_heap_per_minion_kib", round((heapConnected - heapBaseline) / (double) minions, 2));
        memory.put("master_fds_connected", fdsConnected);
        memory.put("master_fds_per_minion", round((fdsConnected - fdsBaseline) / (double) minions, 3));
        memory.put("worker_fds_per_minion", round(workerFdsPerMinion(), 2));
        memory.put("target_heap_per_minion_kib", 20);

        try (BrineClient client = publisher()) {
            readiness(client);
            if (options.scenarios().contains(Scenario.ROTATE)) {
                rotate();
            }
            if (options.scenarios().contains(Scenario.PING)) {
                ping(client);
            }
            if (options.scenarios().contains(Scenario.PUBLISH)) {
                publish(client);
            }
        }
        if (options.scenarios().contains(Scenario.MEMORY)) {
            realMinion(home, memory);
            double heapPerMinion = (double) memory.get("master_heap_per_minion_kib");
            System.out.printf("memory   master RSS %.0f MiB idle, %.0f MiB with %,d minions; live heap %.1f KiB per "
                    + "minion [target <= 20: %s]; %.2f fds per minion in the master%n", rssIdle / 1024.0,
                    rssConnected / 1024.0, minions, heapPerMinion, verdict(heapPerMinion <= 20),
                    (double) memory.get("master_fds_per_minion"));
            scenarios.put("memory", memory);
        }
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
        String why = String.format("%,d minions over %s need about %,d open files in the master (%d idle + %d per "
                + "minion) but a process may hold %,d here, and the limit cannot be raised: measuring the largest N "
                + "that fits with headroom, %,d", options.minions(), options.transport().configValue, needed, fdsIdle,
                perMinion, limit, fits);
        fd.put("largest_n_that_fits", fits);
        fd.put("note", why);
        System.out.println("fd limit " + why);
        return fits;
    }

    /** The classes whose live bytes grew most from {@code before} to {@code after}, in bytes per minion. */
    private Map<String, Object> heapGrowth(Map<String, Long> before, Map<String, Long> after, int top) {
        Map<String, Object> growth = new LinkedHashMap<>();
        after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(top)
                .forEach(e -> growth.put(e.getKey(), round(e.getValue() / (double) minions, 1)));
        return growth;
    }

    private double workerFdsPerMinion() throws IOException {
        long total = 0;
        for (WorkerProcess worker : workers) {
            total += ProcStats.openFiles(worker.pid());
        }
        return (total - 60.0 * workers.size()) / minions;
    }

    // ---------------------------------------------------------------- the swarm

    private void warmUp(KeyCache keys, int count) throws IOException {
        long started = System.nanoTime();
        try (WorkerProcess warm = WorkerProcess.start(99, options.transport(), masterRequestPort(),
                master.masterPub(), keys, minionsRequestedKeyBase(), WARM_PREFIX, 0, count,
                runDir.resolve("worker-warm.log"), 512, options.workerIoThreads())) {
            warm.awaitReady(Duration.ofMinutes(5));
            warm.calibrateClock();
            warm.command("connect 500", Duration.ofMinutes(2));
            MasterProcess.sleep(1000);
            warm.command("auth " + count + " 20000", Duration.ofSeconds(30));
            String done = warm.event(Duration.ofMinutes(5));
            if (done == null) {
                throw new IOException("warm-up: not all " + count + " warm-up minions were accepted: "
                        + warm.command("status", Duration.ofSeconds(10)));
            }
            warm.command("unwrap", Duration.ofMinutes(5));
            warm.command("close", Duration.ofSeconds(30));
        }
        System.out.printf("warm-up  %d minions authenticated and left (%.1f s)%n", count,
                (System.nanoTime() - started) / 1e9);
    }

    /** Warm-up minions use the keys after the bench minions' ({@code N ..}), so one cache serves every N. */
    private int minionsRequestedKeyBase() {
        return options.minions();
    }

    private int masterRequestPort() {
        return options.transport() == Transport.TCP ? master.tcpPort : master.retPort;
    }

    private void startWorkers(KeyCache keys, Transport transport) throws IOException {
        long limit = ProcStats.openFilesLimit("self");
        // As many as the open-files limit allows with room to spare, and at most 2,500 so the swarm's own work
        // spreads over several JVMs.
        int perWorker = options.minionsPerWorker() > 0 ? options.minionsPerWorker()
                : (int) Math.min(2500, (limit * 3 / 4 - 200) / transport.workerFdsPerMinion);
        int count = (minions + perWorker - 1) / perWorker;
        int base = minions / count;
        int extra = minions % count;
        int first = 0;
        long started = System.nanoTime();
        for (int i = 0; i < count; i++) {
            int size = base + (i < extra ? 1 : 0);
            int heap = 256 + size / 8;
            workers.add(WorkerProcess.start(i, transport, masterRequestPort(), master.masterPub(), keys, 0, PREFIX,
                    first, size, runDir.resolve("worker-" + i + ".log"), heap, options.workerIoThreads()));
            first += size;
        }
        for (WorkerProcess worker : workers) {
            worker.awaitReady(Duration.ofMinutes(10));
            worker.calibrateClock();
        }
        long presign = 0;
        for (WorkerProcess worker : workers) {
            worker.send("presign");
        }
        for (WorkerProcess worker : workers) {
            presign = Math.max(presign, Long.parseLong(worker.answer("presign", Duration.ofMinutes(30))
                    .split(" ")[1]));
        }
        this.presignMillis = presign;
        Map<String, Object> swarm = new LinkedHashMap<>();
        swarm.put("workers", count);
        swarm.put("minions_per_worker", base + (extra > 0 ? 1 : 0));
        swarm.put("presign_ms", presign);
        json.put("swarm", swarm);
        System.out.printf("swarm    %d worker JVMs, %,d minions each at most; keys loaded and auth requests signed "
                + "in %.1f s%n", count, base + (extra > 0 ? 1 : 0), (System.nanoTime() - started) / 1e9);
    }

    private long presignMillis;
    private long unwrapMillis;

    private void connect(int fdsBaseline) throws IOException {
        long started = System.nanoTime();
        int perWorker = Math.max(1, CONNECTS_PER_SECOND / workers.size());
        for (WorkerProcess worker : workers) {
            worker.send("connect " + perWorker);
        }
        for (WorkerProcess worker : workers) {
            worker.answer("connect", Duration.ofMinutes(10));
        }
        int perMinion = options.transport() == Transport.ZEROMQ ? 1 : options.transport().masterFdsPerMinion;
        awaitFds(fdsBaseline + (long) perMinion * minions, Duration.ofSeconds(60 + minions / 200), "connections");
        System.out.printf("connect  %,d request connections open (%.1f s)%n", minions,
                (System.nanoTime() - started) / 1e9);
    }

    private void awaitFds(long expected, Duration timeout, String what) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        int tolerance = Math.max(2, minions / 1000);
        int fds;
        while ((fds = master.openFiles()) < expected - tolerance) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the master holds " + fds + " open files, expected about " + expected
                        + " with every minion's " + what + " open");
            }
            MasterProcess.sleep(100);
        }
        // Handshakes and subscriptions follow the accept() by a moment.
        MasterProcess.sleep(1000);
    }

    /** One auth round of every minion; figures as for the JSON. */
    private Map<String, Object> authRound(boolean profiled) throws IOException {
        Map<String, Object> figures = new LinkedHashMap<>();
        if (profiled) {
            profileStart(Scenario.AUTH);
        }
        Map<String, Long> threads0 = ProcStats.cpuMillisByThread(master.pid());
        long cpu0 = master.cpuMillis();
        long t0 = System.nanoTime();
        int window = Math.max(1, AUTH_WINDOW / workers.size());
        for (WorkerProcess worker : workers) {
            worker.send("auth " + window + " " + AUTH_TIMEOUT_MS);
        }
        for (WorkerProcess worker : workers) {
            worker.answer("auth", Duration.ofSeconds(30));
        }
        long last = 0;
        long first = Long.MAX_VALUE;
        int retries = 0;
        Duration timeout = Duration.ofSeconds(120 + minions / 20);
        long deadline = System.nanoTime() + timeout.toNanos();
        for (WorkerProcess worker : workers) {
            String event = null;
            while (event == null && System.nanoTime() < deadline) {
                event = worker.event(Duration.ofSeconds(1));
            }
            if (event == null) {
                StringBuilder status = new StringBuilder();
                for (WorkerProcess w : workers) {
                    status.append("\n  worker ").append(w.index).append(": ")
                            .append(w.command("status", Duration.ofSeconds(10)));
                }
                throw new IOException("auth: not every minion was accepted within " + timeout.toSeconds() + " s"
                        + status);
            }
            String[] words = event.split(" ");
            first = Math.min(first, worker.toLocal(Long.parseLong(words[3])));
            last = Math.max(last, worker.toLocal(Long.parseLong(words[4])));
            retries += Integer.parseInt(words[5]);
        }
        long cpu1 = master.cpuMillis();
        Map<String, Object> byThread = threadCpu(threads0, ProcStats.cpuMillisByThread(master.pid()));
        if (profiled) {
            profileStop(Scenario.AUTH);
        }
        long jit = jitMillis(byThread);
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
        figures.put("master_cpu_ms_by_thread", byThread);
        return figures;
    }

    private void auth() throws IOException {
        Map<String, Object> figures = authRound(true);
        double cpuPerAuth = (double) figures.get("master_cpu_ms_per_auth");
        double ratio = cpuPerAuth / limits.privateOpMillis();
        double authsPerSecond = (double) figures.get("auths_per_s");
        figures.put("target_master_cpu_per_auth_in_private_ops", 1.5);
        figures.put("met", ratio <= 1.5);
        scenarios.put("auth", figures);
        System.out.printf("auth     %,d new minions accepted in %.2f s: %.0f auths/s (%.2f x one core's private "
                + "ops/s); master CPU %.2f ms per auth = %.2f private ops (%.2f without the JIT compiler) [target "
                + "<= 1.5: %s]%n", minions, (double) figures.get("wall_ms") / 1000, authsPerSecond,
                authsPerSecond / limits.privateOpsPerSecond(), cpuPerAuth, ratio,
                (double) figures.get("master_cpu_ms_per_auth_without_jit") / limits.privateOpMillis(),
                verdict(ratio <= 1.5));
        @SuppressWarnings("unchecked")
        Map<String, Object> byThread = (Map<String, Object>) figures.get("master_cpu_ms_by_thread");
        System.out.println(threadLine(byThread));
    }

    /**
     * Every minion authenticates again with the key the master already holds, as after a master restart: no key
     * store write, so this is the auth path's own cost, with the code compiled.
     */
    private void reauth() throws IOException {
        for (WorkerProcess worker : workers) {
            worker.command("reset-sessions", Duration.ofMinutes(1));
            worker.send("presign");
        }
        for (WorkerProcess worker : workers) {
            worker.answer("presign", Duration.ofMinutes(30));
        }
        Map<String, Object> again = authRound(false);
        unwrap();
        @SuppressWarnings("unchecked")
        Map<String, Object> auth = (Map<String, Object>) scenarios.get("auth");
        auth.put("reauth", again);
        double cpuPerAuth = (double) again.get("master_cpu_ms_per_auth");
        System.out.printf("re-auth  %,d known minions authenticated again in %.2f s: %.0f auths/s; master CPU %.2f "
                + "ms per auth = %.2f private ops (%.2f without the JIT compiler)%n", minions,
                (double) again.get("wall_ms") / 1000, (double) again.get("auths_per_s"), cpuPerAuth,
                cpuPerAuth / limits.privateOpMillis(),
                (double) again.get("master_cpu_ms_per_auth_without_jit") / limits.privateOpMillis());
        @SuppressWarnings("unchecked")
        Map<String, Object> byThread = (Map<String, Object>) again.get("master_cpu_ms_by_thread");
        System.out.println(threadLine(byThread));
    }

    private void unwrap() throws IOException {
        for (WorkerProcess worker : workers) {
            worker.send("unwrap");
        }
        long failed = 0;
        long millis = 0;
        for (WorkerProcess worker : workers) {
            String[] words = worker.answer("unwrap", Duration.ofMinutes(30)).split(" ");
            failed += Long.parseLong(words[2]);
            millis = Math.max(millis, Long.parseLong(words[3]));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> auth = (Map<String, Object>) scenarios.get("auth");
        if (auth.containsKey("swarm_unwrap_ms")) {
            if (failed > 0) {
                throw new IOException(failed + " minions could not unwrap their session keys");
            }
            return;
        }
        unwrapMillis = millis;
        auth.put("swarm_presign_ms", presignMillis);
        auth.put("swarm_unwrap_ms", unwrapMillis);
        double endToEnd = ((Number) auth.get("wall_ms")).doubleValue() + presignMillis + unwrapMillis;
        auth.put("auths_per_s_with_swarm_crypto_in_window", round(minions / (endToEnd / 1000), 1));
        if (failed > 0) {
            throw new IOException(failed + " minions could not unwrap their session keys");
        }
    }

    private void awaitSubscriptions(int fdsBaseline) throws IOException {
        awaitFds(fdsBaseline + (long) options.transport().masterFdsPerMinion * minions,
                Duration.ofSeconds(60 + minions / 100), "subscriptions");
    }

    // ---------------------------------------------------------------- publisher scenarios

    private BrineClient publisher() throws ClientException {
        KeyPair root = BrineClient.readPrivate(master.rootKey(), "the master's root key");
        RSAPublicKey masterKey = BrineClient.readPublic(master.masterPub(), "the master key");
        TransportKind kind = options.transport() == Transport.TCP ? TransportKind.TCP : TransportKind.ZEROMQ;
        return BrineClient.connect(kind, "127.0.0.1", masterRequestPort(), "root", root, masterKey,
                Duration.ofSeconds(60));
    }

    private record PingRound(String jid, double firstMs, double p50Ms, double p99Ms, double lastMs, int returned,
            int missing, long masterCpuMs, long swarmCpuMs) {

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

    private PingRound pingRound(BrineClient client, Duration timeout) throws ClientException {
        long cpu0 = master.cpuMillis();
        long swarm0 = swarmCpuMillis();
        long t0 = System.nanoTime();
        BrineClient.Published published = client.publish(BrineClient.Job.of("glob", PREFIX + "*", "test.ping"));
        List<Long> times = new ArrayList<>(published.minions().size());
        client.awaitReturns(published.jid(), published.minions(), timeout, event -> times.add(System.nanoTime()));
        long cpu1 = master.cpuMillis();
        long swarm = swarmCpuMillis() - swarm0;
        times.sort(Comparator.naturalOrder());
        int n = times.size();
        int missing = minions - n;
        if (n == 0) {
            return new PingRound(published.jid(), -1, -1, -1, -1, 0, missing, cpu1 - cpu0, swarm);
        }
        return new PingRound(published.jid(), ms(times.get(0), t0), ms(percentile(times, 0.50), t0),
                ms(percentile(times, 0.99), t0), ms(times.get(n - 1), t0), n, missing, cpu1 - cpu0, swarm);
    }

    /** CPU used so far by all swarm worker processes (the simulated minions share the machine with the master). */
    private long swarmCpuMillis() {
        long total = 0;
        for (WorkerProcess worker : workers) {
            total += ProcStats.cpuMillis(worker.pid());
        }
        return total;
    }

    /** Until every minion answers a test.ping: each has its keys, its subscription, and the paths are compiled. */
    private void readiness(BrineClient client) throws IOException, ClientException {
        for (int round = 1; ; round++) {
            PingRound warm = pingRound(client, Duration.ofSeconds(60 + minions / 100));
            if (warm.missing() == 0) {
                System.out.printf("ready    every minion answered a warm-up test.ping (last after %.0f ms)%n",
                        warm.lastMs());
                return;
            }
            if (round == 3) {
                throw new IOException(warm.missing() + " minions never answered a warm-up test.ping");
            }
        }
    }

    private void ping(BrineClient client) throws ClientException {
        profileStart(Scenario.PING);
        Map<String, Long> threads0 = ProcStats.cpuMillisByThread(master.pid());
        List<PingRound> rounds = new ArrayList<>();
        for (int i = 0; i < options.pingRounds(); i++) {
            rounds.add(pingRound(client, Duration.ofSeconds(60 + minions / 100)));
            MasterProcess.sleep(500);
        }
        Map<String, Object> byThread = threadCpu(threads0, ProcStats.cpuMillisByThread(master.pid()));
        profileStop(Scenario.PING);
        List<PingRound> byLast = new ArrayList<>(rounds);
        byLast.sort(Comparator.comparingDouble(r -> r.missing() > 0 ? Double.MAX_VALUE : r.lastMs()));
        PingRound median = byLast.get((byLast.size() - 1) / 2);
        double target = minions <= 1000 ? 1000 : 3000;
        boolean met = median.missing() == 0 && median.lastMs() <= target;
        Map<String, Object> figures = median.figures();
        figures.put("master_cpu_ms_per_return", round(median.masterCpuMs() / (double) Math.max(1, median.returned()),
                4));
        figures.put("last_ms_in_private_ops", round(median.lastMs() / limits.privateOpMillis(), 1));
        figures.put("reported_round", "the median of " + rounds.size() + " rounds by last_ms, after a warm-up round");
        figures.put("rounds", rounds.stream().map(PingRound::figures).toList());
        figures.put("master_cpu_ms_by_thread_all_rounds", byThread);
        figures.put("target_last_ms", target);
        figures.put("met", met);
        scenarios.put("ping", figures);
        System.out.printf("ping     test.ping to %,d minions: first %.0f ms, p50 %.0f ms, p99 %.0f ms, last %.0f ms%s "
                + "(median of %d rounds; master CPU %.3f ms per return; the swarm's CPU %.3f ms per minion) [target "
                + "last <= %.0f ms: %s]%n", minions, median.firstMs(), median.p50Ms(), median.p99Ms(), median.lastMs(),
                median.missing() > 0 ? " (" + median.missing() + " missing)" : "", rounds.size(),
                median.masterCpuMs() / (double) Math.max(1, median.returned()),
                median.swarmCpuMs() / (double) Math.max(1, median.returned()), target, verdict(met));
        System.out.println(threadLine(byThread));
    }

    private void publish(BrineClient client) throws IOException, ClientException {
        int count = options.publications() > 0 ? options.publications()
                : Math.max(10, Math.min(500, 200_000 / minions));
        // Warm-up: a few, until every minion got them.
        resetDeliveries();
        for (int i = 0; i < 3; i++) {
            client.publish(BrineClient.Job.of("glob", PREFIX + "*", SimMinion.DELIVER_FUNCTION));
        }
        awaitDeliveries(3L * minions, Duration.ofSeconds(60 + minions / 100));
        resetDeliveries();
        profileStart(Scenario.PUBLISH);
        Map<String, Long> threads0 = ProcStats.cpuMillisByThread(master.pid());
        long cpu0 = master.cpuMillis();
        long swarm0 = swarmCpuMillis();
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            client.publish(BrineClient.Job.of("glob", PREFIX + "*", SimMinion.DELIVER_FUNCTION));
        }
        long requested = System.nanoTime();
        long[] delivered = awaitDeliveries((long) count * minions, Duration.ofSeconds(120 + count * minions / 20_000));
        long cpu1 = master.cpuMillis();
        long swarmCpu = swarmCpuMillis() - swarm0;
        Map<String, Object> byThread = threadCpu(threads0, ProcStats.cpuMillisByThread(master.pid()));
        profileStop(Scenario.PUBLISH);
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
        figures.put("master_cpu_ms_per_publication_without_jit", round((cpu1 - cpu0 - jitMillis(byThread))
                / (double) count, 2));
        figures.put("per_s_over_private_ops_per_s", round(perSecond / limits.privateOpsPerSecond(), 4));
        figures.put("master_cpu_ms_by_thread", byThread);
        figures.put("swarm_cpu_ms", swarmCpu);
        figures.put("how", "one publisher session publishing back to back (each waits for the master's "
                + "PublishReply); per_s counts publications that reached every minion, verified and opened");
        scenarios.put("publish", figures);
        System.out.printf("publish  %d signed, encrypted publications to %,d minions: %.1f/s = %,.0f deliveries/s "
                + "(%.3f x one core's private ops/s); master CPU %.1f ms per publication (%.1f without the JIT "
                + "compiler), the swarm's %.1f%n", count, minions, perSecond, count * (double) minions / wallS,
                perSecond / limits.privateOpsPerSecond(), (cpu1 - cpu0) / (double) count,
                (cpu1 - cpu0 - jitMillis(byThread)) / (double) count, swarmCpu / (double) count);
        System.out.println(threadLine(byThread));
    }

    private void resetDeliveries() throws IOException {
        for (WorkerProcess worker : workers) {
            worker.command("reset", Duration.ofSeconds(30));
        }
    }

    /** Waits until {@code expected} deliveries are counted; returns {count, the last delivery's local time}. */
    private long[] awaitDeliveries(long expected, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long count = 0;
            long last = 0;
            for (WorkerProcess worker : workers) {
                String[] words = worker.command("deliveries", Duration.ofSeconds(30)).split(" ");
                count += Long.parseLong(words[1]);
                long lastNanos = Long.parseLong(words[3]);
                if (lastNanos != 0) {
                    last = Math.max(last, worker.toLocal(lastNanos));
                }
            }
            if (count >= expected || System.nanoTime() > deadline) {
                if (count < expected) {
                    failures.add("publish: " + (expected - count) + " of " + expected + " deliveries missing");
                }
                return new long[] {count, last};
            }
            MasterProcess.sleep(50);
        }
    }

    // ---------------------------------------------------------------- rotation

    private void rotate() throws IOException {
        try (KeyStore keyStore = KeyStore.open(KeyStoreOptions.builder(master.pkiDir())
                .cachedir(master.dir.resolve("cache")).masterKey(false).createPkiDir(false)
                .pollInterval(Duration.ZERO).build())) {
            Map<String, Object> warm = rotation(keyStore, WARM_PREFIX + "00000", false);
            Map<String, Object> figures = rotation(keyStore, WARM_PREFIX + "00001", true);
            figures.put("warmup", warm);
            double cpuMs = ((Number) figures.get("master_cpu_ms")).doubleValue();
            // The target is for 10,000 minions (or the most that fit); below that, fixed costs dominate.
            boolean applies = minions >= 9000;
            boolean met = cpuMs <= 2000 && (long) figures.get("missing") == 0;
            figures.put("target_master_cpu_ms", 2000);
            figures.put("target", "at most 2 s of master CPU to rotate 10,000 minions");
            figures.put("target_applies", applies);
            figures.put("met", applies ? met : null);
            scenarios.put("rotate", figures);
            System.out.printf("rotate   %,d minions hold the new publish key %.0f ms after the revoking delete "
                    + "(the master's loop took %s ms); master CPU %d ms = %.1f us per minion [target <= 2000 ms at "
                    + "10,000: %s]%n", minions, (double) figures.get("wall_ms"), figures.get("master_rotate_loop_ms"),
                    (long) cpuMs, cpuMs * 1000 / minions, applies ? verdict(met) : "applies to 10,000 only");
            @SuppressWarnings("unchecked")
            Map<String, Object> byThread = (Map<String, Object>) figures.get("master_cpu_ms_by_thread");
            System.out.println(threadLine(byThread));
        } catch (io.brine.store.keys.KeyStoreException e) {
            throw new IOException("cannot open the master's key store: " + e.getMessage(), e);
        }
    }

    /** Deletes {@code victim}'s key, as {@code brine-key -d} does, and waits until every minion holds the new key. */
    private Map<String, Object> rotation(KeyStore keyStore, String victim, boolean measured) throws IOException {
        long before = Long.MAX_VALUE;
        for (WorkerProcess worker : workers) {
            before = Math.min(before, Long.parseLong(worker.command("generations -1", Duration.ofSeconds(30))
                    .split(" ")[3]));
        }
        int logLines = masterLog().size();
        if (measured) {
            profileStart(Scenario.ROTATE);
        }
        Map<String, Long> threads0 = ProcStats.cpuMillisByThread(master.pid());
        long cpu0 = master.cpuMillis();
        long t0 = System.nanoTime();
        AdminResult deleted = keyStore.delete(victim, "brine-bench");
        if (deleted.status() != AdminResult.Status.DONE) {
            throw new IOException("cannot delete the key of " + victim + ": " + deleted.message());
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60 + minions / 200).toNanos();
        int holding;
        long last;
        while (true) {
            holding = 0;
            last = 0;
            for (WorkerProcess worker : workers) {
                String[] words = worker.command("generations " + before, Duration.ofSeconds(30)).split(" ");
                holding += Integer.parseInt(words[1]);
                long lastNanos = Long.parseLong(words[2]);
                if (lastNanos != 0) {
                    last = Math.max(last, worker.toLocal(lastNanos));
                }
            }
            if (holding >= minions || System.nanoTime() > deadline) {
                break;
            }
            MasterProcess.sleep(20);
        }
        long cpu1 = master.cpuMillis();
        Map<String, Object> byThread = threadCpu(threads0, ProcStats.cpuMillisByThread(master.pid()));
        if (measured) {
            profileStop(Scenario.ROTATE);
        }
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("victim", victim);
        figures.put("wall_ms", round((last - t0) / 1e6, 1));
        figures.put("master_cpu_ms", cpu1 - cpu0);
        figures.put("master_cpu_us_per_minion", round((cpu1 - cpu0) * 1000.0 / minions, 2));
        figures.put("master_cpu_per_minion_in_private_ops", round((cpu1 - cpu0) / (double) minions
                / limits.privateOpMillis(), 4));
        figures.put("holding_new_generation", holding);
        figures.put("master_cpu_ms_by_thread", byThread);
        figures.put("missing", (long) (minions - holding));
        MasterProcess.sleep(300);
        for (String line : masterLog().subList(Math.min(logLines, masterLog().size()), masterLog().size())) {
            Matcher matcher = ROTATED.matcher(line);
            if (matcher.find()) {
                figures.put("master_rotate_loop_ms", Long.parseLong(matcher.group(4)));
                figures.put("master_sent", Long.parseLong(matcher.group(2)));
                figures.put("master_unreachable", Long.parseLong(matcher.group(3)));
            }
        }
        figures.put("how", "from brine-key's delete of one minion's key (the master notices within 200 ms and "
                + "rotates) until every simulated minion has installed the new generation");
        if (holding < minions) {
            failures.add("rotate: " + (minions - holding) + " minions never got the new publish key");
        }
        return figures;
    }

    private List<String> masterLog() throws IOException {
        Path log = master.dir.resolve("master.log");
        return Files.isRegularFile(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
    }

    // ---------------------------------------------------------------- a real minion

    private void realMinion(Path home, Map<String, Object> memory) throws IOException {
        Path dir = runDir.resolve("real-minion");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("minion.yaml"), String.join("\n",
                "id: real-minion",
                "master: 127.0.0.1",
                "transport: " + options.transport().configValue,
                "ret_port: " + master.retPort,
                "publish_port: " + master.publishPort,
                "tcp_port: " + master.tcpPort,
                "pki_dir: pki",
                "cachedir: cache",
                "log_file: minion.log",
                "acceptance_wait_time: 1",
                ""), StandardCharsets.UTF_8);
        Process minion = new ProcessBuilder(home.resolve("bin/brine-minion").toString(), "-c", dir.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("minion.out").toFile()).start();
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
            profileStart(Scenario.MEMORY);
            Map<String, Long> threads0 = ProcStats.cpuMillisByThread(master.pid());
            long minionCpu0 = ProcStats.cpuMillis(minion.pid());
            long masterCpu0 = master.cpuMillis();
            long t0 = System.nanoTime();
            MasterProcess.sleep(options.idleSeconds() * 1000L);
            Map<String, Object> byThread = threadCpu(threads0, ProcStats.cpuMillisByThread(master.pid()));
            profileStop(Scenario.MEMORY);
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
            memory.put("master_idle_cpu_pct_connected", round(masterPct, 2));
            memory.put("target_minion_rss_mib", 64);
            memory.put("target_minion_cpu_pct", 0.5);
            memory.put("met", (double) memory.get("master_heap_per_minion_kib") <= 20 && rss / 1024.0 <= 64
                    && minionPct <= 0.5);
            System.out.printf("minion   one real bin/brine-minion idle for %.0f s: RSS %.1f MiB [target <= 64: %s], "
                    + "CPU %.3f %% of a core [target <= 0.5: %s]; the master meanwhile: %.2f %% of a core with %,d "
                    + "minions connected%n", seconds, rss / 1024.0, verdict(rss / 1024.0 <= 64), minionPct,
                    verdict(minionPct <= 0.5), masterPct, minions);
            System.out.println(threadLine(byThread));
        } finally {
            minion.destroy();
            try {
                minion.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---------------------------------------------------------------- profiling, cleanup, helpers

    /** The master's CPU per thread group between two {@link ProcStats#cpuMillisByThread} readings, biggest first. */
    private static Map<String, Object> threadCpu(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Object> delta = new LinkedHashMap<>();
        after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> delta.put(e.getKey(), e.getValue()));
        return delta;
    }

    /** The JIT compiler threads' share of a {@link #threadCpu} delta: a fresh master compiles its hot paths. */
    private static long jitMillis(Map<String, Object> byThread) {
        return byThread.entrySet().stream().filter(e -> e.getKey().contains("CompilerThre"))
                .mapToLong(e -> (Long) e.getValue()).sum();
    }

    private static String threadLine(Map<String, Object> delta) {
        StringBuilder line = new StringBuilder("         master CPU by thread (ms):");
        delta.entrySet().stream().limit(8).forEach(e -> line.append(' ').append(e.getKey()).append(' ')
                .append(e.getValue()).append(';'));
        return line.toString();
    }

    private void profileStart(Scenario scenario) {
        if (options.profile().equals(Optional.of(scenario))) {
            try {
                master.startRecording(runDir.resolve("master-" + scenario.name().toLowerCase(Locale.ROOT) + ".jfr"));
            } catch (IOException e) {
                System.out.println("profile: cannot start JFR: " + e.getMessage());
            }
        }
    }

    private void profileStop(Scenario scenario) {
        if (options.profile().equals(Optional.of(scenario))) {
            try {
                master.stopRecording();
                Path recorded = runDir.resolve("master-" + scenario.name().toLowerCase(Locale.ROOT) + ".jfr");
                Path kept = Path.of("brine-bench-master-" + scenario.name().toLowerCase(Locale.ROOT) + ".jfr")
                        .toAbsolutePath();
                Files.copy(recorded, kept, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                System.out.println("profile  JFR recording of the master during " + scenario.name()
                        .toLowerCase(Locale.ROOT) + ": " + kept);
                System.out.print(JfrTop.summary(kept, 25));
            } catch (IOException e) {
                System.out.println("profile: cannot stop JFR: " + e.getMessage());
            }
        }
    }

    private synchronized void stopAll() {
        for (WorkerProcess worker : workers) {
            worker.close();
        }
        workers.clear();
        if (master != null) {
            master.close();
        }
    }

    private String command() {
        StringBuilder command = new StringBuilder("bin/brine-bench --minions " + options.minions() + " --transport "
                + options.transport().configValue + " --scenarios ");
        command.append(String.join(",", options.scenarios().stream().map(s -> s.name().toLowerCase(Locale.ROOT))
                .toList()));
        options.json().ifPresent(file -> command.append(" --json ").append(file));
        return command.toString();
    }

    static String verdict(boolean met) {
        return met ? "met" : "MISSED";
    }

    private static double ms(long nanos, long t0) {
        return (nanos - t0) / 1e6;
    }

    static long percentile(List<Long> sorted, double fraction) {
        int index = (int) Math.ceil(fraction * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    static double round(double value, int digits) {
        double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
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

// Over 400 lines: one class per cluster run (masters, swarm, four measurements and the JSON), kept apart from the
// single-master Bench it does not share a flow with.
package io.brine.bench;

import static io.brine.bench.Figures.round;

import io.brine.client.BrineClient;
import io.brine.cluster.ZkKeyStore;
import io.brine.cluster.ZkKeyStoreOptions;
import io.brine.daemon.config.TransportKind;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.crypto.Pem;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.PolicyVerdict;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;

/**
 * {@code brine-bench --masters M}: the simulated minions spread over M masters of one cluster (real processes, one
 * ZooKeeper server started in this JVM or an external ensemble), one swarm worker per master. Measures the first
 * auth of every minion (each a ZooKeeper transaction), a publish key rotation from a key deleted in ZooKeeper until
 * every minion on every master holds the new key, test.ping published through one master to all, and the cost of
 * one key transition through ZooKeeper against the filesystem store. Everything it starts, it stops.
 */
final class ClusterBench {

    /** Requests without an answer at once, over all workers. */
    private static final int AUTH_WINDOW = 2048;

    private static final long AUTH_TIMEOUT_MS = 60_000;
    /** Keys moved pending then accepted in each store to time a transition. */
    private static final int TRANSITIONS = 300;

    private final Bench.Options options;
    private final int masterCount;
    private final Optional<String> externalZookeeper;
    private final Map<String, Object> json = new LinkedHashMap<>();
    private final List<String> failures = new ArrayList<>();
    private final List<MasterProcess> masters = new ArrayList<>();
    private final List<WorkerProcess> workers = new ArrayList<>();
    private TestingServer zookeeper;
    private Path runDir;

    ClusterBench(Bench.Options options, int masterCount, Optional<String> externalZookeeper) {
        this.options = options;
        this.masterCount = masterCount;
        this.externalZookeeper = externalZookeeper;
    }

    int run() throws Exception {
        return Bench.run(options, json, failures, () -> runDir, this::measure, this::stopAll);
    }

    private void measure() throws Exception {
        int minions = options.minions();
        int warm = options.warmupMinions();
        json.put("brine_bench", 1);
        json.put("cluster", true);
        json.put("started", Instant.now().toString());
        json.put(
                "command",
                "bin/brine-bench --masters " + masterCount + " --minions " + minions
                        + externalZookeeper.map(z -> " --zookeeper " + z).orElse(""));
        json.put("machine", Machine.describe());
        json.put("masters", masterCount);
        json.put("minions", minions);
        System.out.printf(
                "brine-bench: %d minions over %d masters of one cluster, %s, on %s%n",
                minions, masterCount, options.transport().configValue, Machine.oneLine());

        KeyCache keys = options.keys();
        // Minions' keys, then the warm-up minions', then the cluster's master key and the publisher root key.
        int masterKeyIndex = minions + warm;
        keys.ensure(
                masterKeyIndex + 2 + TRANSITIONS,
                Runtime.getRuntime().availableProcessors(),
                n -> System.out.printf("  %d keys generated%n", n));
        RsaLimits limits = RsaLimits.measure(keys.load(0), options.rsaSeconds());
        json.put("rsa2048_private_op_ms", round(limits.privateOpMillis(), 3));

        String connect;
        String root = "/brine-bench-" + System.currentTimeMillis();
        if (externalZookeeper.isPresent()) {
            connect = externalZookeeper.get();
        } else {
            zookeeper = new TestingServer();
            connect = zookeeper.getConnectString();
        }
        json.put(
                "zookeeper",
                externalZookeeper.isPresent()
                        ? "external " + connect
                        : "one curator-test TestingServer (ZooKeeper 3.9.5) in the bench JVM, data on tmpfs or disk as /tmp is");

        runDir = Files.createTempDirectory("brine-bench-cluster-");
        json.put("key_transition", transitionCost(keys, connect, root + "-transitions", masterKeyIndex + 2));

        Path home = options.masterHome()
                .orElse(Path.of(System.getProperty("brine.home", ".")))
                .toAbsolutePath();
        KeyPair masterKey = keys.load(masterKeyIndex);
        KeyPair rootKey = keys.load(masterKeyIndex + 1);
        // The bench's own client (rotation, the transition cost) writes under the same root without credentials.
        String clusterYaml = "cluster:\n  connect: " + connect + "\n  root: " + root + "\n  insecure_open_acl: true\n";
        for (int i = 0; i < masterCount; i++) {
            Path dir = runDir.resolve("master-" + i);
            AtomicFiles.ensureDirectory(dir.resolve("pki"));
            AtomicFiles.ensureDirectory(dir.resolve("cache"));
            Files.writeString(dir.resolve("pki/master.pem"), Pem.privateKeyPkcs1(masterKey.getPrivate()));
            Files.writeString(dir.resolve("pki/master.pub"), Pem.publicKeySpki(masterKey.getPublic()));
            Files.writeString(dir.resolve("cache/root.pem"), Pem.privateKeyPkcs1(rootKey.getPrivate()));
            for (String file : List.of("pki/master.pem", "cache/root.pem")) {
                Files.setPosixFilePermissions(dir.resolve(file), PosixFilePermissions.fromString("r--------"));
            }
            masters.add(MasterProcess.start(
                    home, dir, options.transport(), options.masterOpts(), minions / masterCount + 1, clusterYaml));
        }
        System.out.printf("masters  %d started on %s%s%n", masterCount, connect, root);
        for (MasterProcess master : masters) {
            Swarm.warmUp(options, master, runDir, warm);
        }

        // One worker per master, each with its share of the minions.
        int first = 0;
        for (int i = 0; i < masterCount; i++) {
            int size = minions / masterCount + (i < minions % masterCount ? 1 : 0);
            MasterProcess master = masters.get(i);
            workers.add(WorkerProcess.start(
                    i,
                    options.transport(),
                    Swarm.requestPort(options, master),
                    master.masterPub(),
                    keys,
                    0,
                    Bench.PREFIX,
                    first,
                    size,
                    runDir.resolve("worker-" + i + ".log"),
                    256 + size / 8,
                    options.workerIoThreads(),
                    false,
                    options.zmqClient()));
            first += size;
        }
        for (WorkerProcess worker : workers) {
            worker.awaitReady(Duration.ofMinutes(10));
            worker.calibrateClock();
        }
        all("presign", "presign", Duration.ofMinutes(30));
        int[] fdsBefore = masters.stream().mapToInt(MasterProcess::openFiles).toArray();
        all("connect " + Math.max(1, 2000 / masterCount), "connect", Duration.ofMinutes(10));
        awaitFds(fdsBefore, 1);

        auth(limits, minions);
        awaitFds(fdsBefore, options.transport().masterFdsPerMinion);
        try (BrineClient client = publisher(masters.get(0), masterKey, rootKey)) {
            ping(client, minions, "ready", 1);
            rotate(connect, root, minions);
            ping(client, minions, "ping", Math.max(1, options.pingRounds()));
        }
    }

    /** The first auth of every minion, over all masters at once; each is a ZooKeeper transaction. */
    private void auth(RsaLimits limits, int minions) throws IOException {
        long cpu0 = mastersCpu();
        long t0 = System.nanoTime();
        all(
                "auth " + Math.max(1, AUTH_WINDOW / workers.size()) + " " + AUTH_TIMEOUT_MS,
                "auth",
                Duration.ofSeconds(30));
        long last = 0;
        int retries = 0;
        long deadline =
                System.nanoTime() + Duration.ofSeconds(120 + minions / 20).toNanos();
        for (WorkerProcess worker : workers) {
            String event = null;
            while (event == null && System.nanoTime() < deadline) {
                event = worker.event(Duration.ofSeconds(1));
            }
            if (event == null) {
                throw new IOException("auth: not every minion was accepted in time");
            }
            String[] words = event.split(" ");
            last = Math.max(last, worker.toLocal(Long.parseLong(words[4])));
            retries += Integer.parseInt(words[5]);
        }
        long cpu = mastersCpu() - cpu0;
        double wallMs = (last - t0) / 1e6;
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("wall_ms", round(wallMs, 1));
        figures.put("auths_per_s", round(minions / (wallMs / 1000), 1));
        figures.put("zookeeper_key_writes_per_s", round(minions / (wallMs / 1000), 1));
        figures.put("masters_cpu_ms_per_auth", round(cpu / (double) minions, 3));
        figures.put("masters_cpu_per_auth_in_private_ops", round(cpu / (double) minions / limits.privateOpMillis(), 3));
        figures.put("retries", retries);
        json.put("auth", figures);
        System.out.printf(
                "auth     %,d new minions accepted over %d masters in %.2f s: %.0f auths/s = %.0f key "
                        + "transactions/s in ZooKeeper; all masters' CPU %.2f ms per auth = %.2f private ops; %d retries%n",
                minions,
                masterCount,
                wallMs / 1000,
                minions / (wallMs / 1000),
                minions / (wallMs / 1000),
                cpu / (double) minions,
                cpu / (double) minions / limits.privateOpMillis(),
                retries);
        for (String answer : all("unwrap", "unwrap", Duration.ofMinutes(30))) {
            if (Long.parseLong(answer.split(" ")[2]) > 0) {
                throw new IOException("some minions could not unwrap their session keys: " + answer);
            }
        }
    }

    /** test.ping published through one master to every minion on every master; the median round. */
    private void ping(BrineClient client, int minions, String name, int rounds) throws Exception {
        List<Map<String, Object>> all = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            long cpu0 = mastersCpu();
            long t0 = System.nanoTime();
            BrineClient.Published published =
                    client.publish(BrineClient.Job.of("glob", Bench.PREFIX + "*", "test.ping"));
            List<Long> times = new ArrayList<>();
            client.awaitReturns(
                    published.jid(),
                    published.minions(),
                    Duration.ofSeconds(60 + minions / 100),
                    event -> times.add(System.nanoTime()));
            times.sort(Comparator.naturalOrder());
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("targets", published.minions().size());
            figures.put("unreachable", published.unreachable().size());
            figures.put("returned", times.size());
            figures.put("first_ms", times.isEmpty() ? -1 : round((times.get(0) - t0) / 1e6, 1));
            figures.put("p50_ms", times.isEmpty() ? -1 : round((times.get(times.size() / 2) - t0) / 1e6, 1));
            figures.put("last_ms", times.isEmpty() ? -1 : round((times.get(times.size() - 1) - t0) / 1e6, 1));
            figures.put("masters_cpu_ms", mastersCpu() - cpu0);
            all.add(figures);
            MasterProcess.sleep(500);
        }
        all.sort(Comparator.comparingDouble(f -> ((Number) f.get("last_ms")).doubleValue()));
        Map<String, Object> median = all.get((all.size() - 1) / 2);
        json.put(name, Map.of("median", median, "rounds", all));
        System.out.printf(
                "%-8s test.ping through master 0 to %,d minions on %d masters: %s returned, first %s ms, "
                        + "p50 %s ms, last %s ms, %s unreachable (median of %d)%n",
                name,
                minions,
                masterCount,
                median.get("returned"),
                median.get("first_ms"),
                median.get("p50_ms"),
                median.get("last_ms"),
                median.get("unreachable"),
                all.size());
        if ((int) median.get("returned") < minions) {
            failures.add(name + ": " + (minions - (int) median.get("returned")) + " minions did not return");
        }
    }

    /** A warm-up minion's key deleted in ZooKeeper: until every minion on every master holds the new key. */
    private void rotate(String connect, String root, int minions) throws Exception {
        long before = Long.MAX_VALUE;
        for (WorkerProcess worker : workers) {
            before = Math.min(
                    before,
                    Long.parseLong(worker.command("generations -1", Duration.ofSeconds(30))
                            .split(" ")[3]));
        }
        try (CuratorFramework client = curator(connect, root);
                KeyStore keyStore = ZkKeyStore.open(
                        client,
                        ZkKeyStoreOptions.of(runDir, null, AuditLog.none(), Clock.systemUTC()),
                        Duration.ofSeconds(30))) {
            long cpu0 = mastersCpu();
            long t0 = System.nanoTime();
            AdminResult deleted = keyStore.delete(Bench.WARM_PREFIX + "00000", "brine-bench");
            if (deleted.status() != AdminResult.Status.DONE) {
                throw new IOException("cannot delete a warm-up key: " + deleted.message());
            }
            long deadline =
                    System.nanoTime() + Duration.ofSeconds(60 + minions / 200).toNanos();
            int holding;
            long last;
            do {
                MasterProcess.sleep(20);
                holding = 0;
                last = 0;
                for (WorkerProcess worker : workers) {
                    String[] words = worker.command("generations " + before, Duration.ofSeconds(30))
                            .split(" ");
                    holding += Integer.parseInt(words[1]);
                    long lastNanos = Long.parseLong(words[2]);
                    if (lastNanos != 0) {
                        last = Math.max(last, worker.toLocal(lastNanos));
                    }
                }
            } while (holding < minions && System.nanoTime() < deadline);
            long cpu = mastersCpu() - cpu0;
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("wall_ms", round((last - t0) / 1e6, 1));
            figures.put("holding_new_generation", holding);
            figures.put("masters_cpu_ms", cpu);
            json.put("rotate", figures);
            System.out.printf(
                    "rotate   %,d minions on %d masters hold the new publish key %.0f ms after the key "
                            + "deleted in ZooKeeper; all masters' CPU %d ms%n",
                    holding, masterCount, (last - t0) / 1e6, cpu);
            if (holding < minions) {
                failures.add("rotate: " + (minions - holding) + " minions never got the new publish key");
            }
        }
    }

    /**
     * One key transition (pending, then accepted by an admin) through ZooKeeper and through the filesystem store,
     * {@link #TRANSITIONS} keys each, one after the other from one thread: milliseconds per transition and the ratio.
     */
    private Map<String, Object> transitionCost(KeyCache keys, String connect, String root, int firstKey)
            throws Exception {
        Map<String, Object> figures = new LinkedHashMap<>();
        double zk;
        try (CuratorFramework client = curator(connect, root);
                KeyStore store = ZkKeyStore.open(
                        client,
                        ZkKeyStoreOptions.of(runDir, null, AuditLog.none(), Clock.systemUTC()),
                        Duration.ofSeconds(30))) {
            zk = transitions(store, keys, firstKey);
        }
        double fs;
        Path pki = runDir.resolve("transitions-fs/pki");
        try (AuditLog audit = AuditLog.open(runDir.resolve("transitions-fs"), Clock.systemUTC());
                KeyStore store = FileKeyStore.open(KeyStoreOptions.builder(pki)
                        .auditLog(audit)
                        .masterKey(false)
                        .pollInterval(Duration.ZERO)
                        .build())) {
            fs = transitions(store, keys, firstKey);
        }
        figures.put("zookeeper_ms", round(zk, 3));
        figures.put("filesystem_ms", round(fs, 3));
        figures.put("ratio_zookeeper_over_filesystem", round(zk / fs, 2));
        figures.put(
                "how",
                TRANSITIONS + " keys offered (unknown to pending) then accepted (pending to accepted) "
                        + "one after the other from one thread, after " + TRANSITIONS / 3
                        + " of each to warm up; each a "
                        + "versioned ZooKeeper transaction with its audit znode, or temp file + fsync + rename under the lock "
                        + "with the audit line; one run");
        System.out.printf(
                "key      one key transition: %.2f ms through ZooKeeper, %.2f ms on the filesystem store "
                        + "(%.1f x), one thread, %d keys%n",
                zk, fs, zk / fs, TRANSITIONS);
        return figures;
    }

    /** Mean milliseconds per transition, after a warm-up third. */
    private static double transitions(KeyStore store, KeyCache keys, int firstKey) throws IOException {
        int warm = TRANSITIONS / 3;
        long measured = 0;
        int count = 0;
        for (int i = 0; i < warm + TRANSITIONS; i++) {
            String id = "transition-" + i;
            RSAPublicKey key =
                    (RSAPublicKey) keys.load(firstKey + (i % TRANSITIONS)).getPublic();
            long t0 = System.nanoTime();
            store.offer(id, key, PolicyVerdict.NONE);
            AdminResult accepted = store.accept(id, null, "brine-bench");
            long t1 = System.nanoTime();
            if (accepted.status() != AdminResult.Status.DONE) {
                throw new IOException("transition of " + id + " failed: " + accepted.message());
            }
            store.delete(id, "brine-bench");
            if (i >= warm) {
                measured += t1 - t0;
                count += 2;
            }
        }
        return measured / 1e6 / count;
    }

    private static CuratorFramework curator(String connect, String root) {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .namespace(root.substring(1))
                .retryPolicy(new ExponentialBackoffRetry(100, 6))
                .build();
        client.start();
        return client;
    }

    private BrineClient publisher(MasterProcess master, KeyPair masterKey, KeyPair rootKey) throws Exception {
        TransportKind kind = options.transport() == Transport.TCP ? TransportKind.TCP : TransportKind.ZEROMQ;
        return BrineClient.connect(
                kind,
                "127.0.0.1",
                kind == TransportKind.TCP ? master.tcpPort : master.retPort,
                "root",
                rootKey,
                (RSAPublicKey) masterKey.getPublic(),
                Duration.ofSeconds(60));
    }

    private long mastersCpu() {
        return masters.stream().mapToLong(MasterProcess::cpuMillis).sum();
    }

    private List<String> all(String line, String what, Duration timeout) throws IOException {
        for (WorkerProcess worker : workers) {
            worker.send(line);
        }
        List<String> answers = new ArrayList<>();
        for (WorkerProcess worker : workers) {
            answers.add(worker.answer(what, timeout));
        }
        return answers;
    }

    /** Until each master holds about {@code perMinion} more open files per minion of its worker. */
    private void awaitFds(int[] before, int perMinion) throws IOException {
        long deadline = System.nanoTime()
                + Duration.ofSeconds(60 + options.minions() / 100).toNanos();
        for (int i = 0; i < masters.size(); i++) {
            long expected =
                    before[i] + (long) perMinion * workers.get(i).count - Math.max(2, workers.get(i).count / 1000);
            while (masters.get(i).openFiles() < expected) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("master " + i + " holds "
                            + masters.get(i).openFiles() + " open files, expected " + expected);
                }
                MasterProcess.sleep(100);
            }
        }
        MasterProcess.sleep(1000);
    }

    private synchronized void stopAll() {
        for (WorkerProcess worker : workers) {
            worker.close();
        }
        workers.clear();
        for (MasterProcess master : masters) {
            master.close();
        }
        masters.clear();
        if (zookeeper != null) {
            try {
                zookeeper.close();
            } catch (IOException e) {
                // stopping anyway
            }
            zookeeper = null;
        }
    }
}

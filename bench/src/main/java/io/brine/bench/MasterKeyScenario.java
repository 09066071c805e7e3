package io.brine.bench;

import static io.brine.bench.Figures.round;

import io.brine.bench.BenchMain.Scenario;
import io.brine.daemon.config.ConfigException;
import io.brine.daemon.config.MasterConfig;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.MasterKeyRotation;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The master's key rotated with every minion connected, as {@code brine-key --rotate-master-key} does it ({@link
 * FileKeyStore#rotateMasterKey} with master.yaml's {@code keysize}, {@code master_key_grace} and {@code
 * master_key_chain}): the master loads the new key on its next one-second tick and sends the chain of succession
 * records to every session; each simulated minion walks it from the key it pinned, as a minion does, and pins the new
 * key. Measured: the time until every minion has pinned it, and the master's CPU for it. Runs last: the swarm's own
 * checks of auth replies and publications keep the key the run started with.
 */
final class MasterKeyScenario {

    private static final Pattern SENT =
            Pattern.compile("Master key rotated to \\S+: chain sent to (\\d+) minions, (\\d+) unreachable");

    private final BenchRun run;
    private final int minions;

    MasterKeyScenario(BenchRun run) {
        this.run = run;
        this.minions = run.minions();
    }

    void run() throws IOException {
        MasterProcess master = run.master();
        MasterConfig settings;
        try {
            settings = MasterConfig.loadFile(master.dir.resolve(MasterConfig.FILE_NAME));
        } catch (ConfigException e) {
            throw new IOException("cannot read the master's master.yaml: " + e.getMessage(), e);
        }
        int logLines = run.master().logLines().size();
        run.profiler().start(Scenario.MASTERKEY);
        Map<String, Long> threads0 = run.profiler().threads();
        long cpu0 = master.cpuMillis();
        long t0 = System.nanoTime();
        MasterKeyRotation.Rotated rotated;
        try (AuditLog audit = AuditLog.open(master.dir.resolve("cache"), Clock.systemUTC());
                FileKeyStore keyStore = RotateScenario.openKeyStore(master, audit)) {
            rotated = keyStore.rotateMasterKey(
                    settings.keysize(),
                    settings.masterKeyGrace(),
                    settings.masterKeyChain(),
                    Optional.empty(),
                    Clock.systemUTC());
        } catch (KeyStoreException e) {
            throw new IOException("cannot rotate the master key: " + e.getMessage(), e);
        }
        long committed = System.nanoTime();
        long deadline = committed + Duration.ofSeconds(60 + minions / 200).toNanos();
        int pinned;
        int refused;
        long last;
        String refusal;
        while (true) {
            pinned = 0;
            refused = 0;
            last = 0;
            refusal = "";
            for (WorkerProcess worker : run.swarm().workers()) {
                String[] words =
                        worker.command("master-pins", Duration.ofSeconds(30)).split(" ", 5);
                pinned += Integer.parseInt(words[1]);
                refused += Integer.parseInt(words[2]);
                long lastNanos = Long.parseLong(words[3]);
                if (lastNanos != 0) {
                    last = Math.max(last, worker.toLocal(lastNanos));
                }
                if (words.length > 4 && !words[4].isEmpty()) {
                    refusal = words[4];
                }
            }
            if (pinned + refused >= minions || System.nanoTime() > deadline) {
                break;
            }
            MasterProcess.sleep(50);
        }
        long cpu1 = master.cpuMillis();
        Map<String, Object> byThread = run.profiler().threadCpuSince(threads0);
        run.profiler().stop(Scenario.MASTERKEY);
        long jit = Profiler.jitMillis(byThread);
        long cpu = cpu1 - cpu0;
        double op = run.limits().privateOpMillis();
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("new_master_key", Fingerprints.of(rotated.next()));
        figures.put("keysize", settings.keysize());
        figures.put("rotate_ms", round((committed - t0) / 1e6, 1));
        figures.put("all_pinned_ms", pinned >= minions ? round((last - committed) / 1e6, 1) : null);
        figures.put("pinned", pinned);
        figures.put("chains_refused", refused);
        figures.put("last_refusal", refusal);
        figures.put("master_cpu_ms", cpu);
        figures.put("master_jit_cpu_ms", jit);
        figures.put("master_cpu_us_per_minion", round(cpu * 1000.0 / minions, 2));
        figures.put("master_cpu_us_per_minion_without_jit", round((cpu - jit) * 1000.0 / minions, 2));
        figures.put("master_cpu_in_private_ops", round(cpu / op, 1));
        figures.put("master_cpu_in_private_ops_without_jit", round((cpu - jit) / op, 1));
        figures.put("master_cpu_ms_by_thread", byThread);
        MasterProcess.sleep(300);
        List<String> log = run.master().logLines();
        for (String line : log.subList(Math.min(logLines, log.size()), log.size())) {
            Matcher matcher = SENT.matcher(line);
            if (matcher.find()) {
                figures.put("master_sent", Long.parseLong(matcher.group(1)));
                figures.put("master_unreachable", Long.parseLong(matcher.group(2)));
            }
        }
        figures.put(
                "how",
                "brine-key --rotate-master-key's store call (FileKeyStore.rotateMasterKey: the new key pair made and"
                        + " signed in the bench's process, rotate_ms), then from its commit until every simulated minion"
                        + " has walked the chain the master sent from its pinned key and pinned the new key; master CPU"
                        + " from the call until the last pin (it loads the key on its one-second tick)");
        run.scenarios().put("masterkey", figures);
        System.out.printf(
                "masterkey %,d of %,d minions pinned the new master key %s after brine-key's rotation (its own %.0f ms;"
                        + " %d chains refused); master CPU %d ms = %.1f private ops (%.1f without the JIT compiler),"
                        + " %.1f us per minion%n",
                pinned,
                minions,
                pinned >= minions ? String.format("%.0f ms", (last - committed) / 1e6) : "never",
                (committed - t0) / 1e6,
                refused,
                cpu,
                cpu / op,
                (cpu - jit) / op,
                cpu * 1000.0 / minions);
        System.out.println(Profiler.threadLine(byThread));
        if (pinned < minions) {
            run.failures()
                    .add("masterkey: " + (minions - pinned) + " minions did not pin the new master key (" + refused
                            + " refused" + (refusal.isEmpty() ? "" : ": " + refusal) + ")");
        }
    }
}

package io.brine.bench;

import static io.brine.bench.Figures.round;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.brine.bench.BenchMain.Scenario;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code brine-bench --against salt}: the same simulated stock-Salt swarm ({@link SaltSimMinion}) against brine's
 * master with {@code salt_minions: true} (a whole {@link Bench} run: auth, ping, memory), then against a real
 * salt-master ({@link MasterProcess#startSalt}): first auths, test.ping rounds ({@link SaltPing}), the master's
 * memory per minion and its idle CPU, measured over the salt-master's whole process tree; then the ratios
 * ({@link SideBySide}).
 */
final class AgainstSalt {

    /** How long a salt-master may take to serve: 13.5 s measured at a load of 22 on 2 cores; ten times that. */
    private static final Duration SALT_START = Duration.ofSeconds(180);

    private final Bench.Options options;
    private final Path saltScript;
    private final Map<String, Object> json = new LinkedHashMap<>();
    private final Map<String, Object> saltScenarios = new LinkedHashMap<>();
    private final List<String> failures = new ArrayList<>();
    private MasterProcess master;
    private Swarm swarm;
    private Path runDir;
    /** The sign-in requests the minions sent after the salt-master's restart, resends included. */
    private long signInRequests;

    AgainstSalt(Bench.Options options, Path saltScript) {
        this.options = options;
        this.saltScript = saltScript;
    }

    /**
     * The Salt program runner to run: {@code saltDir}'s {@code salt} ({@code --salt-dir}), else the one the
     * environment's {@code BRINE_SALT} names (as for the Salt tests and {@code .ci/run}, which sets it for a clone
     * made away from the shared folder), else {@code ../shared/salt/salt} beside the checkout at {@code brineHome}.
     */
    static Path saltScript(Optional<Path> saltDir, Optional<String> brineSalt, Path brineHome) {
        if (saltDir.isPresent()) {
            return saltDir.get().resolve("salt");
        }
        return brineSalt
                .filter(script -> !script.isBlank())
                .map(Path::of)
                .orElseGet(() -> brineHome
                        .toAbsolutePath()
                        .normalize()
                        .resolveSibling("shared")
                        .resolve("salt")
                        .resolve("salt"))
                .toAbsolutePath();
    }

    /**
     * Why the Salt program runner {@code script} ({@link #saltScript}) cannot run the salt-master, if it cannot: one
     * line for stderr.
     */
    static Optional<String> missingSalt(Path script) {
        Path saltDir = script.toAbsolutePath().getParent();
        if (!Files.isDirectory(saltDir)) {
            return Optional.of("--against salt needs Salt's release tarballs and their runner in " + saltDir
                    + " (../shared/salt beside the checkout, or where BRINE_SALT names the runner): no such directory; "
                    + "give another with --salt-dir DIR");
        }
        if (!Files.isExecutable(script) || !Files.isRegularFile(saltDir.resolve("salt-3008.2.tar.gz"))) {
            return Optional.of("--against salt: " + saltDir + " has no executable '" + script.getFileName()
                    + "' runner and salt-3008.2.tar.gz beside it (../shared/salt); give another with --salt-dir DIR");
        }
        return Optional.empty();
    }

    int run() throws Exception {
        json.put("brine_bench", 1);
        json.put("against", "salt");
        json.put("started", Instant.now().toString());
        json.put("machine", Machine.describe());
        json.put("load_average_at_start", Machine.loadAverage());
        System.out.printf(
                "brine-bench --against salt: %,d simulated Salt minions, first against brine's master, "
                        + "then against a real salt-master 3008.2%n",
                options.minions());
        Set<Scenario> brineScenarios = EnumSet.of(Scenario.AUTH, Scenario.PING, Scenario.MEMORY);
        if (options.scenarios().contains(Scenario.STATE)) {
            brineScenarios.add(Scenario.STATE);
        }
        Bench brine = new Bench(brineOptions(brineScenarios, true));
        int brineExit = brine.run();
        json.put("brine", brine.figures());
        if (brineExit != 0) {
            return failed("the brine side failed; the salt-master was not measured", brineExit);
        }
        Map<String, Object> brineRestart = Map.of();
        if (options.scenarios().contains(Scenario.RESTART)) {
            // brine's restart is its minions' (tickets, then full auths: --scenarios restart); Salt minions have none.
            System.out.println("--- brine's master restarted with as many brine minions (--scenarios restart) ---");
            Bench restart = new Bench(brineOptions(EnumSet.of(Scenario.AUTH, Scenario.RESTART), false));
            int restartExit = restart.run();
            json.put("brine_restart", restart.figures());
            if (restartExit != 0) {
                // The salt-master is measured all the same; its restart has no brine figure to compare with.
                failures.add("brine's restart failed: " + restart.figures().get("failures"));
            }
            brineRestart = restart.figures();
        }
        System.out.println("--- the same swarm against a real salt-master 3008.2 ---");
        int failedBefore = failures.size();
        // The JSON is written once, below, with the side by side: not by the salt-master's run as well.
        int saltExit = Bench.run(
                options.withoutJson(),
                json,
                failures,
                () -> runDir,
                () -> {
                    try {
                        salt(json);
                    } finally {
                        json.put("salt", saltScenarios);
                    }
                },
                this::stopAll);
        if (failures.size() > failedBefore) {
            write();
            return saltExit;
        }
        SideBySide.MasterFigures saltFigures = saltFigures();
        List<SideBySide.Row> rows = SideBySide.rows(SideBySide.brineFigures(brine.figures()), saltFigures);
        if (options.scenarios().contains(Scenario.RESTART)) {
            rows.addAll(SideBySide.restartRows(brineRestart, saltScenarios));
        }
        SideBySide.lines(rows).forEach(System.out::println);
        System.out.printf(
                "load average at the end: %s (2 cores: above 2, other work shares the CPU and the figures "
                        + "carry its noise)%n",
                Machine.loadAverage());
        json.put("side_by_side", SideBySide.json(rows));
        json.put("load_average_at_end", Machine.loadAverage());
        write();
        return failures.isEmpty() ? 0 : 1;
    }

    /** The run ends before the salt-master: {@code why} among the failures, the JSON written; {@code exit}. */
    private int failed(String why, int exit) throws IOException {
        failures.add(why);
        json.put("failures", failures);
        write();
        return exit;
    }

    /** A run of brine's master on this run's swarm options: {@code scenarios}, Salt's or brine's minions, no JSON. */
    private Bench.Options brineOptions(Set<Scenario> scenarios, boolean saltMinions) {
        return new Bench.Options(
                options.minions(),
                Transport.ZEROMQ,
                scenarios,
                Optional.empty(),
                options.keys(),
                options.minionsPerWorker(),
                options.pingRounds(),
                0,
                options.idleSeconds(),
                Optional.empty(),
                options.keep(),
                options.masterOpts(),
                options.rsaSeconds(),
                options.warmupMinions(),
                options.masterHome(),
                options.workerIoThreads(),
                saltMinions,
                options.zmqClient(),
                0,
                options.apiRounds(),
                options.apiSubscribers(),
                options.stateRounds(),
                options.settle());
    }

    private SideBySide.MasterFigures saltFigures() {
        return new SideBySide.MasterFigures(
                number(saltScenarios, "auth", "auths_per_s"),
                number(saltScenarios, "auth", "master_cpu_ms_per_auth"),
                number(saltScenarios, "ping", "last_ms"),
                number(saltScenarios, "memory", "master_pss_kib_per_minion"),
                number(saltScenarios, "memory", "master_idle_cpu_pct_connected"),
                number(saltScenarios, "state", "last_ms"),
                number(saltScenarios, "state", "master_cpu_ms_per_minion"));
    }

    @SuppressWarnings("unchecked")
    private static double number(Map<String, Object> scenarios, String scenario, String figure) {
        Object value =
                scenarios.get(scenario) instanceof Map<?, ?> map ? ((Map<String, Object>) map).get(figure) : null;
        return value instanceof Number number ? number.doubleValue() : Double.NaN;
    }

    private void write() throws IOException {
        if (options.json().isPresent()) {
            ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
            Files.writeString(options.json().get(), mapper.writeValueAsString(json) + "\n", StandardCharsets.UTF_8);
            System.out.println("figures written to " + options.json().get());
        }
    }

    private void salt(Map<String, Object> figures) throws Exception {
        int minions = options.minions();
        RsaLimits limits = RsaLimits.measure(options.keys().load(0), options.rsaSeconds());
        runDir = Files.createTempDirectory("brine-bench-salt-");
        long started = System.nanoTime();
        master = MasterProcess.startSalt(saltScript, runDir.resolve("salt-master"), SALT_START);
        double startSeconds = (System.nanoTime() - started) / 1e9;
        figures.put("salt_master_config", Files.readString(master.dir.resolve("conf/master")));
        MasterProcess.sleep(3000);
        long rssIdle = master.rssKib();
        int processes = ProcStats.tree(master.pid()).size();
        System.out.printf(
                "salt     salt-master serving after %.1f s: %d processes, PSS %.0f MiB before any minion%n",
                startSeconds, processes, rssIdle / 1024.0);
        Map<String, Object> memory = new LinkedHashMap<>();
        memory.put("master_start_s", round(startSeconds, 1));
        memory.put("master_processes", processes);
        memory.put("master_pss_idle_mib", round(rssIdle / 1024.0, 1));

        swarm = Swarm.start(options, master, runDir, minions, figures);
        BenchRun run = new BenchRun(
                options,
                master,
                limits,
                runDir,
                minions,
                swarm,
                new Profiler(master, runDir, Optional.empty()),
                saltScenarios,
                failures);
        // The salt-master's processes open and close files of their own while it settles: the baseline is taken
        // just before the minions connect.
        int fdsIdle = master.openFiles();
        swarm.connect(fdsIdle);
        new AuthScenario(run).auth();
        swarm.awaitSubscriptions(fdsIdle);

        try (SaltPing ping = new SaltPing(master, minions)) {
            Duration timeout = Duration.ofSeconds(60 + minions / 100);
            SaltPing.Round warm = ping.ping(Bench.PREFIX + "*", minions, timeout);
            System.out.printf(
                    "ready    warm-up test.ping: %d of %d returned (last after %.0f ms)%n",
                    warm.returnsMs().size(), minions, warm.lastMs());
            List<SaltPing.Round> rounds = new ArrayList<>();
            for (int i = 0; i < options.pingRounds(); i++) {
                rounds.add(ping.ping(Bench.PREFIX + "*", minions, timeout));
                MasterProcess.sleep(500);
            }
            List<SaltPing.Round> byLast = new ArrayList<>(rounds);
            byLast.sort(Comparator.comparingDouble(r -> r.missing() > 0 ? Double.MAX_VALUE : r.lastMs()));
            SaltPing.Round median = byLast.get((byLast.size() - 1) / 2);
            Map<String, Object> pingFigures = median.figures();
            pingFigures.put(
                    "reported_round",
                    "the median of " + rounds.size() + " rounds by last_ms, after a " + "warm-up round");
            pingFigures.put(
                    "rounds", rounds.stream().map(SaltPing.Round::figures).toList());
            saltScenarios.put("ping", pingFigures);
            System.out.printf(
                    "ping     test.ping to %,d minions: last return in the salt-master's job cache after "
                            + "%.0f ms%s (median of %d rounds; master CPU %.2f ms per return)%n",
                    minions,
                    median.lastMs(),
                    median.missing() > 0 ? " (" + median.missing() + " missing)" : "",
                    rounds.size(),
                    median.masterCpuMs()
                            / (double) Math.max(1, median.returnsMs().size()));
            if (median.missing() > 0) {
                throw new IOException(median.missing() + " minions did not return test.ping to the salt-master");
            }
            if (options.scenarios().contains(Scenario.STATE)) {
                StateScenario.run(
                        run,
                        "the salt-master",
                        options.stateRounds(),
                        limit -> StateScenario.saltRound(ping, minions, swarm, limit));
            }
        }

        long rssConnected = master.rssKib();
        memory.put("master_pss_connected_mib", round(rssConnected / 1024.0, 1));
        memory.put("master_pss_kib_per_minion", round((rssConnected - rssIdle) / (double) minions, 2));
        long cpu0 = master.cpuMillis();
        long t0 = System.nanoTime();
        MasterProcess.sleep(options.idleSeconds() * 1000L);
        double seconds = (System.nanoTime() - t0) / 1e9;
        double idlePct = (master.cpuMillis() - cpu0) / 10.0 / seconds;
        memory.put("master_idle_cpu_pct_connected", round(idlePct, 2));
        memory.put("master_idle_seconds", round(seconds, 1));
        saltScenarios.put("memory", memory);
        System.out.printf(
                "memory   salt-master PSS %.0f MiB idle, %.0f MiB with %,d minions (%.1f KiB per minion); "
                        + "idle for %.0f s with every minion connected: %.2f %% of a core%n",
                rssIdle / 1024.0,
                rssConnected / 1024.0,
                minions,
                (rssConnected - rssIdle) / (double) minions,
                seconds,
                idlePct);
        if (options.scenarios().contains(Scenario.RESTART)) {
            RestartScenario.Recovery recovery = restart(minions);
            Map<String, Object> restart = recovery.figures(limits.privateOpMillis());
            restart.put(
                    "how",
                    "SIGTERM to the salt-master with every minion connected, the same salt-master again on "
                            + "the same config, pki dir and ports; from it listening until every minion answered one "
                            + "test.ping (rounds of SaltPing's bound, 60 s + 300 ms per minion, until one is complete): "
                            + "each minion signs in again when it cannot open the first publication (a new aes), with a "
                            + "stock minion's timers; full_auths are those sign-ins, counted by the swarm");
            saltScenarios.put("restart", restart);
            restart.put("sign_in_requests", signInRequests);
            System.out.println(recovery.line(limits.privateOpMillis()));
        }
    }

    /** Rounds of test.ping after the salt-master's restart, at most this many until one is complete. */
    private static final int RESTART_ROUNDS = 3;

    /**
     * The salt-master restarted with every minion connected: from the new one listening until every minion has
     * answered one test.ping, and the master's CPU (its whole process tree) over that time.
     */
    private RestartScenario.Recovery restart(int minions) throws IOException {
        long stopped = System.nanoTime();
        master = master.restartSalt(saltScript, SALT_START);
        long listening = System.nanoTime();
        long startCpu = master.cpuMillis();
        // The minions' ZeroMQ sockets connect again on their own; a publication before their SUB is back is lost
        // to them, as to stock minions, so the first test.ping waits for the connections.
        Duration timeout = SaltPing.answerTimeout(minions);
        long deadline = listening + timeout.toNanos();
        while (ProcStats.established(master.publishPort) < minions || ProcStats.established(master.retPort) < minions) {
            if (System.nanoTime() > deadline) {
                throw new IOException("restart: the minions did not connect again to the salt-master within "
                        + timeout.toSeconds() + " s: " + ProcStats.established(master.publishPort) + " publish, "
                        + ProcStats.established(master.retPort) + " request connections of " + minions);
            }
            MasterProcess.sleep(100);
        }
        long served = 0;
        int rounds = 0;
        try (SaltPing ping = new SaltPing(master, minions)) {
            while (served == 0) {
                if (++rounds > RESTART_ROUNDS) {
                    throw new IOException("restart: not every minion answered a test.ping to the salt-master in "
                            + RESTART_ROUNDS + " rounds");
                }
                long t0 = System.nanoTime();
                SaltPing.Round round = ping.ping(Bench.PREFIX + "*", minions, timeout);
                System.out.printf(
                        "restart  test.ping %d after the salt-master's restart: %,d of %,d returned (last "
                                + "after %.0f ms)%n",
                        rounds, round.returnsMs().size(), minions, round.lastMs());
                if (round.missing() == 0) {
                    served = t0 + (long) (round.lastMs() * 1e6);
                }
            }
        }
        long cpu = master.cpuMillis() - startCpu;
        long signedIn = 0;
        long signInsSent = 0;
        for (String answer : swarm.all("signed-in-again", "signed-in-again", Duration.ofSeconds(30))) {
            String[] words = answer.split(" ");
            signedIn += Long.parseLong(words[1]);
            signInsSent += Long.parseLong(words[2]);
        }
        System.out.printf(
                "restart  salt-master: %,d minions signed in again, %,d sign-in requests sent (a stock "
                        + "minion sends its request again after 5 s without an answer)%n",
                signedIn, signInsSent);
        signInRequests = signInsSent;
        // No resumption, no auth budget, no JIT in a salt-master: those figures are 0.
        return new RestartScenario.Recovery(
                RestartScenario.SALT_MASTER,
                minions,
                (listening - stopped) / 1e6,
                (served - listening) / 1e6,
                startCpu,
                cpu,
                0,
                signedIn,
                0,
                0,
                rounds,
                0);
    }

    private synchronized void stopAll() {
        if (swarm != null) {
            swarm.close();
        }
        if (master != null) {
            master.close();
        }
    }
}

package io.brine.bench;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code brine-bench}: the swarm benchmark. See {@code BENCHMARKS.md}. */
@Command(
        name = "brine-bench",
        mixinStandardHelpOptions = true,
        description = {
            "Runs N simulated minions (real RSA keys, real sockets, the real protocol) against a real "
                    + "brine-master started for the run, and measures auth, key rotation, test.ping, publication fan-out "
                    + "and memory against this machine's raw RSA-2048 speed.",
            "",
            "Exit codes: 0 done, 1 a scenario failed, 2 bad usage."
        })
public final class BenchMain implements Callable<Integer> {

    /** The scenarios, in the order they run. */
    enum Scenario {
        AUTH,
        ROTATE,
        KEYROTATE,
        PING,
        PUBLISH,
        API,
        STATE,
        MEMORY,
        RESTART,
        MASTERKEY
    }

    @Option(
            names = "--minions",
            paramLabel = "N",
            defaultValue = "100",
            description = "Simulated minions (default: ${DEFAULT-VALUE}).")
    int minions;

    @Option(
            names = "--transport",
            paramLabel = "zeromq|tcp",
            defaultValue = "zeromq",
            description = "The master's and the minions' transport (default: ${DEFAULT-VALUE}).")
    String transport;

    @Option(
            names = "--zmq-client",
            paramLabel = "netty|jeromq",
            defaultValue = "netty",
            description = "With --transport zeromq: the simulated minions' ZeroMQ client. netty speaks the same ZMTP "
                    + "3.1 with the same options as a minion's jeromq sockets at a fraction of the swarm's CPU; jeromq "
                    + "is the minion's own library, for comparison (default: ${DEFAULT-VALUE}).")
    String zmqClient;

    @Option(
            names = "--protocol",
            paramLabel = "brine|salt",
            defaultValue = "brine",
            description = "What the simulated minions speak: brine's protocol, or a stock Salt minion's (Salt's v3 "
                    + "_auth, publications in Salt's envelope, _return; ZeroMQ only; the master serves salt_minions) "
                    + "(default: ${DEFAULT-VALUE}).")
    String protocol;

    @Option(
            names = "--scenarios",
            split = ",",
            paramLabel = "LIST",
            defaultValue = "auth,rotate,ping,publish,memory",
            description = "Which of auth,rotate,keyrotate,ping,publish,api,state,memory,restart,masterkey to run "
                    + "(default: all but keyrotate, api, state, restart and masterkey). auth always runs: the others "
                    + "need accepted minions. rotate rotates the publish key (a minion's key deleted). keyrotate asks "
                    + "every minion to rotate its own key, as brine-key --rotate-keys does, with test.ping rounds "
                    + "running, and measures the time until every new key is accepted (the master asks at each "
                    + "minion's next heartbeat, 30 to 37.5 s), the master's CPU per rotation and the returns lost; it "
                    + "needs 2N+W keys in the key cache (each minion's second key). masterkey, last, rotates the "
                    + "master's key as brine-key --rotate-master-key does and measures the time until every minion "
                    + "has pinned the new key and the master's CPU. api turns on the "
                    + "master's HTTP API on loopback and measures publish through it against BrineClient, events to "
                    + "--api-subscribers readers of GET /api/events, and a reader that never reads. state (--protocol "
                    + "salt) serves a tree of 100 files from file_roots and measures state.apply: each minion fetches "
                    + "what a highstate fetches and returns (--state-rounds rounds). restart, last, restarts the "
                    + "master twice with every minion connected (each minion resuming with its ticket as its "
                    + "connection comes back, as brine-minion does, then authenticating in full; --zmq-client netty) "
                    + "and measures the time and master CPU until every one answers a "
                    + "test.ping again; with --against salt also the salt-master's restart, its minions signing in "
                    + "again as stock minions do.")
    List<String> scenarios;

    @Option(
            names = "--api-rounds",
            paramLabel = "R",
            defaultValue = "20",
            description = "Rounds of each measurement of the api scenario (default: ${DEFAULT-VALUE}).")
    int apiRounds;

    @Option(
            names = "--api-subscribers",
            paramLabel = "S",
            defaultValue = "100",
            description = "Readers of GET /api/events in the api scenario (default: ${DEFAULT-VALUE}; at most 200, "
                    + "under the API's 256 connections).")
    int apiSubscribers;

    @Option(
            names = "--state-rounds",
            paramLabel = "R",
            defaultValue = "3",
            description = "Measured state.apply rounds of the state scenario after one warm-up round (default: "
                    + "${DEFAULT-VALUE}).")
    int stateRounds;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the figures to FILE as JSON.")
    Path json;

    @Option(
            names = "--keys-dir",
            paramLabel = "DIR",
            description = "The key cache (default: ~/.cache/brine-bench/keys-2048).")
    Path keysDir;

    @Option(
            names = "--generate-keys",
            paramLabel = "COUNT",
            description = "Only fill the key cache with COUNT keys (in parallel), then exit.")
    Integer generateKeys;

    @Option(
            names = "--minions-per-worker",
            paramLabel = "M",
            defaultValue = "0",
            description = "Simulated minions per worker JVM; 0 sizes workers from the open-files limit.")
    int minionsPerWorker;

    @Option(
            names = "--warmup-minions",
            paramLabel = "W",
            defaultValue = "200",
            description = "Minions that authenticate before the measured auth, so the master's code is compiled "
                    + "(default: ${DEFAULT-VALUE}; at least 2).")
    int warmupMinions;

    @Option(
            names = "--ping-rounds",
            paramLabel = "R",
            defaultValue = "3",
            description = "Measured test.ping rounds after one warm-up round (default: ${DEFAULT-VALUE}).")
    int pingRounds;

    @Option(
            names = "--publications",
            paramLabel = "P",
            defaultValue = "0",
            description = "Publications in the publish scenario; 0 picks about 200,000 deliveries' worth.")
    int publications;

    @Option(
            names = "--idle-seconds",
            paramLabel = "S",
            defaultValue = "60",
            description =
                    "How long the real brine-minion idles while its CPU is measured (default: " + "${DEFAULT-VALUE}).")
    int idleSeconds;

    @Option(
            names = "--rsa-seconds",
            paramLabel = "S",
            defaultValue = "2",
            description = "How long each raw RSA rate is timed (default: ${DEFAULT-VALUE}).")
    double rsaSeconds;

    @Option(
            names = "--profile",
            paramLabel = "SCENARIO",
            description =
                    "Record a JFR profile of the master during one scenario (auth, rotate, keyrotate, ping, publish, "
                            + "masterkey; memory: "
                            + "the master idle with every minion connected; restart: each restarted master from listening "
                            + "until served) and print where its CPU went; the recording is kept as "
                            + "brine-bench-master-SCENARIO.jfr in the current directory (restart: -restart-resuming.jfr and "
                            + "-restart-full.jfr).")
    String profile;

    @Option(
            names = "--worker-io-threads",
            paramLabel = "T",
            defaultValue = "2",
            description = "I/O threads of each swarm worker's ZeroMQ context or Netty group (default: "
                    + "${DEFAULT-VALUE}).")
    int workerIoThreads;

    @Option(
            names = "--no-settle",
            description = "Skip the fixed pauses that let brine's master settle before a "
                    + "figure is taken (its idle memory, a compiled auth path, a quiet moment between ping rounds; the "
                    + "salt-master's side of --against salt keeps its own): every step still runs and every wait for the "
                    + "minions stays, but the figures are not comparable with a settled run's. For checking that the bench "
                    + "works (its smoke test), not for BENCHMARKS.md.")
    boolean noSettle;

    @Option(names = "--keep", description = "Keep the run directory (master config, logs, pki, profiles).")
    boolean keep;

    @Option(
            names = "--master-home",
            paramLabel = "DIR",
            description = "Run bin/brine-master and bin/brine-minion of another build (for before/after "
                    + "comparisons); default: this checkout.")
    Path masterHome;

    @Option(
            names = "--masters",
            paramLabel = "M",
            defaultValue = "1",
            description = "Masters: more than one runs them as one cluster on ZooKeeper, the minions spread over "
                    + "them (auth, rotate and ping only; default: ${DEFAULT-VALUE}).")
    int masters;

    @Option(
            names = "--zookeeper",
            paramLabel = "CONNECT",
            description = "With --masters: an external ZooKeeper ensemble (default: one ZooKeeper server started "
                    + "in this JVM).")
    String zookeeper;

    @Option(
            names = "--auth-flood-sources",
            paramLabel = "N",
            defaultValue = "0",
            description = "During the re-auth round, N hostile sources (127.0.0.2 on) each send "
                    + AuthFlood.PER_SOURCE_PER_SECOND + " auth requests a second (the shipped auth_rate_per_source) "
                    + "that each cost a signed refusal without the auth work budget: half not signed by the key they "
                    + "offer, half with an unusable key. --transport tcp, one master (default: 0, none).")
    int authFloodSources;

    @Option(
            names = "--against",
            paramLabel = "salt",
            description = "Also measure a real salt-master 3008.2 (ZeroMQ, loopback, its shipped defaults but for "
                    + "interface, ports, directories, user and auto_accept) on the same simulated stock-Salt swarm, "
                    + "after brine's master with salt_minions (auth, ping, memory), and print the ratios. The bench "
                    + "waits for the salt-master's answer to a publish, and then for the returns, up to 60 s + 300 "
                    + "ms per minion (its workers answer the minions' own requests first). Salt comes from "
                    + "--salt-dir.")
    String against;

    @Option(
            names = "--salt-dir",
            paramLabel = "DIR",
            description = "With --against salt: Salt's release tarballs and their runner 'salt' (default: the "
                    + "directory of the runner the environment's BRINE_SALT names, as for the Salt tests and .ci/run, "
                    + "when set; else ../shared/salt beside the checkout).")
    Path saltDir;

    @Option(
            names = "--master-opts",
            paramLabel = "OPTS",
            description = "Extra JVM options for the master, as BRINE_JAVA_OPTS.")
    String masterOpts;

    public static void main(String[] args) {
        System.setProperty("logback.configurationFile", "io/brine/bench/logback-bench.xml");
        System.exit(new CommandLine(new BenchMain()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        KeyCache keys = new KeyCache(keysDir != null ? keysDir : KeyCache.defaultDir());
        if (generateKeys != null) {
            long started = System.nanoTime();
            keys.ensure(
                    generateKeys,
                    Runtime.getRuntime().availableProcessors(),
                    n -> System.err.printf("  %d keys generated%n", n));
            System.out.printf(
                    "key cache %s holds keys 0..%d (%.1f s)%n",
                    keys.dir(), generateKeys - 1, (System.nanoTime() - started) / 1e9);
            return 0;
        }
        if (minions < 1) {
            System.err.println("--minions must be at least 1");
            return 2;
        }
        Set<Scenario> chosen = EnumSet.of(Scenario.AUTH);
        for (String name : scenarios) {
            try {
                chosen.add(Scenario.valueOf(name.trim().toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                System.err.println("unknown scenario " + name + "; expected auth, rotate, keyrotate, ping, publish, "
                        + "api, state, memory, restart, masterkey");
                return 2;
            }
        }
        Transport kind;
        try {
            kind = Transport.of(transport);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            return 2;
        }
        ZmqClient swarmClient;
        try {
            swarmClient = ZmqClient.of(zmqClient);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            return 2;
        }
        boolean salt = protocol.equals("salt");
        if (!salt && !protocol.equals("brine")) {
            System.err.println("unknown protocol " + protocol + "; expected brine or salt");
            return 2;
        }
        if (salt && masters > 1) {
            System.err.println("--protocol salt runs against one master (not with --masters)");
            return 2;
        }
        if (salt && kind != Transport.ZEROMQ) {
            System.err.println(
                    "--protocol salt runs over --transport zeromq only (Salt's TCP transport is not " + "simulated)");
            return 2;
        }
        if (authFloodSources < 0 || authFloodSources > 60_000) {
            System.err.println("--auth-flood-sources must be from 0 to 60000");
            return 2;
        }
        if (authFloodSources > 0 && (kind != Transport.TCP || masters > 1 || salt)) {
            System.err.println("--auth-flood-sources runs with --transport tcp, the brine protocol and one master");
            return 2;
        }
        if (chosen.contains(Scenario.STATE) && !salt && against == null) {
            System.err.println("the state scenario runs with --protocol salt (state.apply is Salt's; brine minions "
                    + "have no file server client)");
            return 2;
        }
        if (stateRounds < 1) {
            System.err.println("--state-rounds must be at least 1");
            return 2;
        }
        if (apiRounds < 1 || apiSubscribers < 1 || apiSubscribers > 200) {
            System.err.println("--api-rounds must be at least 1, --api-subscribers from 1 to 200");
            return 2;
        }
        if (chosen.contains(Scenario.API) && (masters > 1 || salt || against != null)) {
            System.err.println("the api scenario runs against one brine master with the brine protocol (not with "
                    + "--masters, --protocol salt, --against)");
            return 2;
        }
        if (chosen.contains(Scenario.RESTART) && (masters > 1 || salt)) {
            System.err.println("the restart scenario runs against one brine master with the brine protocol, or with "
                    + "--against salt (not with --masters, --protocol salt)");
            return 2;
        }
        if (chosen.contains(Scenario.RESTART) && kind == Transport.ZEROMQ && swarmClient == ZmqClient.JEROMQ) {
            System.err.println("the restart scenario runs with --zmq-client netty: its minions rejoin as their "
                    + "connections come back, which the swarm's jeromq sockets do not tell");
            return 2;
        }
        if ((chosen.contains(Scenario.KEYROTATE) || chosen.contains(Scenario.MASTERKEY))
                && (masters > 1 || salt || against != null)) {
            System.err.println("the keyrotate and masterkey scenarios run against one brine master with the brine "
                    + "protocol (not with --masters, --protocol salt, --against): Salt minions have no such rotation");
            return 2;
        }
        Scenario profiled = null;
        if (profile != null) {
            try {
                profiled = Scenario.valueOf(profile.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                System.err.println("unknown scenario to profile: " + profile);
                return 2;
            }
        }
        Bench.Options options = new Bench.Options(
                minions,
                kind,
                chosen,
                Optional.ofNullable(json),
                keys,
                minionsPerWorker,
                Math.max(1, pingRounds),
                publications,
                idleSeconds,
                Optional.ofNullable(profiled),
                keep,
                masterOpts == null ? "" : masterOpts,
                rsaSeconds,
                Math.max(2, warmupMinions),
                Optional.ofNullable(masterHome),
                Math.max(1, workerIoThreads),
                salt,
                swarmClient,
                authFloodSources,
                apiRounds,
                apiSubscribers,
                stateRounds,
                !noSettle);
        if (against != null) {
            if (!against.equals("salt")) {
                System.err.println("unknown --against " + against + "; expected salt");
                return 2;
            }
            if (masters > 1 || kind != Transport.ZEROMQ || authFloodSources > 0 || profiled != null) {
                System.err.println("--against salt runs one master of each over --transport zeromq (without "
                        + "--masters, --auth-flood-sources, --profile)");
                return 2;
            }
            Path script = AgainstSalt.saltScript(
                    Optional.ofNullable(saltDir),
                    Optional.ofNullable(System.getenv("BRINE_SALT")),
                    Path.of(System.getProperty("brine.home", ".")));
            Optional<String> missing = AgainstSalt.missingSalt(script);
            if (missing.isPresent()) {
                System.err.println(missing.get());
                return 2;
            }
            Set<Scenario> againstScenarios = EnumSet.of(Scenario.AUTH, Scenario.PING, Scenario.MEMORY);
            if (chosen.contains(Scenario.STATE)) {
                againstScenarios.add(Scenario.STATE);
            }
            if (chosen.contains(Scenario.RESTART)) {
                againstScenarios.add(Scenario.RESTART);
            }
            Bench.Options againstOptions = new Bench.Options(
                    minions,
                    kind,
                    againstScenarios,
                    Optional.ofNullable(json),
                    keys,
                    minionsPerWorker,
                    Math.max(1, pingRounds),
                    0,
                    idleSeconds,
                    Optional.empty(),
                    keep,
                    masterOpts == null ? "" : masterOpts,
                    rsaSeconds,
                    Math.max(2, warmupMinions),
                    Optional.ofNullable(masterHome),
                    Math.max(1, workerIoThreads),
                    true,
                    swarmClient,
                    0,
                    apiRounds,
                    apiSubscribers,
                    stateRounds,
                    !noSettle);
            return new AgainstSalt(againstOptions, script).run();
        }
        if (saltDir != null) {
            System.err.println("--salt-dir needs --against salt");
            return 2;
        }
        if (masters > 1) {
            return new ClusterBench(options, masters, Optional.ofNullable(zookeeper)).run();
        }
        if (zookeeper != null) {
            System.err.println("--zookeeper needs --masters 2 or more");
            return 2;
        }
        return new Bench(options).run();
    }
}

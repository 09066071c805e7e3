package io.brine.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The simulated minions: worker JVMs ({@link SwarmWorker}) that the coordinator drives by line commands, each with a
 * share of the N minions. Also the warm-up swarm, which authenticates a few minions and leaves.
 */
final class Swarm implements AutoCloseable {

    /** Connections opened a second, over all workers: the master's listen backlog is 100 (jeromq's default). */
    private static final int CONNECTS_PER_SECOND = 2000;

    private final Bench.Options options;
    private final MasterProcess master;
    private final int minions;
    private final List<WorkerProcess> workers = new ArrayList<>();
    private long presignMillis;

    private Swarm(Bench.Options options, MasterProcess master, int minions) {
        this.options = options;
        this.master = master;
        this.minions = minions;
    }

    /** The port the minions send requests to. */
    static int requestPort(Bench.Options options, MasterProcess master) {
        return options.transport() == Transport.TCP ? master.tcpPort : master.retPort;
    }

    /**
     * {@code count} minions authenticate (the master's auth path gets compiled), then go away. Their keys stay
     * accepted; they use the keys after the bench minions' ({@code N ..}), so one key cache serves every N.
     */
    static void warmUp(Bench.Options options, MasterProcess master, Path runDir, int count) throws IOException {
        long started = System.nanoTime();
        try (WorkerProcess warm = WorkerProcess.start(
                99,
                options.transport(),
                requestPort(options, master),
                master.masterPub(),
                options.keys(),
                options.minions(),
                Bench.WARM_PREFIX,
                0,
                count,
                runDir.resolve("worker-warm.log"),
                512,
                options.workerIoThreads(),
                options.salt(),
                options.zmqClient())) {
            warm.awaitReady(Duration.ofMinutes(5));
            warm.calibrateClock();
            warm.command("connect 500", Duration.ofMinutes(2));
            options.settle(1000);
            warm.command("auth " + count + " 20000", Duration.ofSeconds(30));
            String done = warm.event(Duration.ofMinutes(5));
            if (done == null) {
                throw new IOException("warm-up: not all " + count + " warm-up minions were accepted: "
                        + warm.command("status", Duration.ofSeconds(10)));
            }
            warm.command("unwrap", Duration.ofMinutes(5));
            warm.command("close", Duration.ofSeconds(30));
        }
        System.out.printf(
                "warm-up  %d minions authenticated and left (%.1f s)%n", count, (System.nanoTime() - started) / 1e9);
    }

    /**
     * Starts the workers for {@code minions} minions, waits until each has loaded its keys and signed its auth
     * requests, and puts the swarm's figures in {@code json}. The caller closes the swarm.
     */
    static Swarm start(Bench.Options options, MasterProcess master, Path runDir, int minions, Map<String, Object> json)
            throws IOException {
        Swarm swarm = new Swarm(options, master, minions);
        try {
            swarm.startWorkers(runDir, json);
        } catch (IOException | RuntimeException e) {
            swarm.close();
            throw e;
        }
        return swarm;
    }

    private void startWorkers(Path runDir, Map<String, Object> json) throws IOException {
        Transport transport = options.transport();
        long limit = ProcStats.openFilesLimit("self");
        // As many as the open-files limit allows with room to spare, and at most 2,500 so the swarm's own work
        // spreads over several JVMs.
        int perWorker = options.minionsPerWorker() > 0
                ? options.minionsPerWorker()
                : (int) Math.min(2500, (limit * 3 / 4 - 200) / options.workerFdsPerMinion());
        int count = (minions + perWorker - 1) / perWorker;
        int base = minions / count;
        int extra = minions % count;
        int first = 0;
        long started = System.nanoTime();
        for (int i = 0; i < count; i++) {
            int size = base + (i < extra ? 1 : 0);
            // A Salt envelope carries its whole target list (about 14 KB at 1,000 minions) to every SUB, and a worker
            // behind the master queues many of them: a larger heap for Salt minions.
            int heap = 256 + (options.salt() ? size : size / 8);
            workers.add(WorkerProcess.start(
                    i,
                    transport,
                    requestPort(options, master),
                    master.masterPub(),
                    options.keys(),
                    0,
                    Bench.PREFIX,
                    first,
                    size,
                    runDir.resolve("worker-" + i + ".log"),
                    heap,
                    options.workerIoThreads(),
                    options.salt(),
                    options.zmqClient()));
            first += size;
        }
        for (WorkerProcess worker : workers) {
            worker.awaitReady(Duration.ofMinutes(10));
            worker.calibrateClock();
        }
        presignMillis = presign();
        Map<String, Object> swarm = new LinkedHashMap<>();
        swarm.put("workers", count);
        swarm.put("minions_per_worker", base + (extra > 0 ? 1 : 0));
        swarm.put("presign_ms", presignMillis);
        json.put("swarm", swarm);
        System.out.printf(
                "swarm    %d worker JVMs, %,d minions each at most; keys loaded and auth requests signed "
                        + "in %.1f s%n",
                count, base + (extra > 0 ? 1 : 0), (System.nanoTime() - started) / 1e9);
    }

    /** How long the slowest worker took to sign its first auth requests. */
    long presignMillis() {
        return presignMillis;
    }

    int size() {
        return workers.size();
    }

    List<WorkerProcess> workers() {
        return workers;
    }

    /** Every worker signs a fresh auth request per minion; the slowest worker's milliseconds. */
    long presign() throws IOException {
        for (WorkerProcess worker : workers) {
            worker.send("presign");
        }
        long presign = 0;
        for (WorkerProcess worker : workers) {
            presign = Math.max(
                    presign,
                    Long.parseLong(
                            worker.answer("presign", Duration.ofMinutes(30)).split(" ")[1]));
        }
        return presign;
    }

    /** Opens every minion's request connection, paced, and waits until the master holds them. */
    void connect(int fdsBaseline) throws IOException {
        long started = System.nanoTime();
        int perWorker = Math.max(1, CONNECTS_PER_SECOND / workers.size());
        for (WorkerProcess worker : workers) {
            worker.send("connect " + perWorker);
        }
        for (WorkerProcess worker : workers) {
            worker.answer("connect", Duration.ofMinutes(10));
        }
        int perMinion = options.transport() == Transport.ZEROMQ ? 1 : options.transport().masterFdsPerMinion;
        String waited = awaitFds(fdsBaseline, perMinion, "connections");
        System.out.printf(
                "connect  %,d request connections open (%.1f s; %s)%n",
                minions, (System.nanoTime() - started) / 1e9, waited);
    }

    /** Until the master holds every minion's connections, subscriptions included. */
    void awaitSubscriptions(int fdsBaseline) throws IOException {
        long started = System.nanoTime();
        String waited = awaitFds(fdsBaseline, options.transport().masterFdsPerMinion, "subscriptions");
        if (options.transport().masterFdsPerMinion > 1) {
            System.out.printf(
                    "subscribe %,d subscription connections open (%.1f s after the auths; %s)%n",
                    minions, (System.nanoTime() - started) / 1e9, waited);
        }
    }

    /**
     * Until the master holds about {@code perMinion} open files per minion more than {@code baseline}, for as long as
     * their count keeps growing ({@link GrowthWait}); what it waited for, to print.
     */
    private String awaitFds(int baseline, int perMinion, String what) throws IOException {
        int tolerance = Math.max(2, minions / 1000);
        long wanted = baseline + (long) perMinion * minions - tolerance;
        GrowthWait.Outcome outcome = GrowthWait.await(wanted, GrowthWait.STALL, master::openFiles);
        String counted = String.format(
                "%,d wanted (%,d before, %d per minion, %,d short allowed)", wanted, baseline, perMinion, tolerance);
        if (!outcome.reached()) {
            throw new IOException(String.format(
                    "the master holds %,d open files (%,d at most) of the %s with every minion's %s open:"
                            + " none more for %d s, after %.1f s",
                    outcome.count(),
                    outcome.highest(),
                    counted,
                    what,
                    GrowthWait.STALL.toSeconds(),
                    outcome.waitedNanos() / 1e9));
        }
        // Handshakes and subscriptions follow the accept() by a moment.
        MasterProcess.sleep(1000);
        return String.format(
                "the master's open files reached %,d of the %s in %.1f s, at most %.1f s without growing",
                outcome.count(), counted, outcome.waitedNanos() / 1e9, outcome.longestStallNanos() / 1e9);
    }

    /** Sends {@code line} to every worker, then collects every answer to it (in worker order). */
    List<String> all(String line, String what, Duration timeout) throws IOException {
        for (WorkerProcess worker : workers) {
            worker.send(line);
        }
        List<String> answers = new ArrayList<>(workers.size());
        for (WorkerProcess worker : workers) {
            answers.add(worker.answer(what, timeout));
        }
        return answers;
    }

    /** Each worker's answer to {@code status}, one line each. */
    String status() throws IOException {
        StringBuilder status = new StringBuilder();
        for (WorkerProcess w : workers) {
            status.append("\n  worker ")
                    .append(w.index)
                    .append(": ")
                    .append(w.command("status", Duration.ofSeconds(10)));
        }
        return status.toString();
    }

    void resetDeliveries() throws IOException {
        for (WorkerProcess worker : workers) {
            worker.command("reset", Duration.ofSeconds(30));
        }
    }

    /** {count, the last delivery's local time}, summed over the workers now. */
    long[] deliveries() throws IOException {
        long count = 0;
        long last = 0;
        for (WorkerProcess worker : workers) {
            String[] words =
                    worker.command("deliveries", Duration.ofSeconds(30)).split(" ");
            count += Long.parseLong(words[1]);
            long lastNanos = Long.parseLong(words[3]);
            if (lastNanos != 0) {
                last = Math.max(last, worker.toLocal(lastNanos));
            }
        }
        return new long[] {count, last};
    }

    /**
     * The {@code state.apply} runs since the last {@link #resetDeliveries}, summed over the workers: file server
     * requests answered, file bytes served, runs failed, and the last failure's reason (empty if none).
     */
    StateCounts stateCounts() throws IOException {
        long requests = 0;
        long bytes = 0;
        long failed = 0;
        String failure = "";
        for (WorkerProcess worker : workers) {
            String[] words = worker.command("state", Duration.ofSeconds(30)).split(" ", 5);
            requests += Long.parseLong(words[1]);
            bytes += Long.parseLong(words[2]);
            failed += Long.parseLong(words[3]);
            if (words.length > 4 && !words[4].isEmpty()) {
                failure = words[4];
            }
        }
        return new StateCounts(requests, bytes, failed, failure);
    }

    record StateCounts(long requests, long bytes, long failed, String failure) {}

    /** CPU used so far by all swarm worker processes (the simulated minions share the machine with the master). */
    long cpuMillis() {
        long total = 0;
        for (WorkerProcess worker : workers) {
            total += ProcStats.cpuMillis(worker.pid());
        }
        return total;
    }

    double fdsPerMinion() throws IOException {
        long total = 0;
        for (WorkerProcess worker : workers) {
            total += ProcStats.openFiles(worker.pid());
        }
        return (total - 60.0 * workers.size()) / minions;
    }

    @Override
    public void close() {
        for (WorkerProcess worker : workers) {
            worker.close();
        }
        workers.clear();
    }
}

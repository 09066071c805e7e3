package io.brine.bench;

import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.salt.Crypticle;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltPublication;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * A swarm worker JVM: a slice of the simulated minions, driven by the coordinator ({@link Bench}) over standard
 * input and output, one command a line and one answer a line. Asynchronous news ("all my minions are accepted") is
 * a line starting with {@code event}. Times are {@link System#nanoTime()} values: on Linux that is
 * {@code CLOCK_MONOTONIC}, one clock for every process on the machine (the coordinator still checks the offset with
 * the {@code clock} command). Logs go to standard error.
 *
 * <p>Usage: {@code SwarmWorker TRANSPORT HOST RET_PORT MASTER_PUB KEYS_DIR KEY_BASE PREFIX FIRST COUNT IO_THREADS
 * [brine|salt]}: the last says which protocol the minions speak ({@link SimMinion}, {@link SaltSimMinion}).
 *
 * <p>Why one class of this size: it is the worker's side of the coordinator's line protocol (the command loop and
 * its answers) and the {@link SaltSimMinion.Swarm} every simulated minion reports to, and both read and write the
 * same counters, timings and caches (the master's verified replies, the opened publications) that a run's figures
 * are made of; split, those would be passed between the halves. What a minion does lives in the minions' classes.
 */
public final class SwarmWorker implements SaltSimMinion.Swarm {

    private final PrintStream out;
    private final List<BenchMinion> minions = new ArrayList<>();
    private final RSAPublicKey masterKey;
    private final Clock clock = Clock.systemUTC();
    private final SwarmTransports transports;
    private final String host;
    private final int retPort;
    private final boolean salt;
    /**
     * Salt envelopes verified and opened, with the aes key that opened them, by their last bytes (signature bytes:
     * hashing a whole envelope, which holds the list of every target, would cost more than the rest of a delivery).
     */
    private final Map<ByteBuffer, OpenedWith> opened = new ConcurrentHashMap<>();

    private record OpenedWith(byte[] envelope, Crypticle aes, SaltSimMinion.Opened opened) {}

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "bench-worker-timer");
        thread.setDaemon(true);
        return thread;
    });

    /** Publication frames (by signature) whose payload was verified against the master key. */
    private final Map<ByteBuffer, byte[]> verified = new ConcurrentHashMap<>();

    // Auth progress.
    private final AtomicInteger acceptedCount = new AtomicInteger();
    private final AtomicLong firstAccepted = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong lastAccepted = new AtomicLong();
    private final Map<AuthStatus, AtomicInteger> refusals = new EnumMap<>(AuthStatus.class);
    private final AtomicInteger retries = new AtomicInteger();
    private final AtomicInteger sessionUnknown = new AtomicInteger();
    private final AtomicInteger resumptionsRefused = new AtomicInteger();
    /** Salt minions that signed in again after a publication they could not open, and the sign-in requests sent. */
    private final AtomicInteger signedInAgain = new AtomicInteger();

    private final AtomicInteger signInAgainSent = new AtomicInteger();
    /** Minions whose session is back after a reconnection (the restart scenario), and when the first and last were. */
    private final Set<BenchMinion> rejoined = ConcurrentHashMap.newKeySet();

    private final AtomicInteger rejoinedCount = new AtomicInteger();
    private final AtomicLong firstRejoined = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong lastRejoined = new AtomicLong();
    /** Rejoining minions' private-key work (a full auth's unwrap), off the transport's threads. */
    private final ExecutorService offloaded =
            Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors(), r -> {
                Thread thread = new Thread(r, "bench-worker-crypto");
                thread.setDaemon(true);
                return thread;
            });

    private volatile int authWindow;
    private final AtomicInteger nextToSend = new AtomicInteger();
    private volatile boolean authRunning;
    private ScheduledFuture<?> retryTask;
    /** When each minion asked first in this round (retries keep it), until it is accepted. */
    private final Map<BenchMinion, Long> askedFirst = new ConcurrentHashMap<>();
    /** Each accepted minion's wait this round, from its first request to its acceptance, in nanoseconds. */
    private final Queue<Long> authWaits = new ConcurrentLinkedQueue<>();

    // Deliveries of publications and returns since the last reset.
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong firstDelivered = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong lastDelivered = new AtomicLong();
    private final AtomicLong returned = new AtomicLong();
    private final AtomicLong keysInstalled = new AtomicLong();
    // Minion key rotations (the keyrotate scenario): requests sent, answered rotated or refused; waits from request
    // to answer, in nanoseconds.
    private final AtomicInteger rotationsAsked = new AtomicInteger();
    private final AtomicInteger keysRotated = new AtomicInteger();
    private final AtomicInteger rotationsRefused = new AtomicInteger();
    private final AtomicLong lastRotated = new AtomicLong();
    private final AtomicLong rotationWaitSum = new AtomicLong();
    private final AtomicLong rotationWaitMax = new AtomicLong();
    private volatile String lastRotationRefusal = "";
    // The master key's rotation (the masterkey scenario): minions that pinned its new key, or refused its chain.
    private final AtomicInteger masterKeysPinned = new AtomicInteger();
    private final AtomicInteger masterChainsRefused = new AtomicInteger();
    private final AtomicLong lastPinned = new AtomicLong();
    private volatile String lastChainRefusal = "";
    // state.apply runs since the last reset: file server requests answered, file bytes served, runs failed.
    private final AtomicLong stateRequests = new AtomicLong();
    private final AtomicLong stateBytes = new AtomicLong();
    private final AtomicLong stateFailed = new AtomicLong();
    private volatile String stateFailure = "";

    private final KeyCache keys;

    private SwarmWorker(
            PrintStream out,
            KeyCache keys,
            RSAPublicKey masterKey,
            SwarmTransports transports,
            String host,
            int retPort,
            boolean salt) {
        this.out = out;
        this.keys = keys;
        this.salt = salt;
        this.masterKey = masterKey;
        this.transports = transports;
        this.host = host;
        this.retPort = retPort;
        for (AuthStatus status : AuthStatus.values()) {
            refusals.put(status, new AtomicInteger());
        }
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("logback.configurationFile", "io/brine/bench/logback-bench.xml");
        // Answers go to the real stdout; anything printed by accident goes to stderr instead.
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        Transport transport = Transport.of(args[0]);
        String host = args[1];
        int retPort = Integer.parseInt(args[2]);
        RSAPublicKey masterKey = Pem.readPublicKey(Files.readString(Path.of(args[3]), StandardCharsets.US_ASCII));
        KeyCache keys = new KeyCache(Path.of(args[4]));
        int keyBase = Integer.parseInt(args[5]);
        String prefix = args[6];
        int first = Integer.parseInt(args[7]);
        int count = Integer.parseInt(args[8]);
        int ioThreads = Integer.parseInt(args[9]);
        boolean salt = args.length > 10 && args[10].equals("salt");
        ZmqClient zmqClient = args.length > 11 ? ZmqClient.of(args[11]) : ZmqClient.NETTY;
        SwarmWorker worker = new SwarmWorker(
                protocol,
                keys,
                masterKey,
                SwarmTransports.create(transport, zmqClient, ioThreads),
                host,
                retPort,
                salt);
        long started = System.nanoTime();
        worker.minions.addAll(parallel(count, i -> {
            String id = String.format("%s%05d", prefix, first + i);
            return salt
                    ? new SaltSimMinion(first + i, id, keys.load(keyBase + first + i), worker)
                    : new SimMinion(first + i, id, keys.load(keyBase + first + i), worker, masterKey);
        }));
        worker.timer.scheduleWithFixedDelay(worker::heartbeats, 1, 1, TimeUnit.SECONDS);
        protocol.println("ready " + count + " " + (System.nanoTime() - started) / 1_000_000);
        worker.serve(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
    }

    private void serve(BufferedReader in) throws Exception {
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+");
            String answer;
            try {
                answer = handle(words);
            } catch (Exception e) {
                answer = "error " + e;
            }
            if (answer == null) {
                break;
            }
            out.println(answer);
        }
        for (BenchMinion minion : minions) {
            minion.close();
        }
        transports.close();
        System.exit(0);
    }

    private String handle(String[] words) throws Exception {
        switch (words[0]) {
            case "clock":
                return "clock " + System.nanoTime();
            case "presign": {
                long started = System.nanoTime();
                parallel(minions.size(), i -> {
                    minions.get(i).prepareAuth();
                    return null;
                });
                return "presign " + (System.nanoTime() - started) / 1_000_000;
            }
            case "connect": {
                // Paced, so the master's listen backlog never overflows (a dropped SYN costs a second).
                int perSecond = Integer.parseInt(words[1]);
                long started = System.nanoTime();
                for (int i = 0; i < minions.size(); i++) {
                    long due = started + (long) (i * 1e9 / perSecond);
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    minions.get(i).connect(salt ? transports.openSalt(host, retPort) : transports.open(host, retPort));
                }
                return "connect " + (System.nanoTime() - started) / 1_000_000;
            }
            case "reset-sessions": {
                for (BenchMinion minion : minions) {
                    minion.resetSession();
                }
                acceptedCount.set(0);
                askedFirst.clear();
                authWaits.clear();
                firstAccepted.set(Long.MAX_VALUE);
                lastAccepted.set(0);
                nextToSend.set(0);
                return "reset-sessions";
            }
            case "auth": {
                authWindow = Math.max(1, Integer.parseInt(words[1]));
                long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(words[2]));
                authRunning = true;
                for (int i = 0; i < Math.min(authWindow, minions.size()); i++) {
                    sendNextAuth();
                }
                if (retryTask != null) {
                    retryTask.cancel(false);
                }
                retryTask = timer.scheduleWithFixedDelay(() -> retryStalled(timeoutNanos), 1, 1, TimeUnit.SECONDS);
                return "auth started";
            }
            case "auth-waits": {
                // This round's waits, in milliseconds, for the median and worst over every worker.
                StringBuilder line = new StringBuilder("auth-waits");
                authWaits.forEach(nanos -> line.append(' ').append(nanos / 1_000_000.0));
                return line.toString();
            }
            case "unwrap": {
                long started = System.nanoTime();
                List<Boolean> ok = parallel(minions.size(), i -> minions.get(i).unwrap());
                long failed = ok.stream().filter(b -> !b).count();
                long millis = (System.nanoTime() - started) / 1_000_000;
                return "unwrap " + (ok.size() - failed) + " " + failed + " " + millis;
            }
            case "generations": {
                // Minions holding a generation above G, and when the last of them installed it.
                long above = Long.parseLong(words[1]);
                int count = 0;
                long last = 0;
                long min = Long.MAX_VALUE;
                long max = Long.MIN_VALUE;
                for (BenchMinion minion : minions) {
                    long generation = minion.generation();
                    min = Math.min(min, generation);
                    max = Math.max(max, generation);
                    if (generation > above) {
                        count++;
                        last = Math.max(last, minion.keyInstalledNanos());
                    }
                }
                return "generations " + count + " " + last + " " + min + " " + max;
            }
            case "second-keys": {
                // Each minion's key to rotate to: key BASE + its index (KeyCache.secondKey).
                int base = Integer.parseInt(words[1]);
                long started = System.nanoTime();
                parallel(minions.size(), i -> {
                    if (minions.get(i) instanceof SimMinion minion) {
                        minion.secondKey(keys.load(base + minion.index));
                    }
                    return null;
                });
                return "second-keys " + minions.size() + " " + (System.nanoTime() - started) / 1_000_000;
            }
            case "rotations":
                // The last refusal's reason ends the line (it has spaces).
                return "rotations " + rotationsAsked.get() + " " + keysRotated.get() + " " + rotationsRefused.get()
                        + " " + lastRotated.get() + " " + rotationWaitSum.get() + " " + rotationWaitMax.get() + " "
                        + lastRotationRefusal;
            case "master-pins":
                return "master-pins " + masterKeysPinned.get() + " " + masterChainsRefused.get() + " "
                        + lastPinned.get() + " " + lastChainRefusal;
            case "reset":
                delivered.set(0);
                firstDelivered.set(Long.MAX_VALUE);
                lastDelivered.set(0);
                returned.set(0);
                stateRequests.set(0);
                stateBytes.set(0);
                stateFailed.set(0);
                stateFailure = "";
                return "reset";
            case "state":
                // The last failure's reason ends the line (it has spaces).
                return "state " + stateRequests.get() + " " + stateBytes.get() + " " + stateFailed.get() + " "
                        + stateFailure;
            case "deliveries":
                return "deliveries " + delivered.get() + " " + firstDelivered.get() + " " + lastDelivered.get() + " "
                        + returned.get();
            case "rejoin": {
                // resume|full|off: how each minion rejoins by itself when its connection comes back with a session
                // open (the restart scenario); "event rejoined" once every minion has.
                String mode = words[1];
                if (!List.of("resume", "full", "off").contains(mode)) {
                    return "error rejoin resume|full|off, not " + mode;
                }
                rejoined.clear();
                rejoinedCount.set(0);
                firstRejoined.set(Long.MAX_VALUE);
                lastRejoined.set(0);
                for (BenchMinion minion : minions) {
                    minion.useTickets(mode.equals("resume"));
                    minion.rejoinOnReconnect(!mode.equals("off"));
                }
                return "rejoin " + mode;
            }
            case "tickets":
                return "tickets "
                        + minions.stream().filter(BenchMinion::holdsTicket).count() + " " + resumptionsRefused.get();
            case "signed-in-again":
                return "signed-in-again " + signedInAgain.get() + " " + signInAgainSent.get();
            case "status":
                return "status " + status();
            case "close":
                for (BenchMinion minion : minions) {
                    minion.close();
                }
                return "close";
            case "quit":
                return null;
            default:
                return "error unknown command " + words[0];
        }
    }

    private String status() {
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("minions", minions.size());
        status.put("accepted", acceptedCount.get());
        status.put("retries", retries.get());
        refusals.forEach((s, n) -> {
            if (n.get() > 0) {
                status.put(s.name().toLowerCase(Locale.ROOT), n.get());
            }
        });
        status.put("session_unknown", sessionUnknown.get());
        status.put("resumptions_refused", resumptionsRefused.get());
        status.put("keys_installed", keysInstalled.get());
        long pid = ProcessHandle.current().pid();
        status.put("fds", ProcStats.openFiles(pid));
        status.put("rss_kib", ProcStats.rssKib(pid));
        status.put("threads", ProcStats.threads(pid));
        StringBuilder line = new StringBuilder();
        status.forEach((k, v) -> line.append(k).append('=').append(v).append(' '));
        return line.toString().trim();
    }

    private void heartbeats() {
        long now = clock.millis();
        for (BenchMinion minion : minions) {
            minion.heartbeatIfDue(now);
        }
    }

    // ---- auth pacing: at most `authWindow` requests without an answer ----

    private void sendNextAuth() {
        int next = nextToSend.getAndIncrement();
        if (next < minions.size()) {
            long now = System.nanoTime();
            askedFirst.put(minions.get(next), now);
            minions.get(next).sendAuth(now);
        }
    }

    private void retryStalled(long timeoutNanos) {
        if (!authRunning) {
            return;
        }
        long now = System.nanoTime();
        int sent = Math.min(nextToSend.get(), minions.size());
        for (int i = 0; i < sent; i++) {
            BenchMinion minion = minions.get(i);
            if (minion.awaitingReply() && now - minion.authSentNanos() > timeoutNanos) {
                retries.incrementAndGet();
                minion.prepareAuth();
                minion.sendAuth(now);
            }
        }
    }

    // ---- SimMinion.Swarm ----

    @Override
    public boolean verifiedByMaster(Decoded.Ok ok) {
        ByteBuffer signature = ByteBuffer.wrap(ok.signature());
        byte[] payload = verified.get(signature);
        if (payload != null && Arrays.equals(payload, ok.signedPayload())) {
            return true;
        }
        if (!ok.verify(masterKey)) {
            return false;
        }
        if (verified.size() > 256) {
            verified.clear();
        }
        verified.put(signature, ok.signedPayload());
        return true;
    }

    @Override
    public RSAPublicKey masterKey() {
        return masterKey;
    }

    @Override
    public SaltSimMinion.Opened open(byte[] envelope, Crypticle aes) {
        ByteBuffer key = ByteBuffer.wrap(envelope, Math.max(0, envelope.length - 64), Math.min(64, envelope.length))
                .slice();
        OpenedWith known = opened.get(key);
        if (known != null && known.aes().equals(aes) && Arrays.equals(known.envelope(), envelope)) {
            return known.opened();
        }
        SaltPublication publication;
        try {
            publication = SaltPublication.open(envelope, masterKey, aes, -1, SaltLimits.SESSION)
                    .orElse(null);
        } catch (CryptoException | MalformedException e) {
            return null;
        }
        if (publication == null) {
            return null;
        }
        SaltSimMinion.Opened result = new SaltSimMinion.Opened(publication, SaltSimMinion.targets(publication));
        if (opened.size() > 256) {
            opened.clear();
        }
        opened.put(key, new OpenedWith(envelope, aes, result));
        return result;
    }

    @Override
    public boolean verifyReply(Decoded.Ok ok) {
        return ok.verify(masterKey);
    }

    @Override
    public Clock clock() {
        return clock;
    }

    @Override
    public void accepted(BenchMinion minion, long nanos) {
        firstAccepted.accumulateAndGet(nanos, Math::min);
        lastAccepted.accumulateAndGet(nanos, Math::max);
        Long asked = askedFirst.remove(minion);
        if (asked != null) {
            authWaits.add(nanos - asked);
        }
        int accepted = acceptedCount.incrementAndGet();
        if (authRunning) {
            sendNextAuth();
        }
        if (accepted == minions.size()) {
            authRunning = false;
            out.println("event auth-done " + accepted + " " + firstAccepted.get() + " " + lastAccepted.get() + " "
                    + retries.get());
        }
    }

    @Override
    public void refused(BenchMinion minion, AuthStatus status) {
        refusals.get(status).incrementAndGet();
        // Not accepted (store full, clock, ...): ask again after a second, as acceptance_wait_time would.
        timer.schedule(
                () -> {
                    minion.prepareAuth();
                    minion.sendAuth(System.nanoTime());
                },
                1,
                TimeUnit.SECONDS);
    }

    @Override
    public void keyInstalled(BenchMinion minion, long generation, long nanos) {
        keysInstalled.incrementAndGet();
    }

    @Override
    public void delivered(BenchMinion minion, long nanos) {
        delivered.incrementAndGet();
        firstDelivered.accumulateAndGet(nanos, Math::min);
        lastDelivered.accumulateAndGet(nanos, Math::max);
    }

    @Override
    public void returned(BenchMinion minion) {
        returned.incrementAndGet();
    }

    @Override
    public void stateRun(BenchMinion minion, int requests, long bytes, Optional<String> failure) {
        stateRequests.addAndGet(requests);
        stateBytes.addAndGet(bytes);
        failure.ifPresent(why -> {
            stateFailed.incrementAndGet();
            stateFailure = why.replace('\n', ' ');
        });
    }

    @Override
    public Future<?> schedule(Runnable task, long delayMillis) {
        return timer.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void signInAgainSent(BenchMinion minion) {
        signInAgainSent.incrementAndGet();
    }

    @Override
    public void signedInAgain(BenchMinion minion) {
        signedInAgain.incrementAndGet();
    }

    @Override
    public void resumptionRefused(BenchMinion minion) {
        resumptionsRefused.incrementAndGet();
    }

    @Override
    public void rejoined(BenchMinion minion, long nanos) {
        if (!rejoined.add(minion)) {
            return;
        }
        firstRejoined.accumulateAndGet(nanos, Math::min);
        lastRejoined.accumulateAndGet(nanos, Math::max);
        if (rejoinedCount.incrementAndGet() == minions.size()) {
            out.println("event rejoined " + minions.size() + " " + firstRejoined.get() + " " + lastRejoined.get());
        }
    }

    @Override
    public void offload(Runnable work) {
        offloaded.execute(work);
    }

    @Override
    public void rotationAsked(BenchMinion minion, long nanos) {
        rotationsAsked.incrementAndGet();
    }

    @Override
    public void keyRotated(BenchMinion minion, long askedNanos, long nanos) {
        keysRotated.incrementAndGet();
        lastRotated.accumulateAndGet(nanos, Math::max);
        rotationWaitSum.addAndGet(nanos - askedNanos);
        rotationWaitMax.accumulateAndGet(nanos - askedNanos, Math::max);
    }

    @Override
    public void rotationRefused(BenchMinion minion, String reason) {
        rotationsRefused.incrementAndGet();
        lastRotationRefusal = reason.replace('\n', ' ');
    }

    @Override
    public void masterKeyPinned(BenchMinion minion, long nanos) {
        masterKeysPinned.incrementAndGet();
        lastPinned.accumulateAndGet(nanos, Math::max);
    }

    @Override
    public void masterChainRefused(BenchMinion minion, String reason) {
        masterChainsRefused.incrementAndGet();
        lastChainRefusal = reason.replace('\n', ' ');
    }

    @Override
    public void sessionUnknown(BenchMinion minion) {
        sessionUnknown.incrementAndGet();
    }

    /** {@code task(0..count-1)} on one thread per core, results in order. */
    static <T> List<T> parallel(int count, IntFunction<T> task) throws Exception {
        int threads = Runtime.getRuntime().availableProcessors();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<T>>> parts = new ArrayList<>();
            int chunk = Math.max(1, (count + threads - 1) / threads);
            for (int from = 0; from < count; from += chunk) {
                int start = from;
                int end = Math.min(count, from + chunk);
                Callable<List<T>> part = () -> {
                    List<T> results = new ArrayList<>(end - start);
                    for (int i = start; i < end; i++) {
                        results.add(task.apply(i));
                    }
                    return results;
                };
                parts.add(pool.submit(part));
            }
            List<T> all = new ArrayList<>(count);
            for (Future<List<T>> part : parts) {
                all.addAll(part.get());
            }
            return all;
        } finally {
            pool.shutdownNow();
        }
    }
}

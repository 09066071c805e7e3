package io.brine.store.policy;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.brine.daemon.WarnInterval;
import io.brine.daemon.files.TrustedPath;
import io.brine.store.keys.PolicyVerdict;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code autosign_policy}: an executable asked about each new key, as Puppet's policy-based autosigning does. It runs
 * without a shell, with the id as its only argument and a JSON document on its standard input ({@code id},
 * {@code public_key} (SPKI PEM), {@code fingerprint}, {@code claims}, {@code remote_address}, {@code time}), in
 * {@code /} with an environment of only {@code PATH} and {@code LANG}. Exit status 0 accepts; anything else, a crash,
 * a timeout (the process and everything it started are killed: it runs in a process group of its own, see
 * {@link PolicyProcess}) or a failure to start leaves the key pending. Output
 * (standard output and error together) is capped and logged at DEBUG. {@link PolicyProcess} runs it; this class
 * decides when, and remembers the answers.
 *
 * <p>An auth worker never waits for it: on first sight of a key the run starts in the background and the answer is
 * "pending"; when the run accepts, the pending key is promoted at once ({@link Promoter}), and the answer is also
 * remembered so that the minion's next retry is accepted even if the key was not stored yet. A "no" is remembered for
 * {@link #NO_CACHE} (or until the executable changes), so a retrying minion does not start a process every time. At
 * most {@code maxConcurrent} runs at once; past that a key is skipped (still pending) and tried at its next retry:
 * nothing queues without bound. The executable must be a regular, executable file that passes the ownership rule
 * ({@link TrustedPath}: it and every directory on its path owned by root or the master's user and writable by no one
 * else); otherwise it is not run, with an ERROR when the problem appears.
 */
public final class ExecutablePolicy implements AcceptancePolicy, AutoCloseable {

    public static final String RULE = "autosign_policy";
    /** How long a "no" stands before the executable is asked again. */
    public static final Duration NO_CACHE = Duration.ofMinutes(1);
    /** How long a "yes" is remembered for a key that could not be promoted yet. */
    public static final Duration YES_CACHE = Duration.ofMinutes(10);

    private static final Logger LOG = LoggerFactory.getLogger(ExecutablePolicy.class);
    private static final int MAX_CACHED = 100_000;
    private static final TrustedPath TRUST = TrustedPath.forThisProcess();

    /** Promotes a pending key that a background run accepted. */
    @FunctionalInterface
    public interface Promoter {
        void promote(AuthAttempt attempt, PolicyDecision decision);
    }

    private record Answer(boolean accepted, String reason, List<Object> executableStamp, Instant at) {}

    private final Path executable;
    private final Duration timeout;
    private final int maxConcurrent;
    private final Clock clock;
    /** Keys the executable could not be asked about: one WARN a minute, with the count. */
    private final WarnInterval notRun;

    private volatile Promoter promoter = (attempt, decision) -> {};
    private final Semaphore slots;
    private final Cache<String, Answer> answers;
    private final Map<String, Instant> running = new ConcurrentHashMap<>();
    private final PolicyProcess process;
    private final Object poolLock = new Object();
    private final AtomicBoolean closed = new AtomicBoolean();
    private ExecutorService runners;
    private volatile String lastUntrusted;
    /** Runs in the background and those of them killed at their timeout: read by the master's metrics. */
    private final AtomicLong runs = new AtomicLong();

    private final AtomicLong timeouts = new AtomicLong();

    public ExecutablePolicy(Path executable, Duration timeout, int maxConcurrent, Clock clock) {
        this.executable = executable;
        this.timeout = timeout;
        this.maxConcurrent = maxConcurrent;
        this.clock = clock;
        this.notRun = new WarnInterval(clock, GrantPolicy.WARN_INTERVAL_MS);
        this.slots = new Semaphore(maxConcurrent);
        this.process = new PolicyProcess(executable, timeout, PolicyProcess.SETSID);
        this.answers = Caffeine.newBuilder()
                .maximumSize(MAX_CACHED)
                .ticker(() -> TimeUnit.MILLISECONDS.toNanos(clock.millis()))
                .expireAfter(new Expiry<String, Answer>() {
                    @Override
                    public long expireAfterCreate(String key, Answer answer, long now) {
                        return (answer.accepted() ? YES_CACHE : NO_CACHE).toNanos();
                    }

                    @Override
                    public long expireAfterUpdate(String key, Answer answer, long now, long remaining) {
                        return expireAfterCreate(key, answer, now);
                    }

                    @Override
                    public long expireAfterRead(String key, Answer answer, long now, long remaining) {
                        return remaining;
                    }
                })
                .build();
        problem()
                .filter(problem -> lastUntrusted == null)
                .ifPresent(problem -> LOG.error("{}: {}; new keys wait for an admin until it is fixed", RULE, problem));
    }

    /** Who promotes a key a background run accepted; set once by whoever wires the policies. */
    void promoteWith(Promoter promoter) {
        this.promoter = promoter;
    }

    @Override
    public PolicyDecision evaluate(AuthAttempt attempt) {
        Optional<String> problem = problem();
        if (problem.isPresent()) {
            // Vanished, no longer executable, untrusted: every new key now waits for an admin, who should hear it.
            notRun.warn(
                    LOG,
                    "Minion {} ({}): {} not run: {}; the key waits for an admin",
                    attempt.id(),
                    attempt.remoteAddress(),
                    RULE,
                    problem.get());
            return none(problem.get());
        }
        List<Object> stamp = stamp();
        String key = attempt.id() + " " + attempt.fingerprint();
        Answer answer = answers.getIfPresent(key);
        if (answer != null && answer.executableStamp().equals(stamp)) {
            return answer.accepted()
                    ? new PolicyDecision(PolicyVerdict.ACCEPT, rule(), answer.reason() + " at " + answer.at())
                    : none(answer.reason() + " at " + answer.at() + "; asked again from "
                            + answer.at().plus(NO_CACHE));
        }
        Instant started = running.get(key);
        if (started != null) {
            return none("running since " + started);
        }
        if (closed.get() || !slots.tryAcquire()) {
            return none("busy (" + maxConcurrent + " runs at once): asked again at the minion's next retry");
        }
        if (running.putIfAbsent(key, clock.instant()) != null) {
            slots.release();
            return none("running");
        }
        try {
            runners().execute(() -> runInBackground(attempt, key, stamp));
        } catch (RuntimeException e) {
            running.remove(key);
            slots.release();
            return none("cannot start a run: " + e.getMessage());
        }
        return none("started; the answer applies at the minion's next retry");
    }

    /**
     * Drops every remembered answer about {@code id}: its key was deleted, rejected or changed, so a "yes" about an
     * earlier key (or an earlier tenure of the same key) must not accept it again.
     */
    void forget(String id) {
        String prefix = id + " ";
        answers.asMap().keySet().removeIf(key -> key.startsWith(prefix));
    }

    /** Runs the executable now and waits for it: {@code brine-key policy check}. */
    @Override
    public PolicyDecision check(AuthAttempt attempt) {
        Optional<String> problem = problem();
        if (problem.isPresent()) {
            return none(problem.get());
        }
        PolicyProcess.Run run = process.run(attempt);
        String output = printable(run.output());
        String reason = run.reason()
                + (output.isEmpty()
                        ? ""
                        : "; output: " + (output.length() > 2000 ? output.substring(0, 2000) + "..." : output));
        return run.accepted() ? new PolicyDecision(PolicyVerdict.ACCEPT, rule(), reason) : none(reason);
    }

    private void runInBackground(AuthAttempt attempt, String key, List<Object> stamp) {
        try {
            PolicyProcess.Run run = process.run(attempt);
            runs.incrementAndGet();
            if (run.killed()) {
                timeouts.incrementAndGet();
            }
            Answer answer = new Answer(run.accepted(), run.reason(), stamp, clock.instant());
            answers.put(key, answer);
            LOG.info(
                    "Minion {} ({}): {} {} says {}: {}",
                    attempt.id(),
                    attempt.remoteAddress(),
                    RULE,
                    executable,
                    run.accepted() ? "yes" : "no",
                    run.reason());
            if (!run.output().isEmpty()) {
                LOG.debug("Minion {}: {} output: {}", attempt.id(), RULE, printable(run.output()));
            }
            if (run.accepted() && !closed.get()) {
                promoter.promote(attempt, new PolicyDecision(PolicyVerdict.ACCEPT, rule(), run.reason()));
            }
        } catch (RuntimeException e) {
            LOG.error("Bug: {} run for {} failed", RULE, attempt.id(), e);
        } finally {
            running.remove(key);
            slots.release();
        }
    }

    /** Runs the master started in the background (not {@code brine-key policy check}'s). */
    public long runs() {
        return runs.get();
    }

    /** Of {@link #runs()}, those killed at the timeout. */
    public long timeouts() {
        return timeouts.get();
    }

    /** Why the executable must not be run now, or empty. */
    private Optional<String> problem() {
        Optional<String> cannotRun = process.problem();
        if (cannotRun.isPresent()) {
            return cannotRun;
        }
        Optional<String> untrusted = TRUST.problem(executable);
        if (untrusted.isPresent()) {
            String problem = executable + " is not trusted: " + untrusted.get() + ": not run";
            if (!problem.equals(lastUntrusted)) {
                LOG.error("{}: {}; new keys wait for an admin until it is fixed", RULE, problem);
            }
            lastUntrusted = problem;
            return Optional.of(problem);
        }
        lastUntrusted = null;
        PosixFileAttributes attributes;
        try {
            attributes = Files.readAttributes(executable, PosixFileAttributes.class);
        } catch (NoSuchFileException e) {
            return Optional.of(executable + " does not exist");
        } catch (IOException e) {
            return Optional.of(executable + " cannot be read: " + e.getMessage());
        }
        if (!attributes.isRegularFile()) {
            return Optional.of(executable + " is not a regular file");
        }
        if (attributes.permissions().contains(PosixFilePermission.GROUP_WRITE)
                || attributes.permissions().contains(PosixFilePermission.OTHERS_WRITE)) {
            return Optional.of(executable + " is writable by group or others: not run (chmod go-w " + executable + ")");
        }
        if (!Files.isExecutable(executable)) {
            return Optional.of(executable + " is not executable: not run");
        }
        return Optional.empty();
    }

    /** A change of the executable (a new version) makes earlier answers stale. */
    private List<Object> stamp() {
        try {
            PosixFileAttributes attributes = Files.readAttributes(executable, PosixFileAttributes.class);
            return List.of(
                    String.valueOf(attributes.fileKey()),
                    attributes.lastModifiedTime(),
                    attributes.size(),
                    attributes.permissions());
        } catch (IOException e) {
            return List.of("unreadable");
        }
    }

    private String rule() {
        return RULE + " " + executable;
    }

    private PolicyDecision none(String reason) {
        return new PolicyDecision(PolicyVerdict.NONE, rule(), reason);
    }

    private ExecutorService runners() {
        synchronized (poolLock) {
            if (runners == null) {
                runners = Executors.newFixedThreadPool(maxConcurrent, PolicyProcess.daemonThreads("brine-policy"));
            }
            return runners;
        }
    }

    /** A log-safe form of the output: control characters escaped, one line. */
    static String printable(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\n') {
                out.append("\\n");
            } else if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** Kills running processes and stops the threads. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        // Kill first: a runner may be blocked writing to a process that does not read.
        process.close();
        synchronized (poolLock) {
            if (runners != null) {
                runners.shutdownNow();
            }
        }
    }

    @Override
    public String toString() {
        return rule();
    }
}

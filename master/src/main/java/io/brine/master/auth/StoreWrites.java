package io.brine.master.auth;

import io.brine.daemon.WarnInterval;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the master can write its files now (the audit log, the key store, the record of auth requests, the job
 * cache): the last failed write, until a write succeeds or {@link #NOT_READY_FOR} has passed without another
 * failure. {@code /readyz} answers 503 while there is one. Audit lines written through {@link #audit} never throw:
 * a line that cannot be written (a full disk) is counted and logged, at most one WARN per interval and path, and the
 * caller decides what its answer is without it (README, "When the disk is full").
 */
public final class StoreWrites {

    /** How long one failed write keeps the master not ready when nothing is written after it. */
    public static final Duration NOT_READY_FOR = Duration.ofSeconds(60);

    private static final Logger LOG = LoggerFactory.getLogger(StoreWrites.class);
    private static final long WARN_INTERVAL_MS = 10_000;

    private record Failure(long atMs, String what) {}

    private final Clock clock;
    private final AtomicReference<Failure> last = new AtomicReference<>();
    private final AtomicLong auditFailures = new AtomicLong();
    private final Map<String, WarnInterval> warnings = new ConcurrentHashMap<>();

    public StoreWrites(Clock clock) {
        this.clock = clock;
    }

    /** A write succeeded: the disk takes writes again. */
    public void wrote() {
        last.set(null);
    }

    /** A write failed; {@code what} names the file and the system's reason ("No space left on device"). */
    public void failed(String what) {
        last.set(new Failure(clock.millis(), what));
    }

    /**
     * Writes one audit line for {@code path} (as "brine auth", "publisher sign-in") about {@code who}; false when
     * it could not be written: counted, {@link #failed}, and a WARN naming the path and the reason at most once
     * per interval per path.
     */
    public boolean audit(String path, String who, Runnable line) {
        try {
            line.run();
            wrote();
            return true;
        } catch (UncheckedIOException e) {
            String reason = e.getMessage();
            failed(reason);
            auditFailures.incrementAndGet();
            long suppressed = warnings.computeIfAbsent(path, p -> new WarnInterval(clock, WARN_INTERVAL_MS))
                    .due();
            if (suppressed >= 0) {
                LOG.warn(
                        "{} {}: audit line not written: {}{}",
                        path,
                        who,
                        reason,
                        suppressed > 0 ? " (and " + suppressed + " more on this path since the last line)" : "");
            }
            return false;
        }
    }

    /** Audit lines that could not be written since the start. */
    public long auditFailures() {
        return auditFailures.get();
    }

    /** Why the master is not ready to write, if it is not: the last failure, unless a write succeeded since. */
    public Optional<String> problem() {
        Failure failure = last.get();
        if (failure == null || clock.millis() - failure.atMs() > NOT_READY_FOR.toMillis()) {
            return Optional.empty();
        }
        return Optional.of("cannot write: " + failure.what());
    }
}

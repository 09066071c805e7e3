package io.brine.master.jobs;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.brine.master.events.EventStream;
import io.brine.master.metrics.MasterMetrics;
import io.brine.protocol.message.SessionMessage;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.transport.UndeliveredListener;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The jobs in flight (published within the hour): whom each targeted, whom its publication did not reach, and who
 * watches for its returns. A return counts only from a minion its job targeted. The transports report here the
 * publications they took but could not queue on their own thread ({@link UndeliveredListener}), so such a minion is
 * recorded as unreachable for its job, as one refused at once is: a publication never vanishes silently. The daemon
 * builds this before the transports.
 */
public final class ActiveJobs implements UndeliveredListener {

    private static final Logger LOG = LoggerFactory.getLogger(ActiveJobs.class);
    static final int MAX_ACTIVE = 100_000;
    static final Duration ACTIVE_FOR = Duration.ofHours(1);

    private record ActiveJob(
            String fun,
            Set<String> minions,
            Set<String> unreachable,
            Set<String> unconfirmed,
            Set<String> returned,
            List<Consumer<SessionMessage.ReturnEvent>> watchers) {}

    /** What a job was published as: its function and the minions it targeted. */
    private record Targeted(String fun, Set<String> minions) {}

    private final JobCache cache;
    private final AtomicLong duplicateReturns = new AtomicLong();
    private final AuditLog audit;
    private final Clock clock;
    private final MasterMetrics metrics;
    private final EventStream events;
    private final Cache<String, ActiveJob> active = Caffeine.newBuilder()
            .maximumSize(MAX_ACTIVE)
            .expireAfterWrite(ACTIVE_FOR)
            .build();
    /**
     * The job of each publication a transport may still report, by the identity of its frame (a transport reports
     * the array it was given). Weak keys: an entry lasts as long as some transport still holds the frame.
     */
    private final Cache<byte[], String> sending =
            Caffeine.newBuilder().weakKeys().build();

    public ActiveJobs(JobCache cache, AuditLog audit, Clock clock, MasterMetrics metrics, EventStream events) {
        this.cache = cache;
        this.audit = audit;
        this.clock = clock;
        this.metrics = metrics;
        this.events = events;
    }

    /**
     * What is stored in place of a return over {@code max_return_bytes} (a brine minion's session frame, a Salt
     * minion's encrypted load): a failed return whose value gives the reason, which the brine minion also hears.
     */
    public static SessionMessage.Return oversized(
            String jid, String fun, long size, long maxReturnBytes, long durationMs) {
        String reason =
                "return of " + size + " bytes refused by the master: over max_return_bytes (" + maxReturnBytes + ")";
        return new SessionMessage.Return(jid, fun, reason, 1, false, durationMs);
    }

    /**
     * A job about to be published as {@code frame} to {@code minions}: from now on its returns count, and reports
     * about {@code frame} are about it. {@code watcher}, if given, hears each return as it is stored.
     */
    public void begin(
            String jid,
            String fun,
            Collection<String> minions,
            byte[] frame,
            Consumer<SessionMessage.ReturnEvent> watcher) {
        ActiveJob job = new ActiveJob(
                fun,
                Set.copyOf(minions),
                ConcurrentHashMap.newKeySet(),
                ConcurrentHashMap.newKeySet(),
                ConcurrentHashMap.newKeySet(),
                new CopyOnWriteArrayList<>());
        if (watcher != null) {
            job.watchers().add(watcher);
        }
        active.put(jid, job);
        metrics.published();
        events.published(jid, fun, minions);
        if (frame != null) {
            sending.put(frame, jid);
        }
    }

    /** {@code jid} goes out as {@code frame} too (Salt minions' envelope): reports about it are about the job. */
    public void alsoSentAs(String jid, byte[] frame) {
        sending.put(frame, jid);
    }

    /** The minions {@code jid}'s publication could not be queued for; recorded with the job. */
    public void unreachable(String jid, Collection<String> minionIds) {
        ActiveJob job = active.getIfPresent(jid);
        if (job != null) {
            job.unconfirmed().removeAll(minionIds);
            metrics.missing(
                    (int) minionIds.stream().filter(job.unreachable()::add).count());
        }
    }

    /** What {@code jid}'s publication did not reach, or does not know it reached, as it was published. */
    public void delivery(String jid, Delivery delivery) {
        ActiveJob job = active.getIfPresent(jid);
        if (job != null) {
            job.unconfirmed().addAll(delivery.unconfirmed());
            unreachable(jid, delivery.unreachable());
        }
    }

    /** What {@code jid}'s publication is known not to have reached; empty once the job is no longer active. */
    public Optional<Delivery> delivery(String jid) {
        ActiveJob job = active.getIfPresent(jid);
        return job == null ? Optional.empty() : Optional.of(new Delivery(job.unreachable(), job.unconfirmed()));
    }

    /** A transport could not queue {@code frame} for these minions after all. On a transport thread: memory only. */
    @Override
    public void onUndelivered(Set<String> minionIds, byte[] frame) {
        String jid = sending.getIfPresent(frame);
        if (jid == null) {
            // Not a job's: a key update of a rotation, which the minion asks for again at its next heartbeat.
            LOG.debug("Minion {}: a session frame on the publish channel was not delivered", minionIds);
            return;
        }
        unreachable(jid, minionIds);
        LOG.info(
                "Job {}: publication not delivered to {} (queue full or connection lost); recorded as unreachable",
                jid,
                minionIds);
    }

    /** The minions {@code jid}'s publication did not reach, sorted; empty once the job is no longer active. */
    public List<String> unreachable(String jid) {
        ActiveJob job = active.getIfPresent(jid);
        return job == null ? List.of() : List.copyOf(new TreeSet<>(job.unreachable()));
    }

    /** Adds a watcher to a job published earlier; false when the job is no longer active. */
    public boolean watch(String jid, Consumer<SessionMessage.ReturnEvent> watcher) {
        ActiveJob job = active.getIfPresent(jid);
        if (job == null) {
            return false;
        }
        job.watchers().add(watcher);
        return true;
    }

    /**
     * A job return from {@code minionId} (the sender its session names): stored if the job targeted that minion,
     * then {@code ack} runs and the minion stops resending, and the job's watchers hear it. Called on worker threads.
     */
    public void onReturn(String minionId, SessionMessage.Return ret, Runnable ack) {
        onReturn(minionId, ret, ack, () -> {});
    }

    /** As {@link #onReturn(String, SessionMessage.Return, Runnable)}; {@code done} runs once, when it is dealt with. */
    public void onReturn(String minionId, SessionMessage.Return ret, Runnable ack, Runnable done) {
        onReturn(minionId, ret, refusal -> ack.run(), done);
    }

    /**
     * As {@link #onReturn(String, SessionMessage.Return, Runnable, Runnable)}; {@code ack} hears null when the return
     * is stored, or why it is not (a job that did not target the minion, a further return to the same job), in words
     * that name no jid or other per-return value, so that a throttled log keeps one line per reason.
     */
    public void onReturn(String minionId, SessionMessage.Return ret, Consumer<String> ack, Runnable done) {
        Targeted targeted = targetedBy(ret.jid());
        if (targeted == null || !targeted.minions().contains(minionId)) {
            try {
                // At DEBUG: an accepted minion can send these at will; the caller logs refusals throttled.
                LOG.debug("Minion {}: return for job {} it was not targeted by dropped", minionId, ret.jid());
                audit.record(AuditEvent.builder("return-dropped", "master")
                        .id(minionId)
                        .reason("return for job " + ret.jid() + " that did not target this minion")
                        .build());
                // Acknowledge anyway: resending would not make it acceptable.
                ack.accept("not a job the master sent this minion (unknown, or expired)");
            } finally {
                done.run();
            }
            return;
        }
        if (!firstReturn(ret.jid(), minionId)) {
            // First one wins (PROTOCOL.md 8.6): a resent or conflicting return is acknowledged, counted, not stored.
            duplicateReturns.incrementAndGet();
            LOG.debug("Minion {}: job {}: a further return dropped; the first one stands", minionId, ret.jid());
            try {
                ack.accept("duplicate: the first return of this minion to this job is stored and stands");
            } finally {
                done.run();
            }
            return;
        }
        StoredReturn stored = new StoredReturn(
                minionId,
                ret.returnValue(),
                ret.retcode(),
                ret.success(),
                ret.durationMs(),
                clock.instant().toString());
        boolean queued = cache.addReturn(
                ret.jid(),
                stored,
                () -> {
                    metrics.returned();
                    events.returned(
                            ret.jid(), targeted.fun(), targeted.minions(), minionId, ret.success(), ret.retcode());
                    ack.accept(null);
                    ActiveJob job = active.getIfPresent(ret.jid());
                    if (job != null) {
                        SessionMessage.ReturnEvent event = new SessionMessage.ReturnEvent(
                                ret.jid(), minionId, ret.returnValue(), ret.retcode(), ret.success(), ret.durationMs());
                        job.watchers().forEach(watcher -> watcher.accept(event));
                    }
                },
                done);
        if (!queued) {
            forgetReturn(ret.jid(), minionId); // not stored: the resend must count
            done.run();
            LOG.warn(
                    "Minion {}: job cache busy, return for job {} not stored now; the minion will resend",
                    minionId,
                    ret.jid());
        }
    }

    /** Returns for a job from a minion that came after its first, acknowledged and not stored. */
    public long duplicateReturns() {
        return duplicateReturns.get();
    }

    /** True for the first return of {@code minionId} to {@code jid}; an older job's are looked up in the cache. */
    private boolean firstReturn(String jid, String minionId) {
        ActiveJob job = active.getIfPresent(jid);
        if (job != null) {
            return job.returned().add(minionId);
        }
        return cache.returns(jid).stream().noneMatch(stored -> stored.id().equals(minionId));
    }

    private void forgetReturn(String jid, String minionId) {
        ActiveJob job = active.getIfPresent(jid);
        if (job != null) {
            job.returned().remove(minionId);
        }
    }

    private Targeted targetedBy(String jid) {
        ActiveJob job = active.getIfPresent(jid);
        if (job != null) {
            return new Targeted(job.fun(), job.minions());
        }
        if (!JobIds.isValid(jid)) {
            return null;
        }
        Optional<JobRecord> record = cache.job(jid);
        return record.map(r -> new Targeted(r.fun(), Set.copyOf(r.minions()))).orElse(null);
    }
}

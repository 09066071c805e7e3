package io.brine.master.publish;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.master.jobs.JobCache;
import io.brine.master.jobs.JobIds;
import io.brine.master.jobs.JobRecord;
import io.brine.master.jobs.StoredReturn;
import io.brine.store.keys.KeyStore;
import io.brine.master.session.PublishKeyring;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Publications;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.target.Target;
import io.brine.protocol.target.TargetException;
import io.brine.protocol.target.Targets;
import io.brine.transport.ServerTransport;
import java.io.IOException;
import java.security.PrivateKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes jobs and takes their returns. A publication is resolved against accepted minions and their reported
 * grains, recorded in the job cache, sealed with the current publish key, signed once, and sent on the per-minion
 * topic of each targeted minion only. A return counts only from a minion the job targeted; its identity comes from
 * its session.
 */
public final class JobPublisher {

    private static final Logger LOG = LoggerFactory.getLogger(JobPublisher.class);

    /** What a publication reached. */
    public record Published(String jid, List<String> minions, List<String> unreachable) {
    }

    private record ActiveJob(Set<String> minions, List<Consumer<SessionMessage.ReturnEvent>> watchers) {
    }

    private final KeyStore keyStore;
    private final GrainsStore grains;
    private final PublishKeyring keyring;
    private final ServerTransport transport;
    private final PrivateKey masterKey;
    private final JobCache cache;
    private final AuditLog audit;
    private final Clock clock;
    private final JobIds jobIds;
    private final Cache<String, ActiveJob> active;

    public JobPublisher(KeyStore keyStore, GrainsStore grains, PublishKeyring keyring, ServerTransport transport,
            PrivateKey masterKey, JobCache cache, AuditLog audit, Clock clock) {
        this.keyStore = keyStore;
        this.grains = grains;
        this.keyring = keyring;
        this.transport = transport;
        this.masterKey = masterKey;
        this.cache = cache;
        this.audit = audit;
        this.clock = clock;
        this.jobIds = new JobIds(clock);
        this.active = Caffeine.newBuilder().maximumSize(100_000).expireAfterWrite(Duration.ofHours(1)).build();
    }

    /** The accepted minions {@code target} selects, sorted. Grains are looked up only for targets that read them. */
    public List<String> resolve(Target target) {
        boolean usesGrains = target.usesGrains();
        List<String> matched = new ArrayList<>();
        for (String id : keyStore.acceptedIds()) {
            if (target.matches(id, usesGrains ? grains.get(id) : Map.of())) {
                matched.add(id);
            }
        }
        matched.sort(null);
        return matched;
    }

    public static Target parse(String type, String expression) throws PublishException {
        try {
            return Targets.parse(type, expression);
        } catch (TargetException e) {
            throw new PublishException("bad target: " + e.getMessage());
        }
    }

    /**
     * Publishes a job to the minions in {@code minions} (already resolved and allowed). {@code watcher}, if given,
     * hears each return as it is stored.
     */
    public Published publish(String publisher, String targetType, String target, List<String> minions, String fun,
            List<Object> args, Map<String, Object> kwargs, int timeoutSeconds,
            Consumer<SessionMessage.ReturnEvent> watcher) throws PublishException {
        String jid = jobIds.next();
        JobRecord record = new JobRecord(jid, clock.instant().toString(), publisher, targetType, target, fun, args,
                kwargs, timeoutSeconds, minions);
        try {
            cache.create(record);
        } catch (IOException e) {
            throw new PublishException("cannot record the job in the job cache: " + e.getMessage());
        }
        ActiveJob job = new ActiveJob(Set.copyOf(minions), new CopyOnWriteArrayList<>());
        if (watcher != null) {
            job.watchers().add(watcher);
        }
        active.put(jid, job);
        audit.record(AuditEvent.builder("publish", publisher).reason(fun + " on " + targetType + " " + target
                + " (" + minions.size() + " minions, jid " + jid + ")").build());
        if (minions.isEmpty()) {
            return new Published(jid, List.of(), List.of());
        }
        PublishLoad load = new PublishLoad(jid, new PublishLoad.Target(targetType, target), fun, args, kwargs,
                timeoutSeconds, publisher);
        PublishKeyring.Generation generation = keyring.current();
        Publish sealed = Publications.seal(generation.key(), generation.number(), keyring.nextSerial(), load);
        byte[] frame = Codec.encodeSigned(sealed, masterKey);
        Set<String> unreachable = transport.publish(minions, frame);
        LOG.info("Job {}: {} published by {} to {} minions ({} unreachable)", jid, fun, publisher, minions.size(),
                unreachable.size());
        return new Published(jid, minions, List.copyOf(new TreeSet<>(unreachable)));
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

    public JobCache cache() {
        return cache;
    }

    /**
     * A job return from {@code minionId} (the sender its session names): stored if the job targeted that minion,
     * then {@code ack} runs and the minion stops resending. Called on worker threads.
     */
    public void onReturn(String minionId, SessionMessage.Return ret, Runnable ack) {
        Set<String> targeted = targetedBy(ret.jid());
        if (targeted == null || !targeted.contains(minionId)) {
            LOG.warn("Minion {}: return for job {} it was not targeted by dropped", minionId, ret.jid());
            audit.record(AuditEvent.builder("return-dropped", "master").id(minionId)
                    .reason("return for job " + ret.jid() + " that did not target this minion").build());
            // Acknowledge anyway: resending would not make it acceptable.
            ack.run();
            return;
        }
        StoredReturn stored = new StoredReturn(minionId, ret.returnValue(), ret.retcode(), ret.success(),
                ret.durationMs(), clock.instant().toString());
        boolean queued = cache.addReturn(ret.jid(), stored, () -> {
            ack.run();
            ActiveJob job = active.getIfPresent(ret.jid());
            if (job != null) {
                SessionMessage.ReturnEvent event = new SessionMessage.ReturnEvent(ret.jid(), minionId,
                        ret.returnValue(), ret.retcode(), ret.success(), ret.durationMs());
                job.watchers().forEach(watcher -> watcher.accept(event));
            }
        });
        if (!queued) {
            LOG.warn("Minion {}: job cache busy, return for job {} not stored now; the minion will resend",
                    minionId, ret.jid());
        }
    }

    private Set<String> targetedBy(String jid) {
        ActiveJob job = active.getIfPresent(jid);
        if (job != null) {
            return job.minions();
        }
        if (!JobIds.isValid(jid)) {
            return null;
        }
        Optional<JobRecord> record = cache.job(jid);
        return record.map(r -> Set.copyOf(r.minions())).orElse(null);
    }
}

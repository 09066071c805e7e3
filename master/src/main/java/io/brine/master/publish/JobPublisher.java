package io.brine.master.publish;

import io.brine.master.auth.StoreWrites;
import io.brine.master.jobs.ActiveJobs;
import io.brine.master.jobs.Delivery;
import io.brine.master.jobs.JobCache;
import io.brine.master.jobs.JobIds;
import io.brine.master.jobs.JobRecord;
import io.brine.master.session.PublishKeyring;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Publications;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.targeting.Target;
import io.brine.protocol.targeting.TargetException;
import io.brine.protocol.targeting.Targets;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyStore;
import io.brine.transport.ServerTransport;
import java.io.IOException;
import java.security.PrivateKey;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes jobs. A publication is resolved against accepted minions and their reported grains, recorded in the job
 * cache and among the {@link ActiveJobs}, sealed with the current publish key, signed once, and sent on the
 * per-minion topic of each targeted minion only. The minions it does not reach, at once or later on a transport
 * thread, are recorded with the job. In a cluster, a job is also announced to the other masters, which deliver it
 * to the targets they hold ({@link SharedPublications}); only those no master reached count as unreachable.
 */
public final class JobPublisher {

    private static final Logger LOG = LoggerFactory.getLogger(JobPublisher.class);

    /**
     * What a publication reached: {@code unreachable}, the targets no master could queue it for, and
     * {@code unconfirmed}, those whose delivery is not known yet (a master of the cluster has not reported); sorted.
     */
    public record Published(String jid, List<String> minions, List<String> unreachable, List<String> unconfirmed) {}

    /** The start of the refusal of a job while the cluster cannot be written. */
    public static final String NO_QUORUM = "cluster has no quorum";

    private final KeyStore keyStore;
    private final GrainsStore grains;
    private final PublishKeyring keyring;
    private final ServerTransport transport;
    private final Supplier<PrivateKey> masterKey;
    private final JobCache cache;
    private final ActiveJobs active;
    private final AuditLog audit;
    /** Failed writes (readiness) and audit lines that could not be written. */
    private final StoreWrites writes;

    private final Clock clock;
    private final JobIds jobIds;
    /** Publishes to stock Salt minions in Salt's envelope (issue 15). */
    private final SaltEnvelopes salt;
    /** Publications forwarded between a cluster's masters. */
    private final SharedPublications cluster;

    private final Object sendLock = new Object();

    /**
     * @param salt the targets that are stock Salt minions and their envelope ({@link SaltEnvelopes#none} without
     *     {@code salt_minions})
     * @param cluster the other masters jobs published here are forwarded to ({@link SharedPublications#alone} for a
     *     master alone)
     */
    public JobPublisher(
            KeyStore keyStore,
            GrainsStore grains,
            PublishKeyring keyring,
            ServerTransport transport,
            Supplier<PrivateKey> masterKey,
            JobCache cache,
            ActiveJobs active,
            AuditLog audit,
            Clock clock,
            SaltEnvelopes salt,
            SharedPublications cluster,
            StoreWrites writes) {
        this.writes = writes;
        this.cluster = cluster;
        this.salt = salt;
        this.keyStore = keyStore;
        this.grains = grains;
        this.keyring = keyring;
        this.transport = transport;
        this.masterKey = masterKey;
        this.cache = cache;
        this.active = active;
        this.audit = audit;
        this.clock = clock;
        this.jobIds = new JobIds(clock);
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
    public Published publish(
            String publisher,
            String targetType,
            String target,
            List<String> minions,
            String fun,
            List<Object> args,
            Map<String, Object> kwargs,
            int timeoutSeconds,
            Consumer<SessionMessage.ReturnEvent> watcher)
            throws PublishException {
        // Decided before anything is recorded or sent: a job refused here runs nowhere.
        Optional<String> unavailable = cluster.unavailable();
        if (unavailable.isPresent()) {
            throw new PublishException(NO_QUORUM + " (" + unavailable.get() + "): the job was not published and"
                    + " runs nowhere; publish it again once ZooKeeper has quorum");
        }
        String jid = jobIds.next();
        JobRecord record = new JobRecord(
                jid,
                clock.instant().toString(),
                publisher,
                targetType,
                target,
                fun,
                args,
                kwargs,
                timeoutSeconds,
                minions);
        // Audited before anything is recorded or sent: no job runs without its audit line.
        if (!writes.audit(
                "publish",
                publisher,
                () -> audit.record(AuditEvent.builder("publish", publisher)
                        .reason(fun + " on " + targetType + " " + target + " (" + minions.size() + " minions, jid "
                                + jid + ")")
                        .build()))) {
            throw new PublishException(
                    "cannot write the audit log: " + writes.problem().orElse("write failed"));
        }
        try {
            cache.create(record);
        } catch (IOException e) {
            writes.failed(e.getMessage());
            throw new PublishException("cannot record the job in the job cache: " + e.getMessage());
        }
        if (minions.isEmpty()) {
            active.begin(jid, fun, minions, null, watcher);
            return new Published(jid, List.of(), List.of(), List.of());
        }
        PublishLoad load = new PublishLoad(
                jid, new PublishLoad.Target(targetType, target), fun, args, kwargs, timeoutSeconds, publisher);
        long issuedMs = clock.millis();
        Consumer<SessionMessage.ReturnEvent> heard = watcher == null ? null : once(watcher);
        // Announced first, so the other masters deliver while this one does.
        SharedPublications.Announced announced = cluster.announce(record, load, issuedMs, heard);
        Delivery delivery = announced.confirm(send(load, issuedMs, minions, heard));
        active.delivery(jid, delivery);
        LOG.info(
                "Job {}: {} published by {} to {} minions ({} unreachable, {} unconfirmed)",
                jid,
                fun,
                publisher,
                minions.size(),
                delivery.unreachable().size(),
                delivery.unconfirmed().size());
        return new Published(jid, minions, sorted(delivery.unreachable()), sorted(delivery.unconfirmed()));
    }

    private static List<String> sorted(Set<String> ids) {
        return List.copyOf(new TreeSet<>(ids));
    }

    /**
     * Publishes to this master's minions a job another master of the cluster announced: recorded in the job cache
     * (so the returns this master receives are stored), sealed and signed as this master's own publication with
     * the origin's issue time. Answers the targets it was queued for.
     */
    public Set<String> deliverForwarded(JobRecord record, PublishLoad load, long issuedMs) {
        try {
            cache.adopt(record);
        } catch (IOException e) {
            LOG.warn(
                    "Job {}: announced by another master, not delivered here: cannot record it: {}",
                    record.jid(),
                    e.getMessage());
            return Set.of();
        }
        Set<String> unreachable = send(load, issuedMs, record.minions(), null);
        Set<String> delivered = new TreeSet<>(record.minions());
        delivered.removeAll(unreachable);
        LOG.info(
                "Job {}: {} published by {} through another master; delivered here to {} of {} minions",
                record.jid(),
                record.fun(),
                record.publisher(),
                delivered.size(),
                record.minions().size());
        return delivered;
    }

    /**
     * Seals {@code load} under the current generation with the next serial, signs it and queues it for each of
     * {@code minions} (Salt minions in Salt's envelope); answers those it could not be queued for. One at a time:
     * a minion's publications leave in serial order, as its replay window expects.
     */
    private Set<String> send(
            PublishLoad load, long issuedMs, List<String> minions, Consumer<SessionMessage.ReturnEvent> watcher) {
        String jid = load.jid();
        synchronized (sendLock) {
            PublishKeyring.Generation generation = keyring.current();
            Publish sealed =
                    Publications.seal(generation.key(), generation.number(), keyring.nextSerial(), issuedMs, load);
            byte[] frame = Codec.encodeSigned(sealed, masterKey.get());
            // Before it goes out: a transport may report the frame undelivered before publish() returns.
            active.begin(jid, load.fun(), minions, frame, watcher);
            List<String> saltMinions = salt.saltMinions(minions);
            if (saltMinions.isEmpty()) {
                return new HashSet<>(transport.publish(minions, frame));
            }
            List<String> brineMinions = new ArrayList<>(minions);
            brineMinions.removeAll(saltMinions);
            Set<String> unreachable =
                    new HashSet<>(brineMinions.isEmpty() ? Set.of() : transport.publish(brineMinions, frame));
            byte[] envelope = salt.envelope(
                    jid, load.fun(), load.args(), load.kwargs(), load.publisher(), saltMinions, keyring.nextSerial());
            active.alsoSentAs(jid, envelope);
            unreachable.addAll(transport.publish(saltMinions, envelope));
            return unreachable;
        }
    }

    /** {@code watcher}, hearing each minion's return once (a cluster's returns come by two paths). */
    private static Consumer<SessionMessage.ReturnEvent> once(Consumer<SessionMessage.ReturnEvent> watcher) {
        Set<String> heard = ConcurrentHashMap.newKeySet();
        return event -> {
            if (heard.add(event.minionId())) {
                watcher.accept(event);
            }
        };
    }

    /**
     * What {@code job}'s publication is known not to have reached: in a cluster, from the masters' delivery reports
     * while the cluster keeps them (ten minutes); else from this master's record while the job is active (an hour);
     * after that, every target is unconfirmed (the master no longer knows).
     */
    public Delivery delivery(JobRecord job) {
        Optional<Delivery> reported = cluster.delivery(job.jid(), job.minions());
        if (reported.isPresent()) {
            return reported.get();
        }
        return active.delivery(job.jid()).orElseGet(() -> Delivery.unconfirmed(job.minions()));
    }

    /** Removes what the cluster no longer needs of old publications (timer thread). */
    public void sweepShared() {
        cluster.sweep();
    }

    public JobCache cache() {
        return cache;
    }

    /** The jobs in flight: their returns, watchers and the minions their publications did not reach. */
    public ActiveJobs active() {
        return active;
    }
}

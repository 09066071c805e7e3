package io.brine.master;

import io.brine.master.auth.MasterKeyring;
import io.brine.master.events.EventStream;
import io.brine.master.metrics.MasterMetrics;
import io.brine.master.publish.GrainsStore;
import io.brine.master.publish.JobPublisher;
import io.brine.master.session.MinionSession;
import io.brine.master.session.PublishKeyring;
import io.brine.master.session.SessionTable;
import io.brine.master.session.SharedPublishKey;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.message.SessionMessage;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyChange;
import io.brine.store.keys.KeyChangeListener;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.transport.ServerTransport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running master: the transport and the {@link InboundDispatcher} that serves it, the publish key and its
 * rotation, and the timer. Wired by {@link MasterDaemon}, which builds every part before the transport starts, so a
 * frame that arrives as soon as the port is bound finds everything in place.
 *
 * <p>Threads: the transport's own threads decode and hand over (the dispatcher); the dispatcher's two worker pools
 * answer auth requests and session frames; the job cache writes on its own thread; the timer thread rotates the
 * publish key, looks for admins' rotation requests every second and sweeps the job cache every minute.
 */
public final class Master implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Master.class);

    /** What the daemon wires before the master: the domain the dispatcher and the timer share. */
    public record Parts(
            SessionTable sessions,
            PublishKeyring keyring,
            GrainsStore grains,
            JobPublisher jobs,
            InboundDispatcher dispatcher,
            MasterMetrics metrics,
            EventStream events,
            MasterKeyring masterKeys) {}

    private final KeyStore keyStore;
    private final ServerTransport transport;
    private final SessionTable sessions;
    private final PublishKeyring keyring;
    private final GrainsStore grains;
    private final JobPublisher jobs;
    private final InboundDispatcher dispatcher;
    private final MasterMetrics metrics;
    private final EventStream events;
    private final MasterKeyring masterKeys;
    private final AuditLog auditLog;
    private final Duration publishSession;
    private final Clock clock;
    private final ScheduledExecutorService timer;
    private final AtomicBoolean rotationQueued = new AtomicBoolean();
    private volatile long nextScheduledRotationMs;
    private long ticks;
    /** The admins' rotation request counter last seen (KeyStore#rotationRequests); timer thread only. */
    private long rotationRequestsSeen;
    /** Closes the key listener {@link #start} adds; nothing before. */
    private AutoCloseable keyListener = () -> {};

    private volatile boolean serving;
    /** The cluster's publish key generation ({@link SharedPublishKey#alone} for a master alone). */
    private final SharedPublishKey sharedKey;

    /**
     * The master owns {@code transport} and the dispatcher's pools from here on, and closes them. It publishes under
     * the generation {@code sharedKey} agrees on with the cluster's other masters.
     */
    public Master(
            KeyStore keyStore,
            ServerTransport transport,
            Parts parts,
            AuditLog auditLog,
            Duration publishSession,
            Clock clock,
            SharedPublishKey sharedKey) {
        this.sharedKey = sharedKey;
        this.keyStore = keyStore;
        this.transport = transport;
        this.sessions = parts.sessions();
        this.keyring = parts.keyring();
        this.grains = parts.grains();
        this.jobs = parts.jobs();
        this.dispatcher = parts.dispatcher();
        this.metrics = parts.metrics();
        this.events = parts.events();
        this.masterKeys = parts.masterKeys();
        this.auditLog = auditLog;
        this.publishSession = publishSession;
        this.clock = clock;
        this.timer = Executors.newSingleThreadScheduledExecutor(daemonThreads("brine-timer"));
    }

    /** Binds the transport and starts serving. */
    public void start() throws IOException {
        keyring.install(sharedKey.join(keyring.current(), this::clusterRotated));
        transport.start(dispatcher);
        keyListener = keyStore.addListener(new KeyChangeListener() {
            @Override
            public void onChange(KeyChange change) {
                if (removed(change)) {
                    requestRotation("key of " + change.id() + " removed");
                }
            }

            @Override
            public void onChanges(List<KeyChange> changes) {
                // Everything another writer did at once (brine-key -D over thousands of keys): one rotation.
                List<String> ids = new ArrayList<>();
                for (KeyChange change : changes) {
                    if (removed(change)) {
                        ids.add(change.id());
                    }
                }
                if (!ids.isEmpty()) {
                    requestRotation(
                            ids.size() == 1
                                    ? "key of " + ids.get(0) + " removed"
                                    : "keys of " + ids.size() + " minions removed (" + ids.get(0) + ", ...)");
                }
            }
        });
        nextScheduledRotationMs = clock.millis() + publishSession.toMillis();
        rotationRequestsSeen = keyStore.rotationRequests();
        timer.scheduleWithFixedDelay(this::tick, 1, 1, TimeUnit.SECONDS);
        serving = true;
        LOG.info(
                "Master serving: requests on {}, publications on {}, publish key generation {}",
                transport.addresses().request(),
                transport.addresses().publish(),
                keyring.current().number());
    }

    /** Whether the transports are bound and serving: between {@link #start()} and {@link #close()}. */
    public boolean serving() {
        return serving;
    }

    public ServerTransport.Addresses addresses() {
        return transport.addresses();
    }

    public SessionTable sessions() {
        return sessions;
    }

    public PublishKeyring keyring() {
        return keyring;
    }

    public KeyStore keyStore() {
        return keyStore;
    }

    /** The master key in force, its chain and, within the grace, the previous key. */
    public MasterKeyring masterKeys() {
        return masterKeys;
    }

    public ServerTransport transport() {
        return transport;
    }

    public JobPublisher jobs() {
        return jobs;
    }

    public GrainsStore grains() {
        return grains;
    }

    /** Frames dropped before a handler saw them: malformed, over a limit, over a rate, or a full queue. */
    public long droppedFrames() {
        return dispatcher.droppedFrames();
    }

    /** Ends what a minion whose key is no longer accepted had; true when it was accepted (then rotate). */
    private boolean removed(KeyChange change) {
        boolean wasAccepted = change.from().filter(s -> s == KeyState.ACCEPTED).isPresent();
        boolean stillAccepted = change.to().filter(s -> s == KeyState.ACCEPTED).isPresent();
        if (wasAccepted && !stillAccepted) {
            Optional<MinionSession> session = sessions.byMinion(change.id());
            if (session.isPresent() && holdsAnotherAcceptedKey(session.get(), change.fingerprint())) {
                // Opened since, with another key the id holds now (its key deleted and another accepted at once):
                // that session stays. The publish key still rotates, for the removed key's holder.
                return true;
            }
            grains.remove(change.id());
            if (session.isPresent() && sessions.remove(session.get())) {
                LOG.info(
                        "Minion {}: key {}; session closed",
                        change.id(),
                        change.to().map(s -> "moved to " + s.dirName()).orElse("deleted"));
            }
            transport.unbind(change.id());
            return true;
        }
        return false;
    }

    /** Rotates now on the timer thread, coalescing requests that arrive while one is queued. */
    public void requestRotation(String reason) {
        if (rotationQueued.compareAndSet(false, true)) {
            timer.execute(() -> {
                rotationQueued.set(false);
                rotate(reason);
            });
        }
    }

    /**
     * Makes a new publish key generation and sends it to every session sealed with that minion's request key: no
     * RSA operation per minion. A session whose minion is no longer accepted with that key gets nothing and is
     * closed: an auth answered from the key store's state just before a removal can open a session after the
     * removal listener has run. Runs on the timer thread.
     */
    private void rotate(String reason) {
        long started = System.nanoTime();
        PublishKeyring.Generation current = keyring.current();
        PublishKeyring.Generation candidate = keyring.candidate();
        PublishKeyring.Generation generation;
        try {
            generation = sharedKey.next(current, candidate);
        } catch (IOException e) {
            // Without ZooKeeper no master can agree on a new key; the sessions keep the current one.
            LOG.error("Publish key not rotated ({}): {}", reason, e.getMessage());
            return;
        }
        if (!keyring.install(generation)) {
            return;
        }
        if (generation != candidate) {
            reason = reason + "; generation made by another master";
        }
        distribute(generation, reason, started);
    }

    /** Another master of the cluster rotated: this master's minions get the new generation too. */
    private void clusterRotated(PublishKeyring.Generation generation) {
        timer.execute(() -> {
            if (generation.number() > keyring.current().number() && keyring.install(generation)) {
                distribute(generation, "rotated by another master", System.nanoTime());
            }
        });
    }

    /** Sends {@code generation}, now current, to every session. Timer thread. */
    private void distribute(PublishKeyring.Generation generation, String reason, long started) {
        int sent = 0;
        int undelivered = 0;
        var update = keyring.keyUpdate();
        for (MinionSession session : sessions.all()) {
            if (!stillAccepted(session)) {
                sessions.remove(session);
                LOG.info("Minion {}: key no longer accepted; session closed", session.minionId());
                continue;
            }
            // On the minion's publish topic (ZeroMQ) or down its connection (TCP), sealed for it alone.
            if (session.sealAndSend(
                    update,
                    frame -> transport
                            .publish(List.of(session.minionId()), frame)
                            .isEmpty())) {
                sent++;
            } else {
                undelivered++;
            }
        }
        nextScheduledRotationMs = clock.millis() + publishSession.toMillis();
        events.rotated(generation.number(), reason);
        LOG.info(
                "Publish key rotated to generation {} ({}): sent to {} minions, {} unreachable (they will ask), "
                        + "{} ms",
                generation.number(),
                reason,
                sent,
                undelivered,
                (System.nanoTime() - started) / 1_000_000);
        try {
            auditLog.record(AuditEvent.builder("publish-key-rotated", "master")
                    .reason("generation "
                            + generation.number() + ": " + reason + "; sent to " + sent + " minions, " + undelivered
                            + " unreachable")
                    .build());
        } catch (UncheckedIOException e) {
            LOG.error(
                    "Publish key rotation to generation {} not written to the audit log: {}",
                    generation.number(),
                    e.getMessage());
        }
    }

    /**
     * Sends the master key's chain, after a rotation brine-key made, to every session: each minion walks it from the
     * key it pinned and pins the new one (PROTOCOL.md 6.4). Timer thread.
     */
    private void distributeSuccession(List<MasterSuccession> chain) {
        if (chain.isEmpty()) {
            return;
        }
        MasterSuccession newest = chain.get(chain.size() - 1);
        int sent = 0;
        int undelivered = 0;
        var succession = new SessionMessage.MasterKeySuccession(chain);
        for (MinionSession session : sessions.all()) {
            if (session.sealAndSend(
                    succession,
                    frame -> transport
                            .publish(List.of(session.minionId()), frame)
                            .isEmpty())) {
                sent++;
            } else {
                undelivered++;
            }
        }
        String fingerprint = Fingerprints.of(masterKeys.current().getPublic());
        LOG.info(
                "Master key rotated to {}: chain sent to {} minions, {} unreachable (shown at their next auth); the "
                        + "previous key signs publications until {}",
                fingerprint,
                sent,
                undelivered,
                Instant.ofEpochMilli(newest.graceUntilMs()));
        audit(AuditEvent.builder("master-key-loaded", "master")
                .fingerprint(fingerprint)
                .reason("chain sent to " + sent + " minions, " + undelivered + " unreachable")
                .build());
        metrics.masterKeyLoaded();
        events.masterKeyLoaded(newest, fingerprint, sent, undelivered);
    }

    private void audit(AuditEvent event) {
        try {
            auditLog.record(event);
        } catch (UncheckedIOException e) {
            LOG.error("{} not written to the audit log: {}", event.event(), e.getMessage());
        }
    }

    /**
     * Whether {@code session} holds a key other than the one removed ({@code removedFingerprint}) and that key is
     * accepted: never true for the removed key's session, whatever the store's view says when the listener runs (a
     * rescan can tell its listeners before its view holds the change).
     */
    private boolean holdsAnotherAcceptedKey(MinionSession session, String removedFingerprint) {
        if (removedFingerprint == null
                || removedFingerprint.isBlank()
                || Fingerprints.of(session.publicKey()).equals(removedFingerprint)) {
            return false;
        }
        Optional<RSAPublicKey> accepted = keyStore.acceptedKey(session.minionId());
        return accepted.isPresent()
                && !Fingerprints.of(accepted.get()).equals(removedFingerprint)
                && session.holds(accepted.get());
    }

    private boolean stillAccepted(MinionSession session) {
        return keyStore.acceptedKey(session.minionId()).filter(session::holds).isPresent();
    }

    private void tick() {
        try {
            if (++ticks % 60 == 0) {
                jobs.cache().sweep();
                jobs.sweepShared();
            }
            masterKeys.reloadIfRotated().ifPresent(this::distributeSuccession);
            masterKeys.retireIfDue().ifPresent(retired -> {
                String fingerprint = Fingerprints.of(retired);
                LOG.info(
                        "The previous master key {}'s grace is over: it is retired, the current key signs everything",
                        fingerprint);
                audit(AuditEvent.builder("master-key-retired", "master")
                        .fingerprint(fingerprint)
                        .reason("master_key_grace over")
                        .build());
                metrics.masterKeyRetired();
                events.masterKeyRetired(fingerprint);
            });
            long requested = keyStore.rotationRequests();
            if (requested != rotationRequestsSeen && requested >= 0) {
                rotationRequestsSeen = requested;
                rotate("asked by an admin");
            } else if (clock.millis() >= nextScheduledRotationMs) {
                rotate("publish_session of " + publishSession.toSeconds() + " s elapsed");
            }
        } catch (RuntimeException e) {
            LOG.error("Bug: timer tick failed", e);
        }
    }

    @Override
    public void close() {
        serving = false;
        timer.shutdownNow();
        sharedKey.close();
        try {
            keyListener.close();
        } catch (Exception e) {
            LOG.debug("Closing key listener failed", e);
        }
        transport.close();
        dispatcher.close();
    }

    static ThreadFactory daemonThreads(String name) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}

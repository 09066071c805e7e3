package io.brine.master;

import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.master.auth.AuditedAuth;
import io.brine.daemon.config.MasterConfig;
import io.brine.master.jobs.JobCache;
import io.brine.master.publish.GrainsStore;
import io.brine.master.publish.JobPublisher;
import io.brine.master.publish.PublisherService;
import java.security.interfaces.RSAPublicKey;
import java.util.Map;
import io.brine.master.auth.AuthService;
import io.brine.master.auth.SourceRateLimiter;
import io.brine.store.keys.KeyChange;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.master.session.MinionSession;
import io.brine.master.session.PublishKeyring;
import io.brine.master.session.SessionService;
import io.brine.master.session.SessionTable;
import io.brine.protocol.message.MessageType;
import io.brine.protocol.codec.FrameLimits;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's domain, independent of the transport: auth, sessions, publish key rotation. The transport thread
 * only classifies frames and hands them to worker pools; crypto and disk run there.
 */
public final class Master implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Master.class);

    /** What the master needs besides its key store, transport and job cache. */
    public record Settings(Duration publishSession, double authRatePerSource, int authBurst, int workerThreads,
            int pendingRetrySeconds, AcceptancePolicies policies, Map<String, MasterConfig.PublisherAcl> acls,
            RSAPublicKey rootKey) {
    }

    private final KeyStore keyStore;
    private final ServerTransport transport;
    private final Settings settings;
    private final Clock clock;
    private final SessionTable sessions = new SessionTable();
    private final PublishKeyring keyring;
    private final SourceRateLimiter authLimiter;
    private final ThreadPoolExecutor authPool;
    private final ThreadPoolExecutor sessionPool;
    private final ScheduledExecutorService timer;
    private final AtomicBoolean rotationQueued = new AtomicBoolean();
    /** Open once start() has wired the services: frames can arrive as soon as the transport is bound. */
    private final CountDownLatch serving = new CountDownLatch(1);
    private final AtomicLong droppedFrames = new AtomicLong();
    private final AuditLog auditLog;
    private final GrainsStore grains;
    private final JobPublisher jobs;
    private final PublisherService publishers;
    private volatile AuthService authService;
    private volatile SessionService sessionService;
    private volatile long nextScheduledRotationMs;
    private long ticks;
    /** The admins' rotation request counter last seen (KeyStore#rotationRequests); timer thread only. */
    private long rotationRequestsSeen;
    private AutoCloseable keyListener;

    public Master(KeyStore keyStore, ServerTransport transport, Settings settings, AuditLog auditLog,
            JobCache jobCache, Clock clock) {
        this.keyStore = keyStore;
        this.transport = transport;
        this.settings = settings;
        this.auditLog = auditLog;
        this.clock = clock;
        this.keyring = new PublishKeyring(clock);
        this.grains = new GrainsStore(settings.policies()::classification);
        this.jobs = new JobPublisher(keyStore, grains, keyring, transport, keyStore.masterKeyPair().getPrivate(),
                jobCache, auditLog, clock);
        this.publishers = new PublisherService(keyStore.pkiDir(), settings.rootKey(), settings.acls(), jobs,
                transport, keyStore.masterKeyPair(), auditLog, clock);
        this.authLimiter = new SourceRateLimiter(settings.authRatePerSource(), settings.authBurst(), 100_000,
                System::nanoTime);
        this.authPool = pool("brine-auth", settings.workerThreads(), 8192);
        this.sessionPool = pool("brine-session", settings.workerThreads(), 65536);
        this.timer = Executors.newSingleThreadScheduledExecutor(daemonThreads("brine-timer"));
    }

    /** Binds the transport and starts serving. */
    public void start() throws IOException {
        transport.start(new ServerTransport.InboundHandler() {
            @Override
            public void onFrame(Peer from, byte[] frame) {
                classify(from, frame);
            }
        });
        authService = new AuthService(keyStore, settings.policies(), sessions, keyring, new AuditedAuth(auditLog),
                clock, transport::publishPort, settings.pendingRetrySeconds());
        sessionService = new SessionService(sessions, keyring, transport, keyStore.masterKeyPair().getPrivate(),
                authLimiter::tryAcquire, jobs, publishers::handleSession, clock);
        keyListener = keyStore.addListener(this::onKeyChange);
        nextScheduledRotationMs = clock.millis() + settings.publishSession().toMillis();
        rotationRequestsSeen = keyStore.rotationRequests();
        serving.countDown();
        timer.scheduleWithFixedDelay(this::tick, 1, 1, TimeUnit.SECONDS);
        LOG.info("Master serving: requests on {}, publications on {}, publish key generation {}",
                transport.addresses().request(), transport.addresses().publish(), keyring.current().number());
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

    public ServerTransport transport() {
        return transport;
    }

    public SessionService sessionService() {
        return sessionService;
    }

    public JobPublisher jobs() {
        return jobs;
    }

    public GrainsStore grains() {
        return grains;
    }

    /** Frames dropped before parsing: unknown type, over a limit, over a rate, or a full queue. */
    public long droppedFrames() {
        return droppedFrames.get();
    }

    // Runs on the transport thread: look at two bytes, hand off, never parse or decrypt here.
    private void classify(Peer from, byte[] frame) {
        if (frame.length < 2) {
            droppedFrames.incrementAndGet();
            return;
        }
        Optional<MessageType> type = MessageType.of(frame[1] & 0xff);
        if (type.isEmpty()) {
            droppedFrames.incrementAndGet();
            return;
        }
        switch (type.get()) {
            case AUTH_REQUEST -> {
                if (frame.length > FrameLimits.MAX_UNAUTHENTICATED || !authLimiter.tryAcquire(from.remoteAddress())) {
                    droppedFrames.incrementAndGet();
                    LOG.debug("Auth from {} dropped: over the size or rate limit", from.remoteAddress());
                    return;
                }
                submit(authPool, () -> authService.handle(from, frame).ifPresent(outcome -> {
                    // Bind first: a TCP connection must take authenticated frame sizes before the minion hears.
                    outcome.session().ifPresent(session -> transport.bind(session.minionId(), from));
                    transport.send(from, outcome.reply());
                }));
            }
            case CLIENT_AUTH -> {
                if (frame.length > FrameLimits.MAX_UNAUTHENTICATED || !authLimiter.tryAcquire(from.remoteAddress())) {
                    droppedFrames.incrementAndGet();
                    return;
                }
                submit(authPool, () -> publishers.handleAuth(from, frame).ifPresent(reply -> transport.send(from,
                        reply)));
            }
            case SESSION -> submit(sessionPool, () -> sessionService.handle(from, frame));
            default -> droppedFrames.incrementAndGet();
        }
    }

    private void submit(ThreadPoolExecutor pool, Runnable task) {
        if (pool.getQueue().remainingCapacity() == 0) {
            droppedFrames.incrementAndGet();
            return;
        }
        pool.execute(() -> {
            try {
                // A minion reconnecting after a master restart speaks as soon as the port is bound, before
                // start() has made the services; its frame waits for them instead of failing on a null.
                serving.await();
                task.run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                LOG.error("Bug: unexpected failure handling a frame", e);
            }
        });
    }

    private void onKeyChange(KeyChange change) {
        boolean wasAccepted = change.from().filter(s -> s == KeyState.ACCEPTED).isPresent();
        boolean stillAccepted = change.to().filter(s -> s == KeyState.ACCEPTED).isPresent();
        if (wasAccepted && !stillAccepted) {
            grains.remove(change.id());
            if (sessions.remove(change.id())) {
                LOG.info("Minion {}: key {}; session closed", change.id(),
                        change.to().map(s -> "moved to " + s.dirName()).orElse("deleted"));
            }
            transport.unbind(change.id());
            requestRotation("key of " + change.id() + " removed");
        }
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
        PublishKeyring.Generation generation = keyring.rotate();
        int sent = 0;
        int undelivered = 0;
        var update = sessionService.keyUpdate();
        for (MinionSession session : sessions.all()) {
            if (!stillAccepted(session)) {
                sessions.remove(session);
                LOG.info("Minion {}: key no longer accepted; session closed", session.minionId());
                continue;
            }
            if (sessionService.push(session, update).isEmpty()) {
                sent++;
            } else {
                undelivered++;
            }
        }
        nextScheduledRotationMs = clock.millis() + settings.publishSession().toMillis();
        LOG.info("Publish key rotated to generation {} ({}): sent to {} minions, {} unreachable (they will ask), "
                + "{} ms", generation.number(), reason, sent, undelivered, (System.nanoTime() - started) / 1_000_000);
        try {
            auditLog.record(AuditEvent.builder("publish-key-rotated", "master").reason("generation "
                    + generation.number() + ": " + reason + "; sent to " + sent + " minions, " + undelivered
                    + " unreachable").build());
        } catch (java.io.UncheckedIOException e) {
            LOG.error("Publish key rotation to generation {} not written to the audit log: {}", generation.number(),
                    e.getMessage());
        }
    }

    private boolean stillAccepted(MinionSession session) {
        return keyStore.acceptedKey(session.minionId()).filter(key -> key.getModulus().equals(
                session.publicKey().getModulus()) && key.getPublicExponent().equals(
                session.publicKey().getPublicExponent())).isPresent();
    }

    private void tick() {
        try {
            if (++ticks % 60 == 0) {
                jobs.cache().sweep();
            }
            long requested = keyStore.rotationRequests();
            if (requested != rotationRequestsSeen && requested >= 0) {
                rotationRequestsSeen = requested;
                rotate("asked by an admin");
            } else if (clock.millis() >= nextScheduledRotationMs) {
                rotate("publish_session of " + settings.publishSession().toSeconds() + " s elapsed");
            }
        } catch (RuntimeException e) {
            LOG.error("Bug: timer tick failed", e);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        if (keyListener != null) {
            try {
                keyListener.close();
            } catch (Exception e) {
                LOG.debug("Closing key listener failed", e);
            }
        }
        transport.close();
        authPool.shutdownNow();
        sessionPool.shutdownNow();
        try {
            authPool.awaitTermination(5, TimeUnit.SECONDS);
            sessionPool.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static ThreadPoolExecutor pool(String name, int threads, int queue) {
        return new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new ArrayBlockingQueue<>(queue),
                daemonThreads(name), new ThreadPoolExecutor.DiscardPolicy());
    }

    static java.util.concurrent.ThreadFactory daemonThreads(String name) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}

package io.brine.minion;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.brine.minion.auth.Backoff;
import io.brine.minion.auth.MasterPin;
import io.brine.minion.auth.MinionKeys;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.Publications;
import io.brine.protocol.codec.ReplayWindow;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.SessionKey;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionUnknown;
import io.brine.protocol.message.Suite;
import io.brine.transport.ClientTransport;
import io.brine.protocol.codec.FrameLimits;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The minion's side of the protocol: auth with back-off and jitter, the master pin, the session, publish key
 * generations, publications and returns. All state is confined to one event thread; the transport thread only
 * hands frames over.
 */
public final class Minion implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Minion.class);
    private static final int MAX_AWAITING_KEY = 64;
    private static final int SEEN_JIDS = 4096;
    private static final long RETURN_RETRY_BASE_MS = 5_000;

    /** What the minion needs besides its transport; MinionMain maps {@code minion.yaml} onto it. */
    public record Settings(String id, Path pkiDir, int keysize, String masterFinger, Duration acceptanceWait,
            Duration acceptanceWaitMax, boolean rejectedRetry, Duration authTimeout, Duration heartbeatInterval,
            Path statusFile, Map<String, Object> grains, byte[] grant, String token, int returnQueueCapacity,
            Duration returnRetryMax) {

        @Override
        public String toString() {
            return "Settings[id=" + id + ", pkiDir=" + pkiDir + "]";
        }
    }

    /** Receives the jobs of publications that passed every check. Called on the event thread: hand work off. */
    public interface JobHandler {
        void onJob(PublishLoad load);
    }

    private final Settings settings;
    private final ClientTransport transport;
    private final Clock clock;
    private final JobHandler jobs;
    private final SecureRandom random = new SecureRandom();
    private final ScheduledExecutorService loop;
    private final Backoff backoff;
    private final CompletableFuture<MinionState> terminated = new CompletableFuture<>();
    // jackson-core's streaming writer: an ObjectMapper would load some 350 databind classes for this one file.
    private final JsonFactory json = new JsonFactory();

    // Everything below is confined to the event thread.
    private KeyPair keys;
    private MasterPin pin;
    private volatile MinionStatus status;
    private byte[] pendingNonce;
    private ScheduledFuture<?> authTimeout;
    private ScheduledFuture<?> retry;
    private ActiveSession session;
    private final TreeMap<Long, SessionKey> publishKeys = new TreeMap<>();
    private long serialFloor;
    private final ReplayWindow serials = new ReplayWindow();
    private final LinkedHashSet<String> seenJids = new LinkedHashSet<>();
    private final Deque<Publish> awaitingKey = new ArrayDeque<>();
    private final ReturnQueue returns;
    private long nextHeartbeatMs;
    /** When a heartbeat sent and not yet answered must have been answered by; 0 when none is outstanding. */
    private long heartbeatDeadlineMs;
    private boolean everConnected;
    private long authRequests;
    /** The master key of the last verified auth reply, for the status file (pinned only once accepted). */
    private String masterFingerprint;

    private static final class ActiveSession {
        final byte[] id;
        final SessionKey requestKey;
        final ReplayWindow window = new ReplayWindow();
        long sendCounter;
        long keyRequestedFor = -1;

        ActiveSession(byte[] id, SessionKey requestKey) {
            this.id = id;
            this.requestKey = requestKey;
        }
    }

    public Minion(Settings settings, ClientTransport transport, Clock clock, JobHandler jobs) {
        this.settings = settings;
        this.transport = transport;
        this.clock = clock;
        this.jobs = jobs;
        this.returns = new ReturnQueue(settings.returnQueueCapacity());
        this.backoff = new Backoff(settings.acceptanceWait(), settings.acceptanceWaitMax(), random::nextDouble);
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "brine-minion-" + settings.id());
            thread.setDaemon(true);
            return thread;
        });
        // On close, pending auth retries and timeouts are dropped, not waited for (they can be 30 s away).
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.loop = executor;
        this.status = new MinionStatus(settings.id(), MinionState.CONNECTING, "starting", clock.instant(), null, null,
                null, null);
    }

    /** Loads or creates the key pair, connects and starts authenticating. */
    public void start() throws IOException, KeyFormatException {
        keys = MinionKeys.loadOrCreate(settings.pkiDir(), settings.keysize());
        pin = new MasterPin(settings.pkiDir(), settings.masterFinger());
        // The first request goes out when the connection is up, or after auth_timeout at the latest (a transport
        // that cannot tell): a request queued for a master that is down would only be answered when stale.
        // Queued before the transport starts, so that its connection event comes after.
        onLoop(() -> {
            setState(MinionState.CONNECTING, "connecting to the master", settings.authTimeout());
            scheduleAuth(settings.authTimeout());
        });
        transport.start(new ClientTransport.Listener() {
            @Override
            public void onReply(byte[] frame) {
                onLoop(() -> onFrame(frame));
            }

            @Override
            public void onPublication(byte[] frame) {
                onLoop(() -> onFrame(frame));
            }

            @Override
            public void onConnected() {
                onLoop(Minion.this::onReconnected);
            }
        });
        loop.scheduleWithFixedDelay(() -> guarded(this::tick), 1, 1, TimeUnit.SECONDS);
    }

    public MinionStatus status() {
        return status;
    }

    public MinionState state() {
        return status.state();
    }

    public String id() {
        return settings.id();
    }

    /** Completes when the minion stops by itself: rejected (without rejected_retry) or a master key mismatch. */
    public CompletableFuture<MinionState> terminated() {
        return terminated;
    }

    /** Queues a job return for the master; resent with back-off until acknowledged. Thread-safe. */
    public void submitReturn(SessionMessage.Return ret) {
        onLoop(() -> {
            SessionMessage.Return evicted = returns.add(ret, clock.millis());
            if (evicted != null) {
                LOG.warn("Minion {}: return queue full; dropped the oldest unacknowledged return, job {}",
                        settings.id(), evicted.jid());
            }
            flushReturns();
        });
    }

    /** Sends fresh grains to the master. Thread-safe. */
    public void reportGrains(Map<String, Object> grains) {
        onLoop(() -> sendSession(new SessionMessage.Grains(grains)));
    }

    private void onLoop(Runnable task) {
        try {
            loop.execute(() -> guarded(task));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.debug("Minion {}: stopped; event dropped", settings.id());
        }
    }

    private void guarded(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            LOG.error("Bug: minion {} event failed", settings.id(), e);
        }
    }

    // ---- auth ----

    private void authenticate() {
        if (state().terminal()) {
            return;
        }
        cancel(retry);
        cancel(authTimeout);
        byte[] nonce = new byte[32];
        random.nextBytes(nonce);
        pendingNonce = nonce;
        AuthRequest request = new AuthRequest(Suite.RSA_OAEP_PSS_AES256GCM, settings.id(),
                keys.getPublic().getEncoded(), nonce, clock.millis(), settings.grains(), settings.grant(),
                settings.token());
        authRequests++;
        if (!transport.send(Codec.encodeSigned(request, keys.getPrivate()))) {
            LOG.debug("Minion {}: auth request not queued (not connected); waiting", settings.id());
        }
        authTimeout = loop.schedule(() -> guarded(this::onAuthTimeout), settings.authTimeout().toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private void onAuthTimeout() {
        if (pendingNonce == null) {
            return;
        }
        pendingNonce = null;
        Duration wait = backoff.next();
        LOG.info("Minion {}: no answer from the master in {} s; asking again in {} s", settings.id(),
                settings.authTimeout().toSeconds(), wait.toSeconds());
        setState(state() == MinionState.ACCEPTED ? MinionState.CONNECTING : state(), "no answer from the master",
                wait);
        scheduleAuth(wait);
    }

    private void scheduleAuth(Duration wait) {
        cancel(retry);
        retry = loop.schedule(() -> guarded(this::authenticate), wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void onAuthReply(Decoded.Ok ok, AuthReply reply) {
        if (pendingNonce == null || !Arrays.equals(pendingNonce, reply.nonce())) {
            LOG.debug("Minion {}: auth reply for another request dropped", settings.id());
            return;
        }
        RSAPublicKey masterKey;
        MasterPin.Check check = pin.check(reply.masterPublicKey());
        if (check instanceof MasterPin.Check.Mismatch mismatch) {
            LOG.error("CRITICAL: Minion {}: refusing the master: {}", settings.id(), mismatch.reason());
            pendingNonce = null;
            cancel(authTimeout);
            terminate(MinionState.MASTER_KEY_MISMATCH, mismatch.reason());
            return;
        }
        MasterPin.Check.Trusted trusted = (MasterPin.Check.Trusted) check;
        if (!ok.verify(trusted.key())) {
            LOG.warn("Minion {}: auth reply with a bad signature dropped", settings.id());
            return;
        }
        masterKey = trusted.key();
        if (!Timestamps.withinSkew(reply.timestampMs(), clock)) {
            // The nonce already makes the reply fresh; this catches a badly set clock (PROTOCOL.md 8.2 step 5).
            pendingNonce = null;
            cancel(authTimeout);
            Duration wait = backoff.next();
            LOG.error("Minion {}: the master's clock says {}, ours {}: more than {} s apart; fix the clocks. "
                    + "Asking again in {} s", settings.id(), Instant.ofEpochMilli(reply.timestampMs()),
                    clock.instant(), Timestamps.MAX_CLOCK_SKEW.toSeconds(), wait.toSeconds());
            setState(state() == MinionState.ACCEPTED ? MinionState.CONNECTING : state(),
                    "clock skew with the master", wait);
            scheduleAuth(wait);
            return;
        }
        masterFingerprint = Fingerprints.of(masterKey);
        // Trust on first use starts with an accepted key: a master that never accepted this minion is not pinned.
        if (trusted.firstUse() && reply.status() == AuthStatus.ACCEPTED) {
            try {
                pin.pin(masterKey);
            } catch (IOException e) {
                LOG.error("Minion {}: cannot save the master key to {}: {}", settings.id(), pin.file(),
                        e.getMessage());
                return;
            }
            LOG.info("Minion {}: trusting master key {} from now on (saved as {})", settings.id(),
                    Fingerprints.of(masterKey), pin.file());
        }
        pendingNonce = null;
        cancel(authTimeout);
        Duration retryAfter = Duration.ofSeconds(reply.retryAfterSeconds());
        switch (reply.status()) {
            case ACCEPTED -> accepted(reply.session());
            case PENDING, FULL, REFUSED -> {
                Duration wait = max(backoff.next(), retryAfter);
                LOG.info("Minion {}: key {} by the master ({}); asking again in {} s", settings.id(),
                        reply.status() == AuthStatus.PENDING ? "pending" : "not accepted", reply.reason(),
                        wait.toSeconds());
                setState(MinionState.PENDING, reply.reason(), wait);
                scheduleAuth(wait);
            }
            case DENIED -> {
                Duration wait = backoff.next();
                LOG.error("Minion {}: the master holds a different key for this id ({}); an admin must delete one "
                        + "of them. Asking again in {} s", settings.id(), reply.reason(), wait.toSeconds());
                setState(MinionState.DENIED, reply.reason(), wait);
                scheduleAuth(wait);
            }
            case REJECTED -> {
                if (settings.rejectedRetry()) {
                    Duration wait = backoff.next();
                    LOG.warn("Minion {}: key rejected by the master ({}); rejected_retry is on, asking again in {} s",
                            settings.id(), reply.reason(), wait.toSeconds());
                    setState(MinionState.REJECTED, reply.reason(), wait);
                    scheduleAuth(wait);
                } else {
                    LOG.error("Minion {}: key rejected by the master ({}); stopping. An admin can delete the key "
                            + "with brine-key -d, or set rejected_retry: true", settings.id(), reply.reason());
                    terminate(MinionState.REJECTED, reply.reason());
                }
            }
        }
    }

    private void accepted(AuthReply.Session granted) {
        SessionKey publishKey;
        SessionKey requestKey;
        try {
            publishKey = SessionKey.of(Rsa.unwrap(keys.getPrivate(), granted.wrappedPublishKey()));
            requestKey = SessionKey.of(Rsa.unwrap(keys.getPrivate(), granted.wrappedRequestKey()));
        } catch (CryptoException e) {
            LOG.warn("Minion {}: cannot unwrap the session keys ({}); asking again", settings.id(), e.getMessage());
            scheduleAuth(backoff.next());
            return;
        }
        backoff.reset();
        session = new ActiveSession(granted.sessionId(), requestKey);
        publishKeys.clear();
        publishKeys.put(granted.generation(), publishKey);
        serialFloor = granted.serialFloor();
        awaitingKey.clear();
        heartbeatDeadlineMs = 0;
        nextHeartbeatMs = clock.millis() + jittered(settings.heartbeatInterval());
        transport.subscribe(settings.id(), granted.publishPort());
        LOG.info("Minion {}: accepted by the master, publish key generation {}", settings.id(),
                granted.generation());
        setState(MinionState.ACCEPTED, "accepted", null);
        sendSession(new SessionMessage.Grains(settings.grains()));
        returns.resendAll(clock.millis());
        flushReturns();
    }

    /** A connection to the master came up: the first one, or one after a loss (a restart, a network cut). */
    private void onReconnected() {
        boolean first = !everConnected;
        everConnected = true;
        if (session != null) {
            // Ask at once: a restarted master answers SessionUnknown, a swapped one nothing we can verify.
            sendHeartbeat();
        } else if (pendingNonce != null) {
            if (!first) {
                // The request may have been lost with the old connection.
                authenticate();
            }
        } else if (state() == MinionState.CONNECTING) {
            // Waiting only because the master could not be reached: ask now; after failed tries, spread over a
            // second so that minions waiting for a master that comes back do not all ask at once.
            scheduleAuth(authRequests == 0 ? Duration.ZERO : Duration.ofMillis(random.nextInt(1000)));
        }
    }

    // ---- frames from the master ----

    private void onFrame(byte[] frame) {
        if (state().terminal()) {
            return;
        }
        Decoded decoded = Codec.decode(frame, FrameLimits.MAX_FRAME);
        if (decoded instanceof Decoded.Malformed malformed) {
            LOG.debug("Minion {}: malformed frame from the master dropped: {}", settings.id(), malformed.reason());
            return;
        }
        Decoded.Ok ok = (Decoded.Ok) decoded;
        switch (ok.message().type()) {
            case AUTH_REPLY -> onAuthReply(ok, (AuthReply) ok.message());
            case PUBLISH -> onPublish(ok, (Publish) ok.message());
            case SESSION -> onSessionFrame((SessionFrame) ok.message());
            case SESSION_UNKNOWN -> onSessionUnknown(ok, (SessionUnknown) ok.message());
            default -> LOG.debug("Minion {}: {} from the master dropped", settings.id(), ok.message().type());
        }
    }

    private void onPublish(Decoded.Ok ok, Publish publish) {
        if (session == null || pin.pinned().isEmpty()) {
            return;
        }
        if (publish.suite() != Suite.RSA_OAEP_PSS_AES256GCM || !ok.verify(pin.pinned().get())) {
            LOG.warn("Minion {}: publication {} not signed by the master dropped", settings.id(), publish.jid());
            return;
        }
        onVerifiedPublish(publish);
    }

    /** A publication whose signature checked out: needs its generation's key, a fresh serial and a new jid. */
    private void onVerifiedPublish(Publish publish) {
        SessionKey key = publishKeys.get(publish.generation());
        if (key == null) {
            if (publish.generation() > currentGeneration()) {
                if (awaitingKey.size() >= MAX_AWAITING_KEY) {
                    awaitingKey.removeFirst();
                }
                awaitingKey.addLast(publish);
                requestKey(publish.generation());
            } else {
                LOG.debug("Minion {}: publication {} of old generation {} dropped", settings.id(), publish.jid(),
                        publish.generation());
            }
            return;
        }
        if (publish.serial() <= serialFloor || seenJids.contains(publish.jid()) || !serials.accept(publish.serial())) {
            LOG.debug("Minion {}: replayed or stale publication {} dropped", settings.id(), publish.jid());
            return;
        }
        PublishLoad load;
        try {
            load = Publications.open(key, publish);
        } catch (CryptoException | MalformedException e) {
            LOG.warn("Minion {}: publication {} cannot be opened: {}", settings.id(), publish.jid(), e.getMessage());
            return;
        }
        rememberJid(publish.jid());
        jobs.onJob(load);
    }

    private void onSessionFrame(SessionFrame sealed) {
        if (session == null || sealed.direction() != SessionFrame.Direction.MASTER_TO_MINION
                || !Arrays.equals(session.id, sealed.sessionId())) {
            return;
        }
        SessionMessage message;
        try {
            message = Sessions.open(session.requestKey, sealed, SessionFrame.Direction.MASTER_TO_MINION);
        } catch (CryptoException | MalformedException e) {
            LOG.debug("Minion {}: session frame dropped: {}", settings.id(), e.getMessage());
            return;
        }
        if (!session.window.accept(sealed.counter())) {
            LOG.debug("Minion {}: replayed session frame dropped", settings.id());
            return;
        }
        heartbeatDeadlineMs = 0;
        switch (message.type()) {
            case KEY_UPDATE -> installKey((SessionMessage.KeyUpdate) message);
            case ACK -> returns.ack(((SessionMessage.Ack) message).jids());
            case HEARTBEAT_REPLY -> {
                long generation = ((SessionMessage.HeartbeatReply) message).generation();
                if (generation > currentGeneration()) {
                    requestKey(generation);
                }
            }
            default -> LOG.debug("Minion {}: unexpected {} dropped", settings.id(), message.type());
        }
    }

    private void installKey(SessionMessage.KeyUpdate update) {
        if (publishKeys.containsKey(update.generation()) || update.generation() < currentGeneration()) {
            return;
        }
        try {
            publishKeys.put(update.generation(), SessionKey.of(update.publishKey()));
        } catch (CryptoException e) {
            LOG.warn("Minion {}: key update with a bad key dropped", settings.id());
            return;
        }
        // Keep the previous generation for publications still in flight; older ones are gone for good.
        while (publishKeys.size() > 2) {
            publishKeys.pollFirstEntry().getValue().wipe();
        }
        LOG.info("Minion {}: publish key generation {} installed", settings.id(), update.generation());
        status = new MinionStatus(status.id(), status.state(), status.reason(), status.since(), status.nextAttempt(),
                status.fingerprint(), status.masterFingerprint(), update.generation());
        writeStatus();
        List<Publish> waiting = List.copyOf(awaitingKey);
        awaitingKey.clear();
        for (Publish publish : waiting) {
            if (publish.generation() == update.generation()) {
                onVerifiedPublish(publish);
            } else if (publish.generation() > update.generation()) {
                awaitingKey.addLast(publish);
            }
        }
    }

    private void onSessionUnknown(Decoded.Ok ok, SessionUnknown unknown) {
        if (session == null || !Arrays.equals(session.id, unknown.sessionId()) || pin.pinned().isEmpty()
                || !ok.verify(pin.pinned().get())) {
            return;
        }
        if (unknown.counter() > session.sendCounter || !Timestamps.withinSkew(unknown.timestampMs(), clock)) {
            LOG.debug("Minion {}: session-unknown answer for a frame we did not send, or stale, dropped",
                    settings.id());
            return;
        }
        LOG.info("Minion {}: the master does not know our session (restarted?); authenticating again",
                settings.id());
        session = null;
        setState(MinionState.CONNECTING, "master lost the session", null);
        // Spread re-auths after a master restart over a couple of seconds.
        scheduleAuth(Duration.ofMillis(random.nextInt(2000)));
    }

    private void requestKey(long generation) {
        if (session != null && session.keyRequestedFor != generation) {
            session.keyRequestedFor = generation;
            sendSession(new SessionMessage.KeyRequest(generation));
        }
    }

    // ---- sending ----

    private void sendSession(SessionMessage message) {
        if (session == null) {
            return;
        }
        SessionFrame sealed = Sessions.seal(session.requestKey, session.id, SessionFrame.Direction.MINION_TO_MASTER,
                ++session.sendCounter, message);
        transport.send(Codec.encode(sealed));
    }

    private void flushReturns() {
        if (session == null) {
            return;
        }
        for (SessionMessage.Return ret : returns.due(clock.millis(), RETURN_RETRY_BASE_MS,
                settings.returnRetryMax().toMillis())) {
            sendSession(ret);
        }
    }

    private void tick() {
        long now = clock.millis();
        if (session != null) {
            flushReturns();
            if (heartbeatDeadlineMs != 0 && now >= heartbeatDeadlineMs) {
                LOG.info("Minion {}: no answer to a heartbeat in {} s; authenticating again", settings.id(),
                        settings.authTimeout().toSeconds());
                session = null;
                heartbeatDeadlineMs = 0;
                setState(MinionState.CONNECTING, "no answer from the master", null);
                scheduleAuth(Duration.ofMillis(random.nextInt(2000)));
            } else if (now >= nextHeartbeatMs) {
                nextHeartbeatMs = now + jittered(settings.heartbeatInterval());
                sendHeartbeat();
            }
        }
    }

    /** Sends a heartbeat; the master must answer (anything sealed in this session) within auth_timeout. */
    private void sendHeartbeat() {
        sendSession(new SessionMessage.Heartbeat(currentGeneration()));
        if (heartbeatDeadlineMs == 0) {
            heartbeatDeadlineMs = clock.millis() + settings.authTimeout().toMillis();
        }
    }

    // ---- state ----

    private long currentGeneration() {
        return publishKeys.isEmpty() ? -1 : publishKeys.lastKey();
    }

    private void rememberJid(String jid) {
        seenJids.add(jid);
        if (seenJids.size() > SEEN_JIDS) {
            var it = seenJids.iterator();
            it.next();
            it.remove();
        }
    }

    private void setState(MinionState state, String reason, Duration nextAttemptIn) {
        Instant now = clock.instant();
        MinionStatus previous = status;
        status = new MinionStatus(settings.id(), state, reason,
                previous.state() == state ? previous.since() : now,
                nextAttemptIn == null ? null : now.plus(nextAttemptIn),
                keys == null ? null : Fingerprints.of(keys.getPublic()),
                pin == null ? null : pin.pinned().map(Fingerprints::of).orElse(masterFingerprint),
                publishKeys.isEmpty() ? null : publishKeys.lastKey());
        writeStatus();
    }

    private void writeStatus() {
        if (settings.statusFile() == null) {
            return;
        }
        MinionStatus s = status;
        ByteArrayOutputStream doc = new ByteArrayOutputStream(512);
        try {
            try (JsonGenerator out = json.createGenerator(doc).useDefaultPrettyPrinter()) {
                out.writeStartObject();
                out.writeStringField("id", s.id());
                out.writeStringField("state", s.state().name().toLowerCase(java.util.Locale.ROOT));
                out.writeStringField("reason", s.reason());
                out.writeStringField("since", s.since().toString());
                out.writeStringField("next_attempt", s.nextAttempt() == null ? null : s.nextAttempt().toString());
                out.writeStringField("fingerprint", s.fingerprint());
                out.writeStringField("master_fingerprint", s.masterFingerprint());
                out.writeFieldName("generation");
                if (s.generation() == null) {
                    out.writeNull();
                } else {
                    out.writeNumber(s.generation());
                }
                out.writeEndObject();
            }
            AtomicFiles.ensureDirectory(settings.statusFile().toAbsolutePath().getParent());
            AtomicFiles.write(settings.statusFile(), doc.toByteArray(), AtomicFiles.PUBLIC_READ);
        } catch (IOException e) {
            LOG.warn("Minion {}: cannot write status file {}: {}", settings.id(), settings.statusFile(),
                    e.getMessage());
        }
    }

    private void terminate(MinionState state, String reason) {
        setState(state, reason, null);
        session = null;
        cancel(retry);
        cancel(authTimeout);
        terminated.complete(state);
    }

    private long jittered(Duration interval) {
        long millis = interval.toMillis();
        return millis + (long) (millis * 0.25 * random.nextDouble());
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private static void cancel(ScheduledFuture<?> future) {
        if (future != null) {
            future.cancel(false);
        }
    }

    @Override
    public void close() {
        onLoop(() -> { // dropped when already closed: close is idempotent
            if (!state().terminal()) {
                setState(MinionState.STOPPED, "stopped", null);
            }
        });
        loop.shutdown();
        try {
            loop.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        loop.shutdownNow();
        transport.close();
        terminated.complete(MinionState.STOPPED);
    }
}

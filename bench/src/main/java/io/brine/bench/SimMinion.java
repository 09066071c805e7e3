package io.brine.bench;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.KeyRotations;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.codec.Publications;
import io.brine.protocol.codec.ReplayWindow;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Message;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.Suite;
import io.brine.transport.ClientTransport;
import java.io.IOException;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One simulated minion: its own RSA key, its own sockets, and the minion's side of the protocol as
 * {@code io.brine.minion.Minion} does it (PROTOCOL.md 8.2-8.6): a signed auth request, the signed reply checked
 * against the pinned master key, both session keys unwrapped with its private key, subscription to its topic,
 * publications verified, checked for freshness and opened, key updates installed, and returns sealed in its
 * session. Asked to rotate its key ({@code brine-key --rotate-keys}), it sends the request {@code brine-minion} sends
 * ({@link KeyRotations#signedRequest}, to its second key, {@link #secondKey}) and switches keys on the master's answer
 * signed by the pinned key ({@link KeyRotations#signedBy}); shown a rotation of the master's key, it walks the chain
 * from its pinned key as {@code MasterPin.follow} does ({@link MasterSuccessions#walk}) and pins the newest (in memory:
 * no {@code minion_master.pub}). Methods are synchronized: the transport's thread and the worker's command thread both
 * call in.
 *
 * <p>Three things differ from a real minion, each to leave the two cores to the master while it is measured, and
 * each named in BENCHMARKS.md: the auth request is signed ahead of the timed window ({@link #prepareAuth}, fresh
 * for the protocol: a new nonce and a timestamp seconds old), the session keys are unwrapped after the auth window
 * closes ({@link #unwrap}), and a publication frame whose exact bytes another minion of the same worker already
 * verified is not verified again ({@link Swarm#verifiedByMaster}). {@code test.ping} returns {@code true}; the
 * function {@code bench.deliver} is only counted, never returned, so the publish scenario measures fan-out alone.
 */
final class SimMinion implements BenchMinion {

    /** The function whose publications are counted and not returned. */
    static final String DELIVER_FUNCTION = "bench.deliver";
    /** As MinionDaemon.HEARTBEAT_INTERVAL. */
    private static final long HEARTBEAT_MS = 30_000;

    private static final SecureRandom RANDOM = new SecureRandom();

    /** What all the minions of one worker share: the pinned master key, the clock, the counters. */
    interface Swarm {
        /** Whether this publication frame is the master's (verifies it, or finds the same bytes verified). */
        boolean verifiedByMaster(Decoded.Ok ok);

        /** Whether this auth reply is signed by the master. */
        boolean verifyReply(Decoded.Ok ok);

        Clock clock();

        void accepted(BenchMinion minion, long nanos);

        void refused(BenchMinion minion, AuthStatus status);

        void keyInstalled(BenchMinion minion, long generation, long nanos);

        void delivered(BenchMinion minion, long nanos);

        void returned(BenchMinion minion);

        void sessionUnknown(BenchMinion minion);

        /** Its resumption was refused: it authenticates in full. */
        void resumptionRefused(BenchMinion minion);

        /**
         * Its session is back after its connection came back ({@link #rejoinOnReconnect}): resumed, or authenticated
         * in full with its session keys unwrapped; it can be reached again.
         */
        default void rejoined(BenchMinion minion, long nanos) {}

        /** Runs a rejoining minion's private-key work (its unwrap) off the transport's threads. */
        default void offload(Runnable work) {
            work.run();
        }

        /** The master asked it to rotate its key, and it sent its request. */
        void rotationAsked(BenchMinion minion, long nanos);

        /** The master's signed answer says its new key is accepted: it uses that key from now on. */
        void keyRotated(BenchMinion minion, long askedNanos, long nanos);

        /** The master's signed answer refused (or left pending) its rotation, for {@code reason}. */
        void rotationRefused(BenchMinion minion, String reason);

        /** It walked the master's new chain from its pinned key and pinned the newest key. */
        void masterKeyPinned(BenchMinion minion, long nanos);

        /** It refused the master's chain (the walk's reason): its pin is unchanged. */
        void masterChainRefused(BenchMinion minion, String reason);
    }

    final int index;
    final String id;
    private KeyPair keys;
    private final Swarm swarm;
    /** The key it rotates to when the master asks ({@link #secondKey}); null when it has none, or has rotated. */
    private KeyPair secondKey;
    /** The session its rotation request was sent in, and when; null when none is outstanding. */
    private byte[] rotationAskedIn;

    private long rotationAskedNanos;
    /** When its outstanding request was sent last: sent again when the master asks past {@link #rotationResendAfter}. */
    private long rotationSentNanos;

    private long rotationResendAfter = KeyRotations.RESEND_AFTER.toNanos();
    /** The master key it trusts: the swarm's until the master shows it a chain of succession records. */
    private RSAPublicKey pinned;

    private ClientTransport transport;

    private byte[] preparedRequest;
    private byte[] nonce;
    private long authSentNanos;
    private AuthReply.Session granted;
    private int publishPort;
    private long acceptedNanos;
    private byte[] sessionId;
    private SessionKey requestKey;
    private ReplayWindow window = new ReplayWindow();
    private long sendCounter;
    private final TreeMap<Long, SessionKey> publishKeys = new TreeMap<>();
    private long serialFloor;
    private final ReplayWindow serials = new ReplayWindow();
    private final RecentJids seenJids = new RecentJids();
    private long keyInstalledNanos;
    private long nextHeartbeatMs;
    /** The resumption ticket and secret of its last session (PROTOCOL.md 8.9), null until the master gave one. */
    private Resumption.Grant grant;

    private byte[] resumeNonce;
    /** Off but in the restart scenario: the re-auth round measures full auths of known keys. */
    private boolean useTickets;
    /**
     * On in the restart scenario ({@link #rejoinOnReconnect}): when its connection comes back with a session open, it
     * resumes (or authenticates in full) by itself, as {@code Minion.onConnected} does; off, it ignores reconnections.
     */
    private boolean rejoinOnReconnect;
    /** It is rejoining: its next acceptance is reported as {@link Swarm#rejoined}, not as an auth round's. */
    private boolean rejoining;

    SimMinion(int index, String id, KeyPair keys, Swarm swarm) {
        this(index, id, keys, swarm, null);
    }

    /** @param pinned the master key the swarm verified its replies with: this minion's pin */
    SimMinion(int index, String id, KeyPair keys, Swarm swarm, RSAPublicKey pinned) {
        this.index = index;
        this.id = id;
        this.keys = keys;
        this.swarm = swarm;
        this.pinned = pinned;
    }

    /** The key pair it rotates to when the master asks it to rotate (the keyrotate scenario). */
    synchronized void secondKey(KeyPair second) {
        secondKey = second;
    }

    /** For tests: how long an unanswered rotation request waits before an ask sends it again. */
    synchronized void rotationResendAfter(Duration after) {
        rotationResendAfter = after.toNanos();
    }

    /** The key it authenticates with: the second one once the master accepted its rotation. */
    synchronized KeyPair keys() {
        return keys;
    }

    /** The master key it trusts now. */
    synchronized RSAPublicKey pinned() {
        return pinned;
    }

    /** Opens its request connection. */
    @Override
    public synchronized void connect(ClientTransport transport) throws IOException {
        this.transport = transport;
        transport.start(BenchMinion.listener(this::onFrame, this::onFrame, this::onConnected));
    }

    /** Signs a fresh auth request now, to be sent by {@link #sendAuth}: a private-key operation. */
    @Override
    public synchronized void prepareAuth() {
        byte[] fresh = new byte[32];
        RANDOM.nextBytes(fresh);
        AuthRequest request = new AuthRequest(
                Suite.RSA_OAEP_PSS_AES256GCM,
                id,
                keys.getPublic().getEncoded(),
                fresh,
                swarm.clock().millis(),
                Map.of("bench", true),
                null,
                null);
        preparedRequest = Codec.encodeSigned(request, keys.getPrivate());
        nonce = fresh;
    }

    /**
     * Sends the prepared request (preparing one first if there is none); a minion holding a ticket, once told to use
     * it ({@link #useTickets}), sends a resumption request instead, as {@code Handshake} does after a reconnection.
     */
    @Override
    public synchronized void sendAuth(long nanos) {
        if (useTickets && grant != null) {
            // A request signed earlier would be older than this resumption, which the master records as taken.
            preparedRequest = null;
            nonce = null;
            authSentNanos = nanos;
            resumeNonce = new byte[32];
            RANDOM.nextBytes(resumeNonce);
            transport.send(Resumptions.encode(
                    Resumptions.request(id, grant, resumeNonce, swarm.clock().millis())));
            return;
        }
        if (preparedRequest == null) {
            prepareAuth();
        }
        authSentNanos = nanos;
        transport.send(preparedRequest);
        preparedRequest = null;
    }

    /** Forgets the session, as a minion does after a master restart, so that {@link #sendAuth} starts anew. */
    @Override
    public synchronized void resetSession() {
        forgetSession();
        nonce = null;
        preparedRequest = null;
    }

    private void forgetSession() {
        granted = null;
        requestKey = null;
        sessionId = null;
        sendCounter = 0;
        window = new ReplayWindow();
        resumeNonce = null;
    }

    @Override
    public synchronized void useTickets(boolean use) {
        useTickets = use;
    }

    @Override
    public synchronized void rejoinOnReconnect(boolean rejoin) {
        rejoinOnReconnect = rejoin;
    }

    /**
     * Its request connection is up: the first time, or again after a loss. With a session open and {@link
     * #rejoinOnReconnect} on, it rejoins at once, as {@code Minion.onConnected} does after a master restart: with its
     * ticket when it holds one and {@link #useTickets} is on, else with a full auth: the request {@link #prepareAuth}
     * signed ahead (the bench's rule for every timed auth: the swarm's RSA off the master's window), or one signed
     * now on the swarm's threads (a second reconnection meanwhile). Frames it queued while the master was down go
     * first; the master spares its answers to those when the request follows within its grace (PROTOCOL.md 8.4).
     */
    private synchronized void onConnected() {
        // Rejoining already: the request may have been lost with the connection, as Handshake.onConnected says.
        if (!rejoinOnReconnect || !(accepted() || rejoining)) {
            return;
        }
        forgetSession();
        rejoining = true;
        if ((useTickets && grant != null) || preparedRequest != null) {
            sendAuth(System.nanoTime());
        } else {
            swarm.offload(this::authenticateToRejoin);
        }
    }

    private synchronized void authenticateToRejoin() {
        if (rejoining && !accepted()) {
            prepareAuth();
            sendAuth(System.nanoTime());
        }
    }

    @Override
    public synchronized boolean holdsTicket() {
        return grant != null;
    }

    @Override
    public synchronized boolean accepted() {
        return granted != null || requestKey != null;
    }

    @Override
    public synchronized long authSentNanos() {
        return authSentNanos;
    }

    @Override
    public synchronized boolean awaitingReply() {
        return (nonce != null || resumeNonce != null) && granted == null && requestKey == null;
    }

    /** Unwraps both session keys with the private key: two private-key operations. False if they do not unwrap. */
    @Override
    public boolean unwrap() {
        AuthReply.Session session;
        KeyPair own;
        synchronized (this) {
            session = granted;
            own = keys;
            if (requestKey != null) {
                return true;
            }
            if (session == null) {
                return session != null;
            }
        }
        SessionKey publishKey;
        SessionKey request;
        try {
            publishKey = SessionKey.of(Rsa.unwrap(own.getPrivate(), session.wrappedPublishKey()));
            request = SessionKey.of(Rsa.unwrap(own.getPrivate(), session.wrappedRequestKey()));
        } catch (CryptoException e) {
            return false;
        }
        synchronized (this) {
            requestKey = request;
            sessionId = session.sessionId();
            publishKeys.putIfAbsent(session.generation(), publishKey);
            serialFloor = Math.max(serialFloor, session.serialFloor());
            // What a real minion sends right after it is accepted; the master keeps it for targeting.
            send(new SessionMessage.Grains(grains()));
            nextHeartbeatMs = swarm.clock().millis() + RANDOM.nextInt((int) HEARTBEAT_MS);
            // And, after a full auth, its request for a resumption ticket.
            transport.send(Resumptions.encode(Resumptions.ticketRequest(
                    requestKey, sessionId, swarm.clock().millis())));
        }
        return true;
    }

    private Map<String, Object> grains() {
        return grains(id, index);
    }

    /** Grains shaped like a real minion's (the keys and sizes brine-minion reports on Debian). */
    static Map<String, Object> grains(String id, int index) {
        Map<String, Object> grains = new LinkedHashMap<>();
        grains.put("cpuarch", "x86_64");
        grains.put("domain", "bench.example");
        grains.put("fqdn", id + ".bench.example");
        grains.put("host", id);
        grains.put("id", id);
        grains.put(
                "ipv4",
                List.of("127.0.0.1", "10." + (index >> 16 & 255) + "." + (index >> 8 & 255) + "." + (index & 255)));
        grains.put("ipv6", List.of("::1"));
        grains.put("kernel", "Linux");
        grains.put("kernelrelease", "6.1.0-bench");
        grains.put("mem_total", 4096L);
        grains.put("num_cpus", 2L);
        grains.put("os", "Debian");
        grains.put("os_family", "Debian");
        grains.put("oscodename", "bookworm");
        grains.put("osfinger", "Debian-12");
        grains.put("osfullname", "Debian GNU/Linux");
        grains.put("osmajorrelease", 12L);
        grains.put("osrelease", "12");
        grains.put("role", "bench");
        return grains;
    }

    /**
     * Sends the session heartbeat when it is due, every 30 s plus up to a quarter at random, as {@code Minion}
     * does: the master answers each, and the TCP transport closes connections that stay silent.
     */
    @Override
    public synchronized void heartbeatIfDue(long nowMs) {
        if (requestKey != null && nowMs >= nextHeartbeatMs) {
            nextHeartbeatMs = nowMs + HEARTBEAT_MS + RANDOM.nextInt((int) HEARTBEAT_MS / 4);
            send(new SessionMessage.Heartbeat(generation()));
        }
    }

    @Override
    public synchronized long generation() {
        return publishKeys.isEmpty() ? -1 : publishKeys.lastKey();
    }

    @Override
    public synchronized long keyInstalledNanos() {
        return keyInstalledNanos;
    }

    @Override
    public synchronized void close() {
        if (transport != null) {
            transport.close();
        }
    }

    // ---- frames from the master, on the transport's thread ----

    private synchronized void onFrame(byte[] frame) {
        long now = System.nanoTime();
        if (Resumptions.isResumption(frame)) {
            onResumption(frame, now);
            return;
        }
        Decoded decoded = Codec.decode(frame, FrameLimits.MAX_FRAME, SessionFrame.Direction.MASTER_TO_MINION);
        if (!(decoded instanceof Decoded.Ok ok)) {
            return;
        }
        switch (((Message.ToPeer) ok.message()).toPeer()) {
            case AUTH_REPLY -> onAuthReply(ok, (AuthReply) ok.message(), now);
            case PUBLISH -> onPublish(ok, (Publish) ok.message(), now);
            case SESSION -> onSession((SessionFrame) ok.message(), now);
            case SESSION_UNKNOWN -> swarm.sessionUnknown(this);
        }
    }

    private void onAuthReply(Decoded.Ok ok, AuthReply reply, long now) {
        if (nonce == null
                || !Arrays.equals(nonce, reply.nonce())
                || !swarm.verifyReply(ok)
                || !Timestamps.withinSkew(reply.timestampMs(), swarm.clock())) {
            return;
        }
        nonce = null;
        if (reply.status() == AuthStatus.ACCEPTED) {
            granted = reply.session();
            acceptedNanos = now;
            publishPort = granted.publishPort();
            transport.subscribe(id, publishPort);
            if (rejoining) {
                // A real minion unwraps as soon as it is accepted; here on the worker's threads, not the transport's.
                swarm.offload(() -> {
                    if (unwrap()) {
                        rejoined(System.nanoTime());
                    }
                });
            } else {
                swarm.accepted(this, now);
            }
        } else {
            swarm.refused(this, reply.status());
        }
    }

    /** A ticket in its session, or the answer to its resumption request (a refusal: a full auth at once). */
    private void onResumption(byte[] frame, long now) {
        Resumption.ToMinion message;
        try {
            message = Resumptions.decodeToMinion(frame);
        } catch (MalformedException e) {
            return;
        }
        if (message instanceof Resumption.Ticket ticket) {
            if (requestKey != null && Arrays.equals(sessionId, ticket.sessionId())) {
                try {
                    grant = Resumptions.openTicket(requestKey, ticket);
                } catch (CryptoException | MalformedException e) {
                    // no ticket: the next restart costs a full auth
                }
            }
            return;
        }
        Resumption.Reply reply = (Resumption.Reply) message;
        if (resumeNonce == null || !Arrays.equals(resumeNonce, reply.nonce())) {
            return;
        }
        byte[] secret = grant.secret();
        resumeNonce = null;
        Resumption.Resumed resumed;
        try {
            resumed = Resumptions.openReply(secret, reply.nonce(), reply);
            requestKey = SessionKey.of(resumed.requestKey());
            publishKeys.putIfAbsent(resumed.generation(), SessionKey.of(resumed.publishKey()));
        } catch (CryptoException | MalformedException e) {
            grant = null;
            swarm.resumptionRefused(this);
            prepareAuth();
            sendAuth(now);
            return;
        }
        sessionId = resumed.sessionId();
        serialFloor = Math.max(serialFloor, resumed.serialFloor());
        grant = resumed.next();
        publishPort = resumed.publishPort();
        acceptedNanos = now;
        send(new SessionMessage.Grains(grains()));
        nextHeartbeatMs = swarm.clock().millis() + RANDOM.nextInt((int) HEARTBEAT_MS);
        transport.subscribe(id, publishPort);
        if (rejoining) {
            rejoined(now);
        } else {
            swarm.accepted(this, now);
        }
    }

    private synchronized void rejoined(long nanos) {
        if (rejoining) {
            rejoining = false;
            swarm.rejoined(this, nanos);
        }
    }

    private void onPublish(Decoded.Ok ok, Publish publish, long now) {
        if (requestKey == null || publish.suite() != Suite.RSA_OAEP_PSS_AES256GCM || !swarm.verifiedByMaster(ok)) {
            return;
        }
        SessionKey key = publishKeys.get(publish.generation());
        if (key == null) {
            if (publish.generation() > generation()) {
                send(new SessionMessage.KeyRequest(publish.generation()));
            }
            return;
        }
        if (publish.serial() <= serialFloor || seenJids.contains(publish.jid()) || !serials.accept(publish.serial())) {
            return;
        }
        PublishLoad load;
        try {
            load = Publications.open(key, publish);
        } catch (CryptoException | MalformedException e) {
            return;
        }
        seenJids.add(publish.jid());
        swarm.delivered(this, now);
        if (!load.fun().equals(DELIVER_FUNCTION)) {
            boolean ping = load.fun().equals("test.ping");
            send(new SessionMessage.Return(
                    load.jid(),
                    load.fun(),
                    ping ? Boolean.TRUE : "bench: " + load.fun() + " is not simulated",
                    ping ? 0 : 1,
                    ping,
                    0));
            swarm.returned(this);
        }
    }

    private void onSession(SessionFrame sealed, long now) {
        if (requestKey == null
                || sealed.direction() != SessionFrame.Direction.MASTER_TO_MINION
                || !Arrays.equals(sessionId, sealed.sessionId())) {
            return;
        }
        SessionMessage message;
        try {
            message = Sessions.open(requestKey, sealed, SessionMessage.ToMinion.class);
        } catch (CryptoException | MalformedException e) {
            return;
        }
        if (!window.accept(sealed.counter())) {
            return;
        }
        if (message instanceof SessionMessage.KeyUpdate update) {
            if (publishKeys.containsKey(update.generation()) || update.generation() < generation()) {
                return;
            }
            try {
                publishKeys.put(update.generation(), SessionKey.of(update.publishKey()));
            } catch (CryptoException e) {
                return;
            }
            while (publishKeys.size() > 2) {
                publishKeys.pollFirstEntry().getValue().wipe();
            }
            serialFloor = Math.max(serialFloor, update.serialFloor());
            keyInstalledNanos = now;
            swarm.keyInstalled(this, update.generation(), now);
        } else if (message instanceof SessionMessage.HeartbeatReply beat && beat.generation() > generation()) {
            send(new SessionMessage.KeyRequest(beat.generation()));
        } else if (message instanceof SessionMessage.KeyRotateAsk ask) {
            onRotationAsked(ask, now);
        } else if (message instanceof SessionMessage.KeyRotateReply reply) {
            onRotationReply(reply, now);
        } else if (message instanceof SessionMessage.MasterKeySuccession succession) {
            onMasterKeySuccession(succession, now);
        }
        // Ack: nothing is kept for resending here.
    }

    /**
     * As {@code brine-minion} ({@code KeyRotation.dueByAsk}): only for its current key, with no request outstanding
     * or one sent {@link KeyRotations#RESEND_AFTER} ago and unanswered (sent again, for the same key; the time to
     * rotate still counts from the first); a minion without a second key ignores the ask, as one that cannot make a
     * key would.
     */
    private void onRotationAsked(SessionMessage.KeyRotateAsk ask, long now) {
        if (secondKey == null || !ask.fingerprint().equals(Fingerprints.of(keys.getPublic()))) {
            return;
        }
        boolean again = rotationAskedIn != null;
        if (again && now - rotationSentNanos < rotationResendAfter) {
            return;
        }
        rotationAskedIn = sessionId.clone();
        rotationSentNanos = now;
        send(KeyRotations.signedRequest(sessionId, id, keys, secondKey));
        if (!again) {
            rotationAskedNanos = now;
            swarm.rotationAsked(this, now);
        }
    }

    /** Believed only when the pinned master key signed it for this session, as {@code KeyRotation.onReply}. */
    private void onRotationReply(SessionMessage.KeyRotateReply reply, long now) {
        // The second answer to a request sent again finds none outstanding: dropped, as brine-minion drops it.
        if (rotationAskedIn == null
                || pinned == null
                || !Arrays.equals(rotationAskedIn, sessionId)
                || !KeyRotations.signedBy(pinned, sessionId, reply)) {
            return;
        }
        rotationAskedIn = null;
        if (reply.rotated() && reply.newFingerprint().equals(Fingerprints.of(secondKey.getPublic()))) {
            keys = secondKey;
            secondKey = null;
            swarm.keyRotated(this, rotationAskedNanos, now);
            // As brine-minion: the ticket names the replaced key; one for the new key, asked for in the session.
            grant = null;
            transport.send(Resumptions.encode(Resumptions.ticketRequest(
                    requestKey, sessionId, swarm.clock().millis())));
        } else {
            swarm.rotationRefused(this, (reply.pending() ? "pending: " : "") + reply.reason());
        }
    }

    /** Walks the chain from the pinned key; every step verified, it pins the newest (PROTOCOL.md 6.4). */
    private void onMasterKeySuccession(SessionMessage.MasterKeySuccession succession, long now) {
        if (pinned == null || succession.chain().isEmpty()) {
            return;
        }
        byte[] newest = succession.chain().get(succession.chain().size() - 1).nextKey();
        if (Arrays.equals(newest, pinned.getEncoded())) {
            return; // pinned already: a second copy
        }
        MasterSuccessions.Walk walk = MasterSuccessions.walk(pinned, succession.chain(), Optional.empty());
        if (walk instanceof MasterSuccessions.Walk.Verified verified) {
            pinned = verified.newest();
            swarm.masterKeyPinned(this, now);
        } else {
            swarm.masterChainRefused(this, ((MasterSuccessions.Walk.Refused) walk).reason());
        }
    }

    private void send(SessionMessage message) {
        SessionFrame sealed =
                Sessions.seal(requestKey, sessionId, SessionFrame.Direction.MINION_TO_MASTER, ++sendCounter, message);
        transport.send(Codec.encode(sealed));
    }
}

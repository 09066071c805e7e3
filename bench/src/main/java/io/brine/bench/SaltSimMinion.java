package io.brine.bench;

import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.salt.Crypticle;
import io.brine.protocol.salt.SaltAuthRequest;
import io.brine.protocol.salt.SaltDialect;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltMsgpack;
import io.brine.protocol.salt.SaltPublication;
import io.brine.protocol.salt.SaltReplies;
import io.brine.protocol.salt.SaltRequest;
import io.brine.protocol.salt.SaltRsa;
import io.brine.protocol.salt.SaltSessionRequest;
import io.brine.protocol.salt.SaltSignIn;
import io.brine.protocol.salt.SaltValue;
import io.brine.protocol.salt.SaltValues;
import io.brine.protocol.targeting.Glob;
import io.brine.protocol.targeting.TargetException;
import io.brine.transport.ClientTransport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.function.Predicate;

/**
 * One simulated stock Salt minion ({@code brine-bench --protocol salt}; SALT.md): its own RSA key, a DEALER for
 * Salt's request channel that greets as a REQ and sends an empty delimiter before each payload, as a stock minion's REQ does, and a SUB subscribed to everything (Salt's
 * default, no {@code zmq_filtering}). It signs in with Salt's {@code _auth} v3 (OAEP-SHA1, PKCS1v15-SHA1, the token
 * once it has cached the master key), checks the reply as a stock minion does ({@link SaltSignIn}), sends
 * {@code _pillar} with its grains and the {@code minion_start} event as a minion does at start, verifies and opens
 * each publication envelope (signature over the encrypted load, Crypticle with {@code aes}, serial), matches the
 * target itself, and answers through {@code _return} sealed with its session key and {@code tok}. A publication it
 * cannot open (a restarted salt-master has a new {@code aes}) makes it sign in again, as a stock minion's
 * {@code AsyncPubChannel._decode_payload} does, with a stock minion's timers ({@link #resendDelayMs}), and then
 * handle that publication with the new key.
 *
 * <p>As with {@link SimMinion}, and named in BENCHMARKS.md: the reply's private-key work (OAEP of {@code aes},
 * {@code session} and the token) is done after the auth window closes ({@link #unwrap}), the request's {@code tok}
 * (an X9.31 private operation, the same for every request of a key) is made once per key, and an envelope whose
 * exact bytes another minion of the worker already verified and opened with the same key is not opened again
 * ({@link Swarm#open}).
 */
final class SaltSimMinion implements BenchMinion {

    static final SaltRsa.Encryption ENC = SaltRsa.Encryption.OAEP_SHA1;
    static final SaltRsa.Signing SIG = SaltRsa.Signing.PKCS1V15_SHA1;

    /**
     * A stock minion's sign-in timers (salt/crypt.py, 3008.2 defaults): each sign-in request is sent up to
     * {@code auth_tries} (7) times, waiting {@code auth_timeout} (5 s) for an answer each time, the same payload; then
     * {@code acceptance_wait_time} (10 s, {@code acceptance_wait_time_max} 0: not growing) before a new sign-in.
     */
    static final long AUTH_TIMEOUT_MS = 5_000;

    static final int AUTH_TRIES = 7;
    static final long ACCEPTANCE_WAIT_MS = 10_000;
    /** Publications held while signing in again (a stock minion's pending coroutines), the oldest dropped beyond. */
    static final int PENDING_MAX = 16;

    /** Milliseconds from the {@code sent}-th send of a sign-in (from 1) without an answer to the next send. */
    static long resendDelayMs(int sent) {
        return sent % AUTH_TRIES == 0 ? AUTH_TIMEOUT_MS + ACCEPTANCE_WAIT_MS : AUTH_TIMEOUT_MS;
    }

    /** Whether the send after the {@code sent}-th is a new sign-in (a new nonce and token), not the same payload. */
    static boolean newSignIn(int sent) {
        return sent % AUTH_TRIES == 0;
    }

    /**
     * An opened publication, and which ids its target names: brine's master sends Salt minions list targets, a
     * salt-master sends the admin's expression (a glob) to every subscriber.
     */
    record Opened(SaltPublication publication, Predicate<String> targets) {}

    /**
     * Which ids a publication's target names, as a stock minion matches it on its own id: a list (an array, or a
     * comma-separated text) by membership, a glob by {@link Glob}; any other target type names no simulated minion.
     */
    static Predicate<String> targets(SaltPublication publication) {
        SaltValue tgt = publication.tgt();
        if (tgt instanceof SaltValue.Array list) {
            Set<String> ids = new HashSet<>();
            list.items().forEach(item -> item.text().ifPresent(ids::add));
            return ids::contains;
        }
        Optional<String> text = tgt.text();
        if (text.isEmpty()) {
            return id -> false;
        }
        switch (publication.tgtType()) {
            case "list" -> {
                Set<String> ids = Set.of(text.get().split(","));
                return ids::contains;
            }
            case "glob" -> {
                try {
                    return Glob.compile(text.get())::matches;
                } catch (TargetException e) {
                    return id -> false;
                }
            }
            default -> {
                return id -> false;
            }
        }
    }

    /** What the Salt minions of one worker share besides {@link SimMinion.Swarm}. */
    interface Swarm extends SimMinion.Swarm {
        RSAPublicKey masterKey();

        /** The publication of {@code envelope}, verified and opened with {@code aes}; null if it does not. */
        Opened open(byte[] envelope, Crypticle aes);

        /** A {@code state.apply} run ended: its file server requests, the file bytes served, and why it failed. */
        void stateRun(BenchMinion minion, int requests, long bytes, Optional<String> failure);

        /** {@code task} on the worker's timer after {@code delayMillis}. */
        Future<?> schedule(Runnable task, long delayMillis);

        /** A sign-in request sent again after a publication it could not open (a resend of the same one too). */
        void signInAgainSent(BenchMinion minion);

        /** Signed in again after a publication it could not open. */
        void signedInAgain(BenchMinion minion);
    }

    final int index;
    final String id;
    private final KeyPair keys;
    private final Swarm swarm;
    private ClientTransport transport;

    private byte[] tok;
    private byte[] preparedRequest;
    private String preparedNonce;
    private Optional<byte[]> preparedToken = Optional.empty();
    private String nonce;
    private Optional<byte[]> tokenSent = Optional.empty();
    private long authSentNanos;
    private SaltValue acceptedReply;
    private String acceptedNonce;
    private Optional<byte[]> acceptedToken = Optional.empty();
    private boolean masterCached;
    private Crypticle aes;
    private Crypticle session;
    private long lastSerial;
    private final RecentJids seenJids = new RecentJids();
    /** The {@code state.apply} being run, its publication, and the nonce of its request awaiting a reply. */
    private StateRun stateRun;

    private SaltPublication statePublication;
    private String stateNonce;
    /** Signing in again after a publication it could not open: the publications held, the request and its sends. */
    private final ArrayDeque<byte[]> pending = new ArrayDeque<>();

    private boolean signingInAgain;
    private byte[] signInRequest;
    private int signInSends;
    private Future<?> signInTimer;
    private boolean openingHeld;

    SaltSimMinion(int index, String id, KeyPair keys, Swarm swarm) {
        this.index = index;
        this.id = id;
        this.keys = keys;
        this.swarm = swarm;
    }

    @Override
    public synchronized void connect(ClientTransport transport) throws IOException {
        this.transport = transport;
        transport.start(BenchMinion.listener(this::reply, this::publication));
    }

    /** Builds a fresh {@code _auth} payload: the first time also the key's {@code tok} (a private operation). */
    @Override
    public synchronized void prepareAuth() {
        if (tok == null) {
            tok = SaltRsa.x931Sign(keys.getPrivate(), "salt".getBytes(StandardCharsets.US_ASCII));
        }
        preparedNonce = UUID.randomUUID().toString().replace("-", "");
        // A minion that has cached the master key sends a random token encrypted for it (a public-key operation).
        preparedToken = masterCached
                ? Optional.of(Crypticle.generate().keyString().getBytes(StandardCharsets.US_ASCII))
                : Optional.empty();
        SaltAuthRequest request = SaltAuthRequest.of(
                id,
                keys.getPublic(),
                preparedNonce,
                ENC,
                SIG,
                masterCached ? Optional.of(swarm.masterKey()) : Optional.empty(),
                preparedToken);
        preparedRequest = SaltMsgpack.write(request.envelope(), SaltDialect.PAYLOAD);
    }

    @Override
    public synchronized void sendAuth(long nanos) {
        if (preparedRequest == null) {
            prepareAuth();
        }
        authSentNanos = nanos;
        nonce = preparedNonce;
        tokenSent = preparedToken;
        transport.send(preparedRequest);
        preparedRequest = null;
    }

    @Override
    public synchronized void resetSession() {
        acceptedReply = null;
        aes = null;
        session = null;
        nonce = null;
        stateRun = null;
        stateNonce = null;
        stopSigningInAgain();
    }

    @Override
    public synchronized boolean accepted() {
        return acceptedReply != null;
    }

    @Override
    public synchronized long authSentNanos() {
        return authSentNanos;
    }

    @Override
    public synchronized boolean awaitingReply() {
        return nonce != null && acceptedReply == null;
    }

    /**
     * Checks the accepted reply as a stock minion does (OAEP of aes, session and the token: private operations;
     * X9.31 of the aes hash and the outer signature once the master key is cached), then sends what a minion sends
     * at start: {@code _pillar} with its grains and the {@code minion_start} event.
     */
    @Override
    public boolean unwrap() {
        synchronized (this) {
            if (acceptedReply == null || session != null) {
                return acceptedReply != null;
            }
        }
        if (!checkSignIn()) {
            return false;
        }
        synchronized (this) {
            send(SaltValue.Map.builder()
                    .put("cmd", "_pillar")
                    .put("grains", SaltValues.fromPlain(SimMinion.grains(id, index)))
                    .put("saltenv", "base")
                    .put("pillarenv", SaltValue.nil())
                    .put("ver", "2")
                    .build());
            send(SaltValue.Map.builder()
                    .put("cmd", "_minion_event")
                    .put("tag", "minion_start")
                    .put("data", "Minion " + id + " started")
                    .put("pretag", SaltValue.nil())
                    .build());
        }
        return true;
    }

    /** The accepted reply checked and its keys taken (aes, session), as {@link #unwrap} and a second sign-in do. */
    private boolean checkSignIn() {
        SaltValue reply;
        String replyNonce;
        Optional<byte[]> token;
        boolean cached;
        synchronized (this) {
            if (acceptedReply == null || session != null) {
                return acceptedReply != null;
            }
            reply = acceptedReply;
            replyNonce = acceptedNonce;
            token = acceptedToken;
            cached = masterCached;
        }
        SaltSignIn.Outcome outcome;
        try {
            outcome = SaltSignIn.check(
                    reply,
                    replyNonce,
                    token,
                    keys.getPrivate(),
                    ENC,
                    SIG,
                    cached ? Optional.of(swarm.masterKey()) : Optional.empty(),
                    SaltLimits.UNAUTHENTICATED);
        } catch (Exception e) {
            return false;
        }
        if (!(outcome instanceof SaltSignIn.Accepted accepted)
                || !accepted.master().equals(swarm.masterKey())) {
            return false;
        }
        synchronized (this) {
            aes = accepted.aes();
            session = accepted.session();
            masterCached = true;
            lastSerial = 0; // a new Crypticle per sign-in counts serials from 0 (SALT.md 6)
        }
        return true;
    }

    /** Salt's ZeroMQ minion sends nothing periodically (ZMTP keeps its connections alive). */
    @Override
    public void heartbeatIfDue(long nowMs) {}

    @Override
    public long generation() {
        return -1;
    }

    @Override
    public long keyInstalledNanos() {
        return 0;
    }

    @Override
    public synchronized void close() {
        if (transport != null) {
            transport.close();
        }
    }

    // ---- from the master, on the transport's thread ----

    private synchronized void reply(byte[] frame) {
        long now = System.nanoTime();
        if (stateNonce != null && session != null) {
            stateReply(frame);
            return;
        }
        if (nonce == null || acceptedReply != null) {
            return; // a session reply (_pillar, _return, ...): a stock minion reads it; nothing to count here
        }
        SaltValue value;
        try {
            value = SaltMsgpack.read(frame, SaltLimits.UNAUTHENTICATED);
        } catch (Exception e) {
            return;
        }
        if (value.text().filter("bad load"::equals).isPresent()) {
            nonce = null;
            if (signingInAgain) {
                notAcceptedAgain();
            } else {
                swarm.refused(this, AuthStatus.REFUSED);
            }
            return;
        }
        // What the reply says, read without its private-key work (done in unwrap, after the auth window).
        byte[] loadBytes = value instanceof SaltValue.Map envelope
                ? envelope.get("load").flatMap(SaltValue::bytes).orElse(null)
                : null;
        if (loadBytes == null) {
            return;
        }
        SaltValue.Map load;
        try {
            load = (SaltValue.Map) SaltMsgpack.read(loadBytes, SaltLimits.UNAUTHENTICATED);
        } catch (Exception e) {
            return;
        }
        if (!load.get("nonce").flatMap(SaltValue::text).filter(nonce::equals).isPresent()) {
            return;
        }
        if (load.has("pub_key")) {
            acceptedReply = value;
            acceptedNonce = nonce;
            acceptedToken = tokenSent;
            nonce = null;
            if (signingInAgain) {
                signedInAgain();
                return;
            }
            int port = load.get("publish_port")
                    .filter(v -> v instanceof SaltValue.Int)
                    .map(v -> (int) ((SaltValue.Int) v).value())
                    .orElse(0);
            swarm.accepted(this, now);
            transport.subscribe(id, port);
            return;
        }
        nonce = null;
        if (signingInAgain) {
            notAcceptedAgain();
            return;
        }
        SaltValue ret = load.get("ret").orElse(SaltValue.nil());
        AuthStatus status = ret instanceof SaltValue.Bool b
                ? (b.value() ? AuthStatus.PENDING : AuthStatus.REJECTED)
                : ret.text().filter("full"::equals).isPresent() ? AuthStatus.FULL : AuthStatus.REFUSED;
        swarm.refused(this, status);
    }

    private synchronized void publication(byte[] envelope) {
        long now = System.nanoTime();
        if (signingInAgain) {
            hold(envelope);
            return;
        }
        if (aes == null) {
            return;
        }
        Opened opened = swarm.open(envelope, aes);
        if (opened == null && openingHeld) {
            return;
        }
        if (opened == null) {
            // AsyncPubChannel._decode_payload: a load the minion's aes does not open (a restarted master has a new
            // one) makes it authenticate again, then open the load with the new key.
            signingInAgain = true;
            acceptedReply = null;
            aes = null;
            session = null;
            stateRun = null;
            stateNonce = null;
            signInSends = 0;
            hold(envelope);
            sendSignInAgain();
            return;
        }
        if (opened.publication().serial() <= lastSerial) {
            return;
        }
        SaltPublication publication = opened.publication();
        lastSerial = publication.serial();
        if (!opened.targets().test(id) || seenJids.contains(publication.jid())) {
            return; // every SUB without zmq_filtering takes every envelope; the minion matches the target itself
        }
        seenJids.add(publication.jid());
        swarm.delivered(this, now);
        if (publication.fun().equals(SimMinion.DELIVER_FUNCTION)) {
            return;
        }
        if (publication.fun().equals(StateRun.FUNCTION)) {
            if (stateRun == null) { // a stock minion refuses a second state run while one runs; not simulated
                stateRun = new StateRun();
                statePublication = publication;
                sendStateRequest();
            }
            return;
        }
        boolean ping = publication.fun().equals("test.ping");
        send(SaltValue.Map.builder()
                .put("cmd", "_return")
                .put("success", ping)
                .put(
                        "return",
                        ping
                                ? SaltValue.bool(true)
                                : SaltValue.str("bench: " + publication.fun() + " is not simulated"))
                .put("retcode", ping ? 0 : 1)
                .put("jid", publication.jid())
                .put("fun", publication.fun())
                .put("fun_args", publication.arg())
                .build());
        swarm.returned(this);
    }

    private void hold(byte[] envelope) {
        if (pending.size() == PENDING_MAX) {
            pending.removeFirst();
        }
        pending.addLast(envelope);
    }

    /** The sign-in request again: the same payload up to {@link #AUTH_TRIES} sends, then a new one. */
    private void sendSignInAgain() {
        if (newSignIn(signInSends)) {
            prepareAuth();
            signInRequest = preparedRequest;
            sendAuth(System.nanoTime());
        } else {
            transport.send(signInRequest);
        }
        signInSends++;
        swarm.signInAgainSent(this);
        signInTimer = swarm.schedule(this::signInTimedOut, resendDelayMs(signInSends));
    }

    /** Not accepted ("retry" to a stock minion): a new sign-in after acceptance_wait_time. */
    private void notAcceptedAgain() {
        signInSends = (signInSends / AUTH_TRIES + 1) * AUTH_TRIES;
        cancelSignInTimer();
        signInTimer = swarm.schedule(this::signInTimedOut, ACCEPTANCE_WAIT_MS);
    }

    private synchronized void signInTimedOut() {
        if (signingInAgain && acceptedReply == null) {
            sendSignInAgain();
        }
    }

    /** Accepted again: the reply checked, then the publications held, opened with the new key. */
    private void signedInAgain() {
        List<byte[]> held = new ArrayList<>(pending);
        stopSigningInAgain();
        if (!checkSignIn()) {
            return; // a stock minion logs it and drops the loads; the next publication tries again
        }
        swarm.signedInAgain(this);
        // "Payload decryption failed even after re-authenticating": a held load the new key does not open is dropped.
        openingHeld = true;
        try {
            held.forEach(this::publication);
        } finally {
            openingHeld = false;
        }
    }

    private void stopSigningInAgain() {
        signingInAgain = false;
        pending.clear();
        signInRequest = null;
        cancelSignInTimer();
    }

    private void cancelSignInTimer() {
        if (signInTimer != null) {
            signInTimer.cancel(false);
            signInTimer = null;
        }
    }

    /**
     * A reply while a state run waits: the answer to its request if it opens with the session key behind that
     * request's nonce (a late reply to anything else does not, and is left), then the run's next request or its
     * {@code _return}.
     */
    private void stateReply(byte[] frame) {
        SaltValue answer;
        try {
            answer = SaltReplies.openSealed(
                    SaltMsgpack.read(frame, SaltLimits.SESSION), session, stateNonce, SaltLimits.SESSION_LOAD);
        } catch (Exception e) {
            return;
        }
        stateNonce = null;
        stateRun.answered(answer);
        sendStateRequest();
    }

    private void sendStateRequest() {
        Optional<SaltValue.Map> request = stateRun.request();
        if (request.isPresent()) {
            stateNonce = send(request.get());
            return;
        }
        boolean ok = stateRun.failure().isEmpty();
        send(SaltValue.Map.builder()
                .put("cmd", "_return")
                .put("success", ok)
                .put("return", stateRun.stateReturn())
                .put("retcode", ok ? 0 : 1)
                .put("jid", statePublication.jid())
                .put("fun", statePublication.fun())
                .put("fun_args", statePublication.arg())
                .build());
        swarm.stateRun(this, stateRun.requests(), stateRun.bytes(), stateRun.failure());
        swarm.returned(this);
        stateRun = null;
        statePublication = null;
    }

    /**
     * A session request as a stock minion seals it (nonce, ts, tok, id; Crypticle with its session key); its
     * nonce.
     */
    private String send(SaltValue.Map fields) {
        String requestNonce = UUID.randomUUID().toString().replace("-", "");
        byte[] load = SaltSessionRequest.seal(
                session, fields, id, requestNonce, swarm.clock().millis() / 1000, tok);
        SaltRequest.Encrypted request = new SaltRequest.Encrypted(id, load, 3, ENC.wireName(), SIG.wireName());
        transport.send(SaltMsgpack.write(request.encode(), SaltDialect.PAYLOAD));
        return requestNonce;
    }
}

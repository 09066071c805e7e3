package io.brine.minion;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.KeyRotations;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.Publications;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionUnknown;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.TestKeys;
import io.brine.transport.ClientTransport;
import java.io.IOException;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * A master in memory, as the minion's {@link ClientTransport}. It records what the minion sends (auth requests
 * verified with the key they offer, session frames opened with the request key of the session they name).
 *
 * <p>Made with {@link #FakeMaster(KeyPair, Clock)} it answers nothing by itself: the test hands the minion frames
 * built right or wrong, as replies or publications. Made with {@link #failingAt} it plays a whole master (accepts,
 * answers heartbeats, key requests and returns, publishes with {@link #publishJob}) that breaks the protocol once,
 * at the chosen step, and behaves from then on (nats.java's {@code NatsServerProtocolMock} with {@code ExitAt}).
 */
final class FakeMaster implements ClientTransport {

    static final int PUBLISH_PORT = 4505;
    /** What a full master asks the minion to wait, in {@link FailAt#AUTH_FULL}. */
    static final int FULL_RETRY_AFTER_SECONDS = 60;
    /** The key of another master, for {@link FailAt#AUTH_OTHER_MASTER_KEY}. */
    static final KeyPair OTHER_MASTER = TestKeys.pair(103);

    private static final KeyPair STRANGER = TestKeys.pair(102);

    /** Where a scripted master breaks the protocol, once. */
    enum FailAt {
        /** A master that never fails. */
        NEVER,
        /** The first auth request gets no answer. */
        AUTH_NO_ANSWER,
        /** The first answer carries another nonce than the request's. */
        AUTH_WRONG_NONCE,
        /** The first answer has no signature. */
        AUTH_UNSIGNED,
        /** The first answer carries this master's key but is signed by another. */
        AUTH_BAD_SIGNATURE,
        /** The first answer comes, well signed, from another master key. */
        AUTH_OTHER_MASTER_KEY,
        AUTH_PENDING,
        /** FULL, asking the minion to wait {@link #FULL_RETRY_AFTER_SECONDS}. */
        AUTH_FULL,
        AUTH_REFUSED,
        AUTH_DENIED,
        AUTH_REJECTED,
        /**
         * Accepts, then the connection drops with the minion's first session frame and comes back to a master that
         * no longer answers that session.
         */
        DROP_AFTER_ACCEPT,
        /** Answers the first session frame with SessionUnknown, as a restarted master does. */
        SESSION_UNKNOWN,
        /** After the first session frame, sends the key of a generation it never publishes under or announces. */
        KEY_UPDATE_UNANNOUNCED,
        /** The first publication's serial is at the floor of the auth reply. */
        PUBLISH_STALE_SERIAL,
        /** The second publication carries the first one's jid again, under a new serial. */
        PUBLISH_REPLAYED_JID,
        /** The first publication is of a newer generation whose key the master never sends. */
        PUBLISH_UNKNOWN_GENERATION
    }

    /** A session message the minion sent, with the session (hex id) it was sealed for and its counter. */
    record FromMinion(String session, long counter, SessionMessage message) {}

    private static final SecureRandom RANDOM = new SecureRandom();

    final KeyPair keys;
    private final Clock clock;
    /** Null when the test answers for the master. */
    private final FailAt failAt;

    private final AtomicBoolean failed = new AtomicBoolean();
    private volatile Listener listener;
    private final List<AuthRequest> authRequests = new CopyOnWriteArrayList<>();
    private final List<FromMinion> fromMinion = new CopyOnWriteArrayList<>();
    private final List<String> subscriptions = new CopyOnWriteArrayList<>();
    private final List<String> unreadable = new CopyOnWriteArrayList<>();
    /** Session resumption's frames the minion sent. */
    final List<Resumption> resumptionFrames = new CopyOnWriteArrayList<>();

    private final Map<String, SessionKey> requestKeys = new ConcurrentHashMap<>();
    private final Set<String> deafTo = ConcurrentHashMap.newKeySet();
    private final AtomicLong sendCounter = new AtomicLong();
    private final List<String> published = new CopyOnWriteArrayList<>();
    private final AtomicInteger sessionsGranted = new AtomicInteger();
    private final AtomicInteger reconnects = new AtomicInteger();
    /** Whether the connection is up as the transport sees it, for {@link #reconnect}; a test sets it. */
    volatile boolean connectionUp = true;
    /**
     * Whether {@link #start} says the connection is up at once; false for a connection that comes up later, when the
     * test calls {@link #reconnected} (a master the minion fails over to).
     */
    volatile boolean upOnStart = true;

    // The session of the last ACCEPTED reply.
    private volatile byte[] sessionId;
    private volatile SessionKey requestKey;
    volatile SessionKey publishKey = SessionKey.random();
    volatile long generation = 7;
    volatile long serialFloor = 1_000;
    private final AtomicLong serial = new AtomicLong(serialFloor);

    /** A master the test answers for, frame by frame. */
    FakeMaster(KeyPair keys, Clock clock) {
        this(keys, clock, null);
    }

    private FakeMaster(KeyPair keys, Clock clock, FailAt failAt) {
        this.keys = keys;
        this.clock = clock;
        this.failAt = failAt;
    }

    /** A master that answers by itself and breaks the protocol once, at {@code step}. */
    static FakeMaster failingAt(FailAt step, KeyPair keys, Clock clock) {
        return new FakeMaster(keys, clock, step);
    }

    // ---- ClientTransport ----

    @Override
    public void start(Listener listener) {
        this.listener = listener;
        // Connected at once, and says so, as the real transports do for their first connection.
        if (upOnStart) {
            listener.onConnected();
        }
    }

    @Override
    public boolean send(byte[] frame) {
        if (Resumptions.isResumption(frame)) {
            // Session resumption (PROTOCOL.md 8.9): recorded; this master gives no tickets, as an older one.
            try {
                resumptionFrames.add(Resumptions.decode(frame));
            } catch (MalformedException e) {
                unreadable.add("malformed resumption frame");
            }
            return true;
        }
        if (!(Codec.decode(frame, FrameLimits.MAX_FRAME) instanceof Decoded.Ok ok)) {
            unreadable.add("malformed");
            return true;
        }
        if (ok.message() instanceof AuthRequest request) {
            try {
                if (ok.verify(RsaKeys.publicKeyFromDer(request.publicKey()))) {
                    authRequests.add(request);
                    if (failAt != null) {
                        answer(request);
                    }
                    return true;
                }
            } catch (KeyFormatException e) {
                // recorded below
            }
            unreadable.add("auth request not signed by the key it offers");
        } else if (ok.message() instanceof SessionFrame sealed) {
            String session = HexFormat.of().formatHex(sealed.sessionId());
            SessionKey key = requestKeys.get(session);
            try {
                if (key == null) {
                    throw new CryptoException("no such session");
                }
                FromMinion received = new FromMinion(
                        session, sealed.counter(), Sessions.open(key, sealed, SessionFrame.Direction.MINION_TO_MASTER));
                fromMinion.add(received);
                if (failAt != null) {
                    answer(received);
                }
            } catch (CryptoException | MalformedException e) {
                unreadable.add("session frame: " + e.getMessage());
            }
        } else {
            unreadable.add(ok.message().type().toString());
        }
        return true;
    }

    @Override
    public void subscribe(String minionId, int publishPort) {
        subscriptions.add("m/" + minionId + "/@" + publishPort);
    }

    /**
     * Counted only: the test says when the new connection is up ({@link #reconnected}). Answers whether a connection
     * was up to be replaced: {@link #connectionUp}.
     */
    @Override
    public boolean reconnect() {
        reconnects.incrementAndGet();
        return connectionUp;
    }

    @Override
    public void close() {}

    // ---- the scripted master ----

    /** Whether this is the step to fail at, the first time it comes. */
    private boolean failsNow(FailAt step) {
        return failAt == step && failed.compareAndSet(false, true);
    }

    private void answer(AuthRequest request) {
        if (failsNow(FailAt.AUTH_NO_ANSWER)) {
            return;
        }
        if (failsNow(FailAt.AUTH_WRONG_NONCE)) {
            reply(accept(withNonce(request, randomBytes(32))));
        } else if (failsNow(FailAt.AUTH_UNSIGNED)) {
            reply(unsigned(accept(request)));
        } else if (failsNow(FailAt.AUTH_BAD_SIGNATURE)) {
            reply(accept(request, clock.millis(), keys.getPublic(), STRANGER.getPrivate()));
        } else if (failsNow(FailAt.AUTH_OTHER_MASTER_KEY)) {
            reply(accept(request, clock.millis(), (RSAPublicKey) OTHER_MASTER.getPublic(), OTHER_MASTER.getPrivate()));
        } else if (failsNow(FailAt.AUTH_PENDING)) {
            reply(refuse(request, AuthStatus.PENDING, "waiting for an admin"));
        } else if (failsNow(FailAt.AUTH_FULL)) {
            reply(refuse(request, AuthStatus.FULL, "too many pending keys", FULL_RETRY_AFTER_SECONDS));
        } else if (failsNow(FailAt.AUTH_REFUSED)) {
            reply(refuse(request, AuthStatus.REFUSED, "rate limited"));
        } else if (failsNow(FailAt.AUTH_DENIED)) {
            reply(refuse(request, AuthStatus.DENIED, "another key is accepted for this id"));
        } else if (failsNow(FailAt.AUTH_REJECTED)) {
            reply(refuse(request, AuthStatus.REJECTED, "rejected by an admin"));
        } else {
            reply(accept(request));
        }
    }

    private void answer(FromMinion received) {
        if (deafTo.contains(received.session())) {
            return;
        }
        if (failsNow(FailAt.DROP_AFTER_ACCEPT)) {
            deafTo.add(received.session());
            listener.onDisconnected();
            listener.onConnected();
            return;
        }
        if (failsNow(FailAt.SESSION_UNKNOWN)) {
            requestKeys.remove(received.session());
            reply(sessionUnknown(received.counter(), keys.getPrivate()));
            return;
        }
        if (failsNow(FailAt.KEY_UPDATE_UNANNOUNCED)) {
            reply(sealed(new SessionMessage.KeyUpdate(
                    generation + 1, SessionKey.random().bytes(), serialFloor)));
        }
        if (received.message() instanceof SessionMessage.Heartbeat) {
            reply(sealed(new SessionMessage.HeartbeatReply(generation)));
        } else if (received.message() instanceof SessionMessage.KeyRequest request
                && request.generation() == generation) {
            reply(sealed(new SessionMessage.KeyUpdate(generation, publishKey.bytes(), serialFloor)));
        } else if (received.message() instanceof SessionMessage.Return ret) {
            reply(sealed(new SessionMessage.Ack(List.of(ret.jid()))));
        }
    }

    /** Publishes a job for the minion, as the script says: the next serial, the current generation, unless failing. */
    void publishJob(String jid) {
        if (failsNow(FailAt.PUBLISH_STALE_SERIAL)) {
            publish(publication(serialFloor, jid));
        } else if (failAt == FailAt.PUBLISH_REPLAYED_JID
                && !published.isEmpty()
                && failsNow(FailAt.PUBLISH_REPLAYED_JID)) {
            publish(publication(serial.incrementAndGet(), published.get(0)));
        } else if (failsNow(FailAt.PUBLISH_UNKNOWN_GENERATION)) {
            publish(publication(SessionKey.random(), generation + 1, serial.incrementAndGet(), jid, keys.getPrivate()));
        } else {
            publish(publication(serial.incrementAndGet(), jid));
        }
        published.add(jid);
    }

    // ---- what the minion sent ----

    List<AuthRequest> authRequests() {
        return List.copyOf(authRequests);
    }

    List<FromMinion> fromMinion() {
        return List.copyOf(fromMinion);
    }

    /** The session messages of this type the minion sent, in order. */
    <T extends SessionMessage> List<T> received(Class<T> type) {
        return fromMinion.stream()
                .map(FromMinion::message)
                .filter(type::isInstance)
                .map(type::cast)
                .toList();
    }

    List<String> subscriptions() {
        return List.copyOf(subscriptions);
    }

    /** Frames the fake could not read: a correct minion sends none. */
    List<String> unreadable() {
        return List.copyOf(unreadable);
    }

    String currentSession() {
        return HexFormat.of().formatHex(sessionId);
    }

    /** How many times the minion asked for a new connection. */
    int reconnects() {
        return reconnects.get();
    }

    /** How many sessions the master has granted. */
    int sessionsGranted() {
        return sessionsGranted.get();
    }

    long lastCounterFromMinion() {
        String session = currentSession();
        return fromMinion.stream()
                .filter(m -> m.session().equals(session))
                .mapToLong(FromMinion::counter)
                .max()
                .orElse(0);
    }

    // ---- frames for the minion ----

    /** Delivers a frame on the request channel. */
    void reply(byte[] frame) {
        listener.onReply(frame);
    }

    /** Delivers a frame on the publish channel. */
    void publish(byte[] frame) {
        listener.onPublication(frame);
    }

    void reconnected() {
        listener.onConnected();
    }

    /** ACCEPTED, with a new session: fresh session id and request key, the current publish key, both wrapped. */
    byte[] accept(AuthRequest request) {
        return accept(request, clock.millis());
    }

    /** ACCEPTED as {@link #accept(AuthRequest)}, stamped with {@code timestampMs} as the master's clock. */
    byte[] accept(AuthRequest request, long timestampMs) {
        return accept(request, timestampMs, (RSAPublicKey) keys.getPublic(), keys.getPrivate());
    }

    private byte[] accept(AuthRequest request, long timestampMs, PublicKey carried, PrivateKey signer) {
        RSAPublicKey minionKey = minionKey(request);
        SessionKey key = SessionKey.random();
        byte[] id = newSession(key);
        AuthReply.Session session = new AuthReply.Session(
                id,
                generation,
                Rsa.wrap(minionKey, publishKey.bytes()),
                Rsa.wrap(minionKey, key.bytes()),
                PUBLISH_PORT,
                serialFloor);
        return authReply(
                new AuthReply(
                        Suite.RSA_OAEP_PSS_AES256GCM,
                        AuthStatus.ACCEPTED,
                        request.nonce(),
                        timestampMs,
                        carried.getEncoded(),
                        "accepted",
                        0,
                        session),
                signer);
    }

    /** A resumption ticket for the current session (PROTOCOL.md 8.9), sealed with its request key. */
    byte[] ticket(Resumption.Grant grant) {
        return Resumptions.encode(Resumptions.sealTicket(requestKey, sessionId, grant));
    }

    /** The resumption requests the minion sent, in order. */
    List<Resumption.Request> resumptionRequests() {
        return resumptionFrames.stream()
                .filter(Resumption.Request.class::isInstance)
                .map(Resumption.Request.class::cast)
                .toList();
    }

    /**
     * Resumes a session for {@code request} made with {@code grant}'s secret (as a master that opened its ticket): a
     * new session, the current publish key, and {@code next} as the next ticket.
     */
    byte[] resume(Resumption.Request request, Resumption.Grant grant, Resumption.Grant next) {
        SessionKey key = SessionKey.random();
        byte[] id = newSession(key);
        return Resumptions.encode(Resumptions.sealReply(
                grant.secret(),
                request.nonce(),
                new Resumption.Resumed(
                        id, generation, publishKey.bytes(), key.bytes(), PUBLISH_PORT, serialFloor, next)));
    }

    /** Opens a session under {@code key} with a fresh id, which it returns: the one frames are sealed for from now. */
    private byte[] newSession(SessionKey key) {
        byte[] id = new byte[16];
        RANDOM.nextBytes(id);
        requestKeys.put(HexFormat.of().formatHex(id), key);
        sessionsGranted.incrementAndGet();
        sessionId = id;
        requestKey = key;
        sendCounter.set(0);
        return id;
    }

    /** A refusal (any status but ACCEPTED), bound to the request's nonce and signed by this master. */
    byte[] refuse(AuthRequest request, AuthStatus status, String reason) {
        return refuse(request, status, reason, 0);
    }

    byte[] refuse(AuthRequest request, AuthStatus status, String reason, int retryAfterSeconds) {
        return authReply(
                new AuthReply(
                        Suite.RSA_OAEP_PSS_AES256GCM,
                        status,
                        request.nonce(),
                        clock.millis(),
                        keys.getPublic().getEncoded(),
                        reason,
                        retryAfterSeconds,
                        null),
                keys.getPrivate());
    }

    static byte[] authReply(AuthReply reply, PrivateKey signer) {
        return Codec.encodeSigned(reply, signer);
    }

    /** The same signed frame with its signature taken off (an empty one, as the codec allows on the wire). */
    static byte[] unsigned(byte[] signedFrame) {
        Decoded.Ok ok = (Decoded.Ok) Codec.decode(signedFrame, FrameLimits.MAX_FRAME);
        try (MessageBufferPacker out = MessagePack.newDefaultBufferPacker()) {
            out.writePayload(signedFrame, 0, 2); // version and type
            out.packArrayHeader(2);
            out.packBinaryHeader(ok.signedPayload().length);
            out.writePayload(ok.signedPayload());
            out.packBinaryHeader(0);
            return out.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A publication of the current generation, signed by this master now. */
    byte[] publication(long serial, String jid) {
        return publication(publishKey, generation, serial, jid, keys.getPrivate());
    }

    /** A publication of the current generation with the next serial, signed by this master now. */
    byte[] nextPublication(String jid) {
        return publication(serial.incrementAndGet(), jid);
    }

    byte[] publication(SessionKey key, long generation, long serial, String jid, PrivateKey signer) {
        return publication(key, generation, serial, clock.millis(), jid, signer);
    }

    static byte[] publication(
            SessionKey key, long generation, long serial, long issuedMs, String jid, PrivateKey signer) {
        PublishLoad load =
                new PublishLoad(jid, new PublishLoad.Target("glob", "*"), "test.ping", List.of(), Map.of(), 0, "root");
        Publish sealed = Publications.seal(key, generation, serial, issuedMs, load);
        return Codec.encodeSigned(sealed, signer);
    }

    /** A session frame for the current session, sealed with its request key, with the next counter. */
    byte[] sealed(SessionMessage message) {
        return Codec.encode(Sessions.seal(
                requestKey,
                sessionId,
                SessionFrame.Direction.MASTER_TO_MINION,
                sendCounter.incrementAndGet(),
                message));
    }

    /** The master's signed answer to a key rotation asked in the current session (PROTOCOL.md 6.3). */
    byte[] keyRotateReply(boolean rotated, String newFingerprint, String reason) {
        byte[] signature = Rsa.sign(keys.getPrivate(), KeyRotations.reply(sessionId, rotated, newFingerprint, reason));
        return sealed(new SessionMessage.KeyRotateReply(rotated, newFingerprint, reason, signature));
    }

    /** The master's signed answer that the rotation waits for an admin ({@code key_rotation: pending}). */
    byte[] keyRotatePending(String newFingerprint, String reason) {
        SessionMessage.KeyRotateReply unsigned =
                new SessionMessage.KeyRotateReply(false, newFingerprint, reason, new byte[0], true);
        byte[] signature = Rsa.sign(keys.getPrivate(), KeyRotations.reply(sessionId, unsigned));
        return sealed(new SessionMessage.KeyRotateReply(false, newFingerprint, reason, signature, true));
    }

    /** The master's answer to a session frame it does not know, here naming the current session. */
    byte[] sessionUnknown(long counter, PrivateKey signer) {
        return sessionUnknown(sessionId, counter, clock.millis(), signer);
    }

    static byte[] sessionUnknown(byte[] sessionId, long counter, long timestampMs, PrivateKey signer) {
        return Codec.encodeSigned(new SessionUnknown(sessionId, counter, timestampMs), signer);
    }

    static AuthRequest withNonce(AuthRequest request, byte[] nonce) {
        return new AuthRequest(
                request.suite(),
                request.id(),
                request.publicKey(),
                nonce,
                request.timestampMs(),
                request.claims(),
                request.grant(),
                request.token());
    }

    static byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    static RSAPublicKey minionKey(AuthRequest request) {
        try {
            return RsaKeys.publicKeyFromDer(request.publicKey());
        } catch (KeyFormatException e) {
            throw new IllegalStateException(e);
        }
    }
}

package io.brine.minion;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.Publications;
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
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionUnknown;
import io.brine.protocol.message.Suite;
import io.brine.transport.ClientTransport;
import io.brine.protocol.codec.FrameLimits;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A master in memory, as the minion's {@link ClientTransport}: it records what the minion sends (auth requests
 * verified with the key they offer, session frames opened with the request key of the session they name) and lets
 * the test hand the minion frames built right or wrong at each step, as replies or publications.
 */
final class FakeMaster implements ClientTransport {

    static final int PUBLISH_PORT = 4505;

    /** A session message the minion sent, with the session (hex id) it was sealed for and its counter. */
    record FromMinion(String session, long counter, SessionMessage message) {
    }

    private static final SecureRandom RANDOM = new SecureRandom();

    final KeyPair keys;
    private final Clock clock;
    private volatile Listener listener;
    private final List<AuthRequest> authRequests = new CopyOnWriteArrayList<>();
    private final List<FromMinion> fromMinion = new CopyOnWriteArrayList<>();
    private final List<String> subscriptions = new CopyOnWriteArrayList<>();
    private final List<String> unreadable = new CopyOnWriteArrayList<>();
    private final Map<String, SessionKey> requestKeys = new ConcurrentHashMap<>();
    private final AtomicLong sendCounter = new AtomicLong();

    // The session of the last ACCEPTED reply.
    private volatile byte[] sessionId;
    private volatile SessionKey requestKey;
    volatile SessionKey publishKey = SessionKey.random();
    volatile long generation = 7;
    volatile long serialFloor = 1_000;

    FakeMaster(KeyPair keys, Clock clock) {
        this.keys = keys;
        this.clock = clock;
    }

    // ---- ClientTransport ----

    @Override
    public void start(Listener listener) {
        this.listener = listener;
        // Connected at once, and says so, as the real transports do for their first connection.
        listener.onConnected();
    }

    @Override
    public boolean send(byte[] frame) {
        if (!(Codec.decode(frame, FrameLimits.MAX_FRAME) instanceof Decoded.Ok ok)) {
            unreadable.add("malformed");
            return true;
        }
        if (ok.message() instanceof AuthRequest request) {
            try {
                if (ok.verify(RsaKeys.publicKeyFromDer(request.publicKey()))) {
                    authRequests.add(request);
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
                fromMinion.add(new FromMinion(session, sealed.counter(),
                        Sessions.open(key, sealed, SessionFrame.Direction.MINION_TO_MASTER)));
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

    @Override
    public void close() {
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
        return fromMinion.stream().map(FromMinion::message).filter(type::isInstance).map(type::cast).toList();
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

    long lastCounterFromMinion() {
        String session = currentSession();
        return fromMinion.stream().filter(m -> m.session().equals(session)).mapToLong(FromMinion::counter).max()
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
        RSAPublicKey minionKey = minionKey(request);
        byte[] id = new byte[16];
        RANDOM.nextBytes(id);
        SessionKey key = SessionKey.random();
        requestKeys.put(HexFormat.of().formatHex(id), key);
        sessionId = id;
        requestKey = key;
        sendCounter.set(0);
        AuthReply.Session session = new AuthReply.Session(id, generation, Rsa.wrap(minionKey, publishKey.bytes()),
                Rsa.wrap(minionKey, key.bytes()), PUBLISH_PORT, serialFloor);
        return authReply(new AuthReply(Suite.RSA_OAEP_PSS_AES256GCM, AuthStatus.ACCEPTED, request.nonce(),
                timestampMs, keys.getPublic().getEncoded(), "accepted", 0, session), keys.getPrivate());
    }

    /** A refusal (any status but ACCEPTED), bound to the request's nonce and signed by this master. */
    byte[] refuse(AuthRequest request, AuthStatus status, String reason) {
        return authReply(new AuthReply(Suite.RSA_OAEP_PSS_AES256GCM, status, request.nonce(), clock.millis(),
                keys.getPublic().getEncoded(), reason, 0, null), keys.getPrivate());
    }

    static byte[] authReply(AuthReply reply, PrivateKey signer) {
        return Codec.encodeSigned(reply, signer);
    }

    /** A publication of the current generation, signed by this master. */
    byte[] publication(long serial, String jid) {
        return publication(publishKey, generation, serial, jid, keys.getPrivate());
    }

    static byte[] publication(SessionKey key, long generation, long serial, String jid, PrivateKey signer) {
        PublishLoad load = new PublishLoad(jid, new PublishLoad.Target("glob", "*"), "test.ping", List.of(),
                Map.of(), 0, "root");
        Publish sealed = Publications.seal(key, generation, serial, load);
        return Codec.encodeSigned(sealed, signer);
    }

    /** A session frame for the current session, sealed with its request key, with the next counter. */
    byte[] sealed(SessionMessage message) {
        return Codec.encode(Sessions.seal(requestKey, sessionId, SessionFrame.Direction.MASTER_TO_MINION,
                sendCounter.incrementAndGet(), message));
    }

    /** The master's answer to a session frame it does not know, here naming the current session. */
    byte[] sessionUnknown(long counter, PrivateKey signer) {
        return sessionUnknown(sessionId, counter, clock.millis(), signer);
    }

    static byte[] sessionUnknown(byte[] sessionId, long counter, long timestampMs, PrivateKey signer) {
        return Codec.encodeSigned(new SessionUnknown(sessionId, counter, timestampMs), signer);
    }

    static RSAPublicKey minionKey(AuthRequest request) {
        try {
            return RsaKeys.publicKeyFromDer(request.publicKey());
        } catch (KeyFormatException e) {
            throw new IllegalStateException(e);
        }
    }
}

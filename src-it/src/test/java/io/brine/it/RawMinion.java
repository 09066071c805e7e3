package io.brine.it;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Message;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.Suite;
import io.brine.transport.Topics;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A minion spoken at the protocol level over raw jeromq sockets, for what a real minion never does: keep every key
 * it was ever given, listen on other minions' topics, send garbage. Not thread-safe: the test thread drives it.
 */
final class RawMinion implements AutoCloseable {

    private final ZContext context = new ZContext(1);
    private final ZMQ.Socket dealer;
    private final SecureRandom random = new SecureRandom();
    final String id;
    final KeyPair keys;
    RSAPublicKey masterKey;
    byte[] sessionId;
    SessionKey requestKey;
    private long sendCounter;
    /** Every publish key this minion ever held, by generation. */
    final TreeMap<Long, SessionKey> publishKeys = new TreeMap<>();
    /** Every publication it saw on the publish channel, whoever it was for. */
    final List<Publish> captured = new ArrayList<>();

    private ZMQ.Socket snoop;

    RawMinion(int retPort, String id, KeyPair keys) {
        this.id = id;
        this.keys = keys;
        this.dealer = context.createSocket(SocketType.DEALER);
        dealer.setLinger(0);
        dealer.connect("tcp://127.0.0.1:" + retPort);
    }

    /** Sends an auth request and waits for its answer; on ACCEPTED, takes the session and the publish key. */
    AuthReply authenticate(Duration timeout) throws Exception {
        byte[] nonce = new byte[32];
        random.nextBytes(nonce);
        return ask(authRequest(nonce), nonce, timeout)
                .orElseThrow(() -> new AssertionError(id + ": no auth reply within " + timeout));
    }

    /**
     * Sends {@code request} (an auth request with {@code nonce}: this minion's, or one captured) and waits for its
     * answer; on ACCEPTED, takes the session and the publish key. Empty when none came within {@code timeout}.
     */
    Optional<AuthReply> ask(byte[] request, byte[] nonce, Duration timeout) throws Exception {
        send(request);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Optional<Decoded.Ok> ok = nextReply(Duration.ofNanos(deadline - System.nanoTime()));
            if (ok.isPresent()
                    && ok.get().message() instanceof AuthReply reply
                    && Arrays.equals(reply.nonce(), nonce)) {
                RSAPublicKey offered = RsaKeys.publicKeyFromDer(reply.masterPublicKey());
                if (!ok.get().verify(masterKey != null ? masterKey : offered)) {
                    throw new AssertionError("auth reply not signed by the master");
                }
                masterKey = offered;
                if (reply.status() == AuthStatus.ACCEPTED) {
                    AuthReply.Session session = reply.session();
                    sessionId = session.sessionId();
                    requestKey = SessionKey.of(Rsa.unwrap(keys.getPrivate(), session.wrappedRequestKey()));
                    publishKeys.put(
                            session.generation(),
                            SessionKey.of(Rsa.unwrap(keys.getPrivate(), session.wrappedPublishKey())));
                    sendCounter = 0;
                }
                return Optional.of(reply);
            }
        }
        return Optional.empty();
    }

    /** A well-formed auth request with {@code nonce}, signed with this minion's key. */
    byte[] authRequest(byte[] nonce) {
        return authRequest(nonce, System.currentTimeMillis());
    }

    /** A well-formed auth request with {@code nonce} dated {@code timestampMs}, signed with this minion's key. */
    byte[] authRequest(byte[] nonce, long timestampMs) {
        return Codec.encodeSigned(
                new AuthRequest(
                        Suite.RSA_OAEP_PSS_AES256GCM,
                        id,
                        keys.getPublic().getEncoded(),
                        nonce,
                        timestampMs,
                        Map.of(),
                        null,
                        null),
                keys.getPrivate());
    }

    void send(byte[] frame) {
        if (!dealer.send(frame, ZMQ.DONTWAIT)) {
            throw new AssertionError("frame not queued");
        }
    }

    /** Seals {@code message} in the current session and sends it. */
    void sendSession(SessionMessage message) {
        send(Codec.encode(
                Sessions.seal(requestKey, sessionId, SessionFrame.Direction.MINION_TO_MASTER, ++sendCounter, message)));
    }

    /** The next well-formed frame on the request channel within {@code timeout}. */
    Optional<Decoded.Ok> nextReply(Duration timeout) {
        dealer.setReceiveTimeOut((int) Math.max(1, timeout.toMillis()));
        byte[] frame = dealer.recv();
        if (frame == null) {
            return Optional.empty();
        }
        return Codec.decode(frame, FrameLimits.MAX_FRAME) instanceof Decoded.Ok ok ? Optional.of(ok) : Optional.empty();
    }

    /** The next frame on the request channel of type {@code type}, applying any key update on the way. */
    <T extends Message> Optional<T> next(Class<T> type, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Optional<Decoded.Ok> ok = nextReply(Duration.ofNanos(deadline - System.nanoTime()));
            if (ok.isPresent()) {
                Message message = ok.get().message();
                if (message instanceof SessionFrame sealed) {
                    openAndKeep(sealed);
                }
                if (type.isInstance(message)) {
                    return Optional.of(type.cast(message));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Subscribes to {@code topics} on the publish channel, then to its own topic. One connection carries them in that
     * order, so once the master sees this minion subscribed (the transport's {@code subscribedMinions}), it has
     * judged the others too (the master decides which it honours: transport/ZMTP.md).
     */
    void snoop(int publishPort, String... topics) {
        snoop = context.createSocket(SocketType.SUB);
        snoop.setLinger(0);
        for (String topic : topics) {
            snoop.subscribe(topic.getBytes(StandardCharsets.US_ASCII));
        }
        snoop.subscribe(Topics.minionBytes(id));
        snoop.connect("tcp://127.0.0.1:" + publishPort);
    }

    /**
     * Reads the publish channel until {@code count} publications are captured (or {@code timeout}): keeps
     * publications, applies key updates it can open.
     */
    void listenFor(int count, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (captured.size() < count && System.nanoTime() < deadline) {
            snoop.setReceiveTimeOut((int)
                    Math.max(1, Duration.ofNanos(deadline - System.nanoTime()).toMillis()));
            byte[] topic = snoop.recv();
            if (topic == null || !snoop.hasReceiveMore()) {
                continue;
            }
            byte[] frame = snoop.recv();
            if (Codec.decode(frame, FrameLimits.MAX_FRAME) instanceof Decoded.Ok ok) {
                if (ok.message() instanceof Publish publish) {
                    captured.add(publish);
                } else if (ok.message() instanceof SessionFrame sealed) {
                    openAndKeep(sealed);
                }
            }
        }
    }

    /** Opens a session frame with our request key if it can; keeps the publish key of a key update. */
    private void openAndKeep(SessionFrame sealed) {
        if (requestKey == null || !Arrays.equals(sealed.sessionId(), sessionId)) {
            return;
        }
        try {
            SessionMessage message = Sessions.open(requestKey, sealed, SessionFrame.Direction.MASTER_TO_MINION);
            if (message instanceof SessionMessage.KeyUpdate update) {
                publishKeys.put(update.generation(), SessionKey.of(update.publishKey()));
            }
        } catch (CryptoException | MalformedException e) {
            // Not for us.
        }
    }

    @Override
    public void close() {
        context.close();
    }
}

package io.brine.protocol.codec;

import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionMessage.KeyRotate;
import io.brine.protocol.message.SessionMessage.KeyRotateReply;
import io.brine.protocol.message.SessionType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.PublicKey;
import java.time.Duration;

/**
 * A minion's key rotation on the wire (PROTOCOL.md 6.3): the layouts of {@link KeyRotate} and {@link
 * KeyRotateReply}, and the bytes each signature covers. Both are bound to the session they travel in, so a request or
 * an answer copied into another session does not verify.
 */
public final class KeyRotations {

    static final byte[] REQUEST_CONTEXT = "brine-key-rotate-v1".getBytes(StandardCharsets.US_ASCII);
    static final byte[] REPLY_CONTEXT = "brine-key-rotate-reply-v1".getBytes(StandardCharsets.US_ASCII);
    /** A fingerprint as {@code Fingerprints.of} prints it: 32 colon-separated hex pairs. */
    static final int FINGERPRINT_LENGTH = 95;
    /**
     * How long a minion's request asked for by the master ({@code brine-key --rotate-keys}) waits for its answer
     * before a master that asks again is sent it again, for the same new key: a master drops a request unanswered when
     * its auth work queue is full, and asks at every heartbeat until the key changes. Longer than an answer takes under
     * load (up to 60 s measured at 1,000 minions on a loaded disk) and than the master's one answer a minute per
     * minion (PROTOCOL.md 10.1); a few heartbeats at most.
     */
    public static final Duration RESEND_AFTER = Duration.ofMinutes(5);

    private KeyRotations() {}

    /**
     * What both keys sign: {@code "brine-key-rotate-v1" || sessionId(16) || u16 len || id || u16 len || oldKey ||
     * u16 len || newKey}, the keys as SubjectPublicKeyInfo DER.
     */
    public static byte[] request(byte[] sessionId, String id, byte[] oldKey, byte[] newKey) {
        byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(
                        REQUEST_CONTEXT.length + sessionId.length + 6 + idBytes.length + oldKey.length + newKey.length)
                .put(REQUEST_CONTEXT)
                .put(sessionId)
                .putShort((short) idBytes.length)
                .put(idBytes)
                .putShort((short) oldKey.length)
                .put(oldKey)
                .putShort((short) newKey.length)
                .put(newKey)
                .array();
    }

    /**
     * A minion's request to rotate from {@code current} to {@code next} in session {@code sessionId}, signed by both
     * private keys over {@link #request}'s bytes: two private-key operations. What {@code brine-minion} sends, and
     * the benchmark's simulated minions.
     */
    public static KeyRotate signedRequest(byte[] sessionId, String id, KeyPair current, KeyPair next) {
        byte[] newKey = next.getPublic().getEncoded();
        byte[] signed = request(sessionId, id, current.getPublic().getEncoded(), newKey);
        return new KeyRotate(newKey, Rsa.sign(current.getPrivate(), signed), Rsa.sign(next.getPrivate(), signed));
    }

    /** Whether {@code masterKey} signed {@code reply} for session {@code sessionId}: one public-key operation. */
    public static boolean signedBy(PublicKey masterKey, byte[] sessionId, KeyRotateReply reply) {
        return Rsa.verify(masterKey, reply(sessionId, reply), reply.signature());
    }

    /**
     * What the master signs: {@code "brine-key-rotate-reply-v1" || sessionId(16) || u8 rotated || u16 len ||
     * newFingerprint || u16 len || reason}, strings in UTF-8.
     */
    public static byte[] reply(byte[] sessionId, boolean rotated, String newFingerprint, String reason) {
        return reply(sessionId, rotated ? OUTCOME_ROTATED : OUTCOME_REFUSED, newFingerprint, reason);
    }

    /** What the master signs for {@code reply}: its outcome byte is 2 when the rotation is pending. */
    public static byte[] reply(byte[] sessionId, KeyRotateReply reply) {
        return reply(
                sessionId,
                reply.pending() ? OUTCOME_PENDING : reply.rotated() ? OUTCOME_ROTATED : OUTCOME_REFUSED,
                reply.newFingerprint(),
                reply.reason());
    }

    private static final byte OUTCOME_REFUSED = 0;
    private static final byte OUTCOME_ROTATED = 1;
    private static final byte OUTCOME_PENDING = 2;

    private static byte[] reply(byte[] sessionId, byte outcome, String newFingerprint, String reason) {
        byte[] fingerprint = newFingerprint.getBytes(StandardCharsets.UTF_8);
        byte[] why = reason.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(REPLY_CONTEXT.length + sessionId.length + 5 + fingerprint.length + why.length)
                .put(REPLY_CONTEXT)
                .put(sessionId)
                .put(outcome)
                .putShort((short) fingerprint.length)
                .put(fingerprint)
                .putShort((short) why.length)
                .put(why)
                .array();
    }

    /** Writes {@code message} when it is one of this class's; false otherwise. */
    static boolean write(MsgWriter out, SessionMessage message) {
        if (message instanceof KeyRotate m) {
            out.array(3)
                    .bin("KeyRotate.newKey", m.newKey())
                    .bin("KeyRotate.oldSignature", m.oldSignature())
                    .bin("KeyRotate.newSignature", m.newSignature());
            return true;
        }
        if (message instanceof KeyRotateReply m) {
            // Five items only when pending: a minion before pending reads the four of a done or refused rotation.
            out.array(m.pending() ? 5 : 4)
                    .bool(m.rotated())
                    .str("KeyRotateReply.newFingerprint", m.newFingerprint())
                    .str("KeyRotateReply.reason", m.reason())
                    .bin("KeyRotateReply.signature", m.signature());
            if (m.pending()) {
                out.bool(true);
            }
            return true;
        }
        return false;
    }

    static SessionMessage read(SessionType type, MsgReader in) throws IOException, MalformedException {
        if (type == SessionType.KEY_ROTATE) {
            in.array("KeyRotate", 3);
            byte[] newKey = in.bin("KeyRotate.newKey", 1, FieldLimits.MAX_SPKI);
            byte[] oldSignature = in.bin("KeyRotate.oldSignature", 1, FieldLimits.MAX_RSA_BLOCK);
            byte[] newSignature = in.bin("KeyRotate.newSignature", 1, FieldLimits.MAX_RSA_BLOCK);
            return new KeyRotate(newKey, oldSignature, newSignature);
        }
        int items = in.arrayBetween("KeyRotateReply", 4, 5);
        boolean rotated = in.bool("KeyRotateReply.rotated");
        String fingerprint = in.text("KeyRotateReply.newFingerprint", FINGERPRINT_LENGTH, false);
        String reason = in.text("KeyRotateReply.reason", FieldLimits.MAX_REASON, false);
        byte[] signature = in.bin("KeyRotateReply.signature", 1, FieldLimits.MAX_RSA_BLOCK);
        boolean pending = items == 5 && in.bool("KeyRotateReply.pending");
        if (rotated && pending) {
            throw new MalformedException("KeyRotateReply: both rotated and pending");
        }
        return new KeyRotateReply(rotated, fingerprint, reason, signature, pending);
    }
}

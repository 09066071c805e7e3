package io.brine.protocol.codec;

import io.brine.protocol.crypto.Aead;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionFrame.Direction;
import io.brine.protocol.message.SessionMessage;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The session-frame envelope: a {@link SessionMessage} sealed with the minion's request key under associated data
 * {@code "brine-session-v1" || sessionId(16) || direction:u8 || counter:u64be}. Replay protection is the caller's,
 * with a {@link ReplayWindow} per session and direction.
 */
public final class Sessions {

    static final byte[] CONTEXT = "brine-session-v1".getBytes(StandardCharsets.US_ASCII);

    private Sessions() {}

    /**
     * Seals {@code message} for one direction of a session.
     *
     * @throws IllegalArgumentException when the message type may not travel in {@code direction}, the session id is
     *                                  not 16 bytes, the counter is below 1, or the message is not encodable
     */
    public static SessionFrame seal(
            SessionKey requestKey, byte[] sessionId, Direction direction, long counter, SessionMessage message) {
        if (sessionId == null || sessionId.length != FieldLimits.SESSION_ID_LENGTH) {
            throw new IllegalArgumentException("a session id is " + FieldLimits.SESSION_ID_LENGTH + " bytes");
        }
        if (counter < 1) {
            throw new IllegalArgumentException("session counters start at 1");
        }
        if (direction == null || direction(message) != direction) {
            throw new IllegalArgumentException(message.type() + " may not be sent " + direction);
        }
        byte[] plaintext = Codec.encodeInner(message);
        byte[] box = Aead.seal(requestKey, associatedData(sessionId, direction, counter), plaintext);
        return new SessionFrame(sessionId.clone(), direction, counter, box);
    }

    /**
     * Opens a session frame holding a message of direction {@code expected}: the master passes
     * {@link SessionMessage.FromMinion} for a minion's session and {@link SessionMessage.FromPublisher} for a
     * publisher's, a minion {@link SessionMessage.ToMinion}, a publisher {@link SessionMessage.ToPublisher}. Receivers
     * use this form: it refuses a frame reflected back at its own sealer, and any message of another direction.
     *
     * @throws MalformedException the frame travels the other way, or holds a message of another direction (a
     *                            master-to-publisher message arriving at a minion, a publisher's in a minion's
     *                            session), or as {@link #open(SessionKey, SessionFrame)}
     * @throws CryptoException    as {@link #open(SessionKey, SessionFrame)}
     */
    public static <T extends SessionMessage> T open(SessionKey requestKey, SessionFrame frame, Class<T> expected)
            throws CryptoException, MalformedException {
        Direction travelling;
        String to;
        if (expected == SessionMessage.FromMinion.class) {
            travelling = Direction.MINION_TO_MASTER;
            to = "a minion's session";
        } else if (expected == SessionMessage.FromPublisher.class) {
            travelling = Direction.MINION_TO_MASTER;
            to = "a publisher's session";
        } else if (expected == SessionMessage.ToMinion.class) {
            travelling = Direction.MASTER_TO_MINION;
            to = "a minion";
        } else if (expected == SessionMessage.ToPublisher.class) {
            travelling = Direction.MASTER_TO_MINION;
            to = "a publisher";
        } else {
            throw new IllegalArgumentException("not a direction: " + expected.getName());
        }
        SessionMessage message = open(requestKey, frame, travelling);
        if (!expected.isInstance(message)) {
            throw new MalformedException.WrongDirection(message.type() + " does not travel in " + to);
        }
        return expected.cast(message);
    }

    /**
     * Opens a session frame that must travel in {@code expected}: the master passes MINION_TO_MASTER, a minion
     * MASTER_TO_MINION. It refuses a frame reflected back at its own sealer; receivers use
     * {@link #open(SessionKey, SessionFrame, Class)}, which also refuses a message for the other kind of peer.
     *
     * @throws MalformedException the frame travels the other way, or as {@link #open(SessionKey, SessionFrame)}
     * @throws CryptoException    as {@link #open(SessionKey, SessionFrame)}
     */
    public static SessionMessage open(SessionKey requestKey, SessionFrame frame, Direction expected)
            throws CryptoException, MalformedException {
        if (frame.direction() != expected) {
            throw new MalformedException("SessionFrame: expected direction " + expected + ", got " + frame.direction());
        }
        return open(requestKey, frame);
    }

    /**
     * Opens a session frame and checks that the message inside may travel in the frame's direction. The direction
     * is the frame's own: a frame the caller sealed itself, reflected back, opens here. Receivers should use
     * {@link #open(SessionKey, SessionFrame, Direction)}.
     *
     * @throws CryptoException    wrong key, wrong session id, direction or counter, or tampered
     * @throws MalformedException authentic, but not a message legal in this direction (a peer's bug)
     */
    public static SessionMessage open(SessionKey requestKey, SessionFrame frame)
            throws CryptoException, MalformedException {
        if (frame.sessionId() == null
                || frame.sessionId().length != FieldLimits.SESSION_ID_LENGTH
                || frame.direction() == null) {
            throw new MalformedException("SessionFrame: no valid session id or direction");
        }
        byte[] plaintext = Aead.open(
                requestKey, associatedData(frame.sessionId(), frame.direction(), frame.counter()), frame.box());
        SessionMessage message = Codec.decodeInner(plaintext);
        if (direction(message) != frame.direction()) {
            throw new MalformedException(message.type() + " may not be sent " + frame.direction());
        }
        return message;
    }

    /** The direction a session message travels in, as its record's direction says. */
    public static Direction direction(SessionMessage message) {
        return message instanceof SessionMessage.FromMinion || message instanceof SessionMessage.FromPublisher
                ? Direction.MINION_TO_MASTER
                : Direction.MASTER_TO_MINION;
    }

    /** {@code "brine-session-v1" || sessionId(16) || direction:u8 || counter:u64be}. */
    static byte[] associatedData(byte[] sessionId, Direction direction, long counter) {
        return ByteBuffer.allocate(CONTEXT.length + sessionId.length + 1 + Long.BYTES)
                .put(CONTEXT)
                .put(sessionId)
                .put((byte) direction.code())
                .putLong(counter)
                .array();
    }
}

package io.brine.master.session;

import io.brine.protocol.crypto.SessionKey;
import io.brine.transport.Peer;
import java.security.interfaces.RSAPublicKey;
import java.util.Optional;

/**
 * One accepted minion's session: its id and the key accepted for it, and when it last spoke. The key is the one the
 * session was opened with until a key rotation in the session commits (PROTOCOL.md 6.3): from then on it is the new
 * key, which the session's next ticket names and its next rotation is signed by.
 */
public final class MinionSession extends Session {

    private final String minionId;
    private volatile RSAPublicKey publicKey;
    /** The key a rotation in this session replaced: a request for it sent again is signed by that key. */
    private volatile RSAPublicKey rotatedFrom;
    /** The new key of a rotation being decided in the key store, which may hold it before the session does. */
    private volatile RSAPublicKey rotatingTo;

    /**
     * The ticket this session was resumed with, when it was and no rotation in it has proved a key since: the tickets
     * it gives keep that one's dates, so resuming never extends the 24 h since the full auth (PROTOCOL.md 8.9).
     */
    private volatile TicketDates resumedWith;

    private final long authTimestampMs;
    private volatile long lastSeenMs;

    /** When a ticket was given (its full auth's or rotation's time) and when it expires. */
    public record TicketDates(long issuedMs, long expiresMs) {}

    MinionSession(
            String minionId,
            SessionId sessionId,
            SessionKey requestKey,
            RSAPublicKey publicKey,
            Peer peer,
            long nowMs,
            long authTimestampMs) {
        super(sessionId, requestKey, peer);
        this.minionId = minionId;
        this.publicKey = publicKey;
        this.lastSeenMs = nowMs;
        this.authTimestampMs = authTimestampMs;
    }

    /** The timestamp of the auth request that opened this session: only a newer one may replace it. */
    public long authTimestampMs() {
        return authTimestampMs;
    }

    public String minionId() {
        return minionId;
    }

    /** The minion's accepted key, as far as this session knows: the one it opened with, or a rotation's. */
    public RSAPublicKey publicKey() {
        return publicKey;
    }

    /** This session was opened by resuming a ticket of these dates (before it is answered). */
    public void resumedWith(TicketDates dates) {
        resumedWith = dates;
    }

    /**
     * The dates of the ticket this session was resumed with, which the tickets it gives keep; empty when a full auth
     * opened it or a rotation in it committed since (each proved the private key of the key a ticket names).
     */
    public Optional<TicketDates> resumedWith() {
        return Optional.ofNullable(resumedWith);
    }

    /** The key the last rotation in this session replaced; empty when none rotated it. */
    public Optional<RSAPublicKey> rotatedFrom() {
        return Optional.ofNullable(rotatedFrom);
    }

    /** A rotation to {@code newKey} is being decided in the key store (until {@link #rotationDecided}). */
    public void rotating(RSAPublicKey newKey) {
        rotatingTo = newKey;
    }

    /**
     * The rotation {@link #rotating} announced is decided: with {@code rotated}, the key store now holds its new key
     * as the accepted key, and so does this session.
     */
    public void rotationDecided(boolean rotated) {
        RSAPublicKey newKey = rotatingTo;
        if (rotated && newKey != null && !sameKey(newKey, publicKey)) {
            rotatedFrom = publicKey;
            publicKey = newKey;
            resumedWith = null;
        }
        rotatingTo = null;
    }

    /**
     * Whether {@code accepted}, the id's accepted key in the key store, is this session's: its key, or the new key of
     * a rotation being decided (the store holds it once it commits, a moment before the session does).
     */
    public boolean holds(RSAPublicKey accepted) {
        return sameKey(accepted, publicKey) || sameKey(accepted, rotatingTo);
    }

    private static boolean sameKey(RSAPublicKey a, RSAPublicKey b) {
        return b != null
                && a.getModulus().equals(b.getModulus())
                && a.getPublicExponent().equals(b.getPublicExponent());
    }

    /** An authentic frame came from {@code from}: answers go there from now on. */
    public void seen(Peer from, long nowMs) {
        peer(from);
        this.lastSeenMs = nowMs;
    }

    public long lastSeenMs() {
        return lastSeenMs;
    }

    @Override
    public String toString() {
        return "MinionSession[" + minionId + "]";
    }
}

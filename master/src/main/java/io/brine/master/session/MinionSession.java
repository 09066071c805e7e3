package io.brine.master.session;

import io.brine.protocol.crypto.SessionKey;
import io.brine.transport.Peer;
import java.security.interfaces.RSAPublicKey;

/** One accepted minion's session: its id and the key it was accepted with, and when it last spoke. */
public final class MinionSession extends Session {

    private final String minionId;
    private final RSAPublicKey publicKey;
    private final long authTimestampMs;
    private volatile long lastSeenMs;

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

    public RSAPublicKey publicKey() {
        return publicKey;
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

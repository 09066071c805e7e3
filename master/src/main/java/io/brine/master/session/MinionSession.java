package io.brine.master.session;

import io.brine.protocol.codec.ReplayWindow;
import io.brine.protocol.crypto.SessionKey;
import io.brine.transport.Peer;
import java.security.interfaces.RSAPublicKey;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One accepted minion's session: the request key it shares with the master alone, the counters of the session
 * frames in each direction, and the peer it last spoke from.
 */
public final class MinionSession {

    private final String minionId;
    private final SessionId sessionId;
    private final SessionKey requestKey;
    private final RSAPublicKey publicKey;
    private final AtomicLong sendCounter = new AtomicLong();
    private final ReplayWindow receiveWindow = new ReplayWindow();
    private volatile Peer peer;
    private volatile long lastSeenMs;

    MinionSession(String minionId, SessionId sessionId, SessionKey requestKey, RSAPublicKey publicKey, Peer peer,
            long nowMs) {
        this.minionId = minionId;
        this.sessionId = sessionId;
        this.requestKey = requestKey;
        this.publicKey = publicKey;
        this.peer = peer;
        this.lastSeenMs = nowMs;
    }

    public String minionId() {
        return minionId;
    }

    public SessionId sessionId() {
        return sessionId;
    }

    public SessionKey requestKey() {
        return requestKey;
    }

    public RSAPublicKey publicKey() {
        return publicKey;
    }

    /** The counter for the next master-to-minion frame. */
    public long nextSendCounter() {
        return sendCounter.incrementAndGet();
    }

    /** True once per counter for minion-to-master frames inside the replay window. */
    public boolean acceptCounter(long counter) {
        synchronized (receiveWindow) {
            return receiveWindow.accept(counter);
        }
    }

    public Peer peer() {
        return peer;
    }

    public void seen(Peer from, long nowMs) {
        this.peer = from;
        this.lastSeenMs = nowMs;
    }

    public long lastSeenMs() {
        return lastSeenMs;
    }

    void close() {
        requestKey.wipe();
    }

    @Override
    public String toString() {
        return "MinionSession[" + minionId + "]";
    }
}

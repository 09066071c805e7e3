package io.brine.master.session;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.ReplayWindow;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.transport.Peer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a signed auth opened: a request key shared with the master alone, the counters of the session frames in
 * each direction, and the peer it last spoke from. A minion's or a publisher's; one {@link SessionTable} holds both,
 * and the session id alone says whose a frame is.
 */
public abstract sealed class Session permits MinionSession, PublisherSession {

    private final SessionId sessionId;
    private final SessionKey requestKey;
    private final AtomicLong sendCounter = new AtomicLong();
    private final ReplayWindow receiveWindow = new ReplayWindow();
    private volatile Peer peer;

    Session(SessionId sessionId, SessionKey requestKey, Peer peer) {
        this.sessionId = sessionId;
        this.requestKey = requestKey;
        this.peer = peer;
    }

    public SessionId sessionId() {
        return sessionId;
    }

    public SessionKey requestKey() {
        return requestKey;
    }

    /** The peer the last authentic frame came from: where answers go. */
    public Peer peer() {
        return peer;
    }

    void peer(Peer from) {
        this.peer = from;
    }

    /** The counter for the next master-to-peer frame. */
    public long nextSendCounter() {
        return sendCounter.incrementAndGet();
    }

    /** True once per counter for peer-to-master frames inside the replay window. */
    public boolean acceptCounter(long counter) {
        synchronized (receiveWindow) {
            return receiveWindow.accept(counter);
        }
    }

    /** {@code message} sealed with this session's request key and next counter, as a frame. */
    public byte[] seal(SessionMessage message) {
        return Codec.encode(Sessions.seal(requestKey, sessionId.bytes(), SessionFrame.Direction.MASTER_TO_MINION,
                nextSendCounter(), message));
    }

    void close() {
        requestKey.wipe();
    }
}

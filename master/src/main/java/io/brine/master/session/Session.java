package io.brine.master.session;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.ReplayWindow;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.transport.Peer;
import java.util.function.Predicate;

/**
 * What a signed auth opened: a request key shared with the master alone, the counters of the session frames in
 * each direction, and the peer it last spoke from. A minion's or a publisher's; one {@link SessionTable} holds both,
 * and the session id alone says whose a frame is.
 */
public abstract sealed class Session permits MinionSession, PublisherSession {

    private final SessionId sessionId;
    private final SessionKey requestKey;
    /** The last counter sealed to the peer; under this session's lock. */
    private long sendCounter;

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

    /** True once per counter for peer-to-master frames inside the replay window. */
    public boolean acceptCounter(long counter) {
        synchronized (receiveWindow) {
            return receiveWindow.accept(counter);
        }
    }

    /**
     * Seals {@code message} with this session's request key and next counter and hands the frame to {@code send}
     * (which queues it on the transport and says whether it was queued), under this session's lock: the one way a
     * master-to-peer session frame is made. Frames reach the transport in the order of their counters, whichever
     * threads send them; a frame overtaken by 64 later ones would fall out of the receiver's replay window and be
     * lost (a rotation's KeyUpdate sealed on the timer thread, then overtaken by a burst of answers from the
     * workers). {@code send} must only queue, not wait for the network: the transports' sends do.
     *
     * @return what {@code send} returned; false without calling it once the session is closed (its key wiped: the
     *         minion holds another session's key by then, if any)
     */
    public synchronized boolean sealAndSend(SessionMessage message, Predicate<byte[]> send) {
        if (requestKey.wiped()) {
            return false;
        }
        return send.test(Codec.encode(Sessions.seal(
                requestKey, sessionId.bytes(), SessionFrame.Direction.MASTER_TO_MINION, ++sendCounter, message)));
    }

    /** Wipes the request key, under the lock {@link #sealAndSend} holds: never in the middle of a seal. */
    synchronized void close() {
        requestKey.wipe();
    }
}

package io.brine.master.session;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionUnknown;
import io.brine.transport.Peer;
import java.security.PrivateKey;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Session frames (PROTOCOL.md 8.4): opens them with the request key of the session their id names, in the one
 * {@link SessionTable}, so the session alone says who the sender is, a minion or a publisher; drops reflections,
 * forgeries and replays; and answers what a minion's session itself asks (heartbeats, key requests). Runs on worker
 * threads.
 */
public final class SessionService {

    private static final Logger LOG = LoggerFactory.getLogger(SessionService.class);

    /** What a session frame came to: an authentic message in a known session, or an unknown session. */
    public sealed interface Opened {

        /** An authentic message, not seen before, in {@code session}. */
        record Authentic(Session session, SessionMessage message) implements Opened {
        }

        /** No session has this id (the master restarted, or closed the session): the sender must authenticate. */
        record Unknown(SessionFrame frame) implements Opened {
        }
    }

    private final SessionTable sessions;
    private final PublishKeyring keyring;
    private final PrivateKey masterKey;
    private final Clock clock;

    public SessionService(SessionTable sessions, PublishKeyring keyring, PrivateKey masterKey, Clock clock) {
        this.sessions = sessions;
        this.keyring = keyring;
        this.masterKey = masterKey;
        this.clock = clock;
    }

    /** Opens {@code sealed}; empty when it is dropped (logged at DEBUG: wrong direction, forged, replayed). */
    public Optional<Opened> open(Peer peer, SessionFrame sealed) {
        if (sealed.direction() != SessionFrame.Direction.MINION_TO_MASTER) {
            LOG.debug("Session frame from {} dropped: not a minion-to-master frame", peer.remoteAddress());
            return Optional.empty();
        }
        Session session = sessions.bySessionId(SessionId.of(sealed.sessionId())).orElse(null);
        if (session == null) {
            return Optional.of(new Opened.Unknown(sealed));
        }
        SessionMessage message;
        try {
            message = Sessions.open(session.requestKey(), sealed, SessionFrame.Direction.MINION_TO_MASTER);
        } catch (CryptoException | MalformedException | RuntimeException e) {
            LOG.debug("{} ({}): session frame dropped: {}", session, peer.remoteAddress(), e.getMessage());
            return Optional.empty();
        }
        if (!session.acceptCounter(sealed.counter())) {
            LOG.debug("{} ({}): replayed session frame {} dropped", session, peer.remoteAddress(), sealed.counter());
            return Optional.empty();
        }
        return Optional.of(new Opened.Authentic(session, message));
    }

    /** The answers to a minion's heartbeat: the current generation, and its key when the minion holds another. */
    public List<SessionMessage> heartbeat(SessionMessage.Heartbeat heartbeat) {
        long current = keyring.current().number();
        SessionMessage.HeartbeatReply reply = new SessionMessage.HeartbeatReply(current);
        return heartbeat.generation() == current ? List.of(reply) : List.of(reply, keyring.keyUpdate());
    }

    /** The answer to a key request: the current generation's key, never an older one (PROTOCOL.md 8.5). */
    public SessionMessage.KeyUpdate keyRequest() {
        return keyring.keyUpdate();
    }

    /** The signed answer to a frame of an unknown session: authenticate again. Costs a private-key operation. */
    public byte[] unknown(Opened.Unknown unknown) {
        SessionFrame sealed = unknown.frame();
        return Codec.encodeSigned(new SessionUnknown(sealed.sessionId(), sealed.counter(), clock.millis()),
                masterKey);
    }
}

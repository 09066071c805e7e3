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
import java.util.function.Supplier;
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

        /**
         * An authentic message, not seen before, in {@code session}, of the direction the session's kind sends: the
         * codec refused any other as malformed.
         */
        sealed interface Authentic extends Opened {
            Session session();

            SessionMessage message();
        }

        /** A minion's message in its session. */
        record FromMinion(MinionSession session, SessionMessage.FromMinion message) implements Authentic {}

        /** A publisher's message in its session. */
        record FromPublisher(PublisherSession session, SessionMessage.FromPublisher message) implements Authentic {}

        /** No session has this id (the master restarted, or closed the session): the sender must authenticate. */
        record Unknown(SessionFrame frame) implements Opened {}

        /**
         * Dropped: the wrong direction, a box that does not open (forged, damaged, or malformed inside), a replay.
         * {@code reason} names no counter or other per-frame value, so that the dispatcher's throttled log keeps one
         * line per reason and source.
         */
        record Dropped(String reason) implements Opened {}
    }

    private final SessionTable sessions;
    private final PublishKeyring keyring;
    private final Supplier<PrivateKey> masterKey;
    private final Clock clock;

    /** {@code masterKey} signs SessionUnknown: a rotated master's previous key within its grace (PROTOCOL.md 6.4). */
    public SessionService(SessionTable sessions, PublishKeyring keyring, Supplier<PrivateKey> masterKey, Clock clock) {
        this.sessions = sessions;
        this.keyring = keyring;
        this.masterKey = masterKey;
        this.clock = clock;
    }

    /**
     * Whether a session by this id is open: a map lookup, for a transport thread. Session ids are random and never
     * reused, so an id unknown now stays unknown.
     */
    public boolean knows(byte[] sessionId) {
        return sessions.bySessionId(SessionId.of(sessionId)).isPresent();
    }

    /** Opens {@code sealed}: authentic, of an unknown session, or dropped with its reason (the caller logs it). */
    public Opened open(Peer peer, SessionFrame sealed) {
        if (sealed.direction() != SessionFrame.Direction.MINION_TO_MASTER) {
            return new Opened.Dropped("a session frame that is not minion-to-master");
        }
        Session session = sessions.bySessionId(SessionId.of(sealed.sessionId())).orElse(null);
        if (session == null) {
            return new Opened.Unknown(sealed);
        }
        Opened opened;
        try {
            // Exhaustive over the sealed Session; each kind opens only its own direction's messages.
            if (session instanceof MinionSession minion) {
                opened = new Opened.FromMinion(
                        minion, Sessions.open(session.requestKey(), sealed, SessionMessage.FromMinion.class));
            } else {
                opened = new Opened.FromPublisher(
                        (PublisherSession) session,
                        Sessions.open(session.requestKey(), sealed, SessionMessage.FromPublisher.class));
            }
        } catch (MalformedException.WrongDirection e) {
            // Authentic, but not a message this kind of session carries: its own line in the dispatcher's log.
            return new Opened.Dropped(session + ": " + e.getMessage());
        } catch (CryptoException | MalformedException | RuntimeException e) {
            LOG.debug("{} ({}): session frame dropped: {}", session, peer.remoteAddress(), e.getMessage());
            return new Opened.Dropped(session + ": a session frame that does not open (forged, damaged or malformed)");
        }
        if (!session.acceptCounter(sealed.counter())) {
            return new Opened.Dropped(session + ": a replayed session frame");
        }
        return opened;
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
        return Codec.encodeSigned(
                new SessionUnknown(sealed.sessionId(), sealed.counter(), clock.millis()), masterKey.get());
    }
}

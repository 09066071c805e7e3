package io.brine.master.session;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionUnknown;
import io.brine.protocol.codec.FrameLimits;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import java.security.PrivateKey;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Session frames from accepted minions (PROTOCOL.md, "Session frames"): opens them with the sender's request key,
 * whose session alone says who the sender is, drops replays, and answers heartbeats and key requests. Returns and
 * grains go to the {@link Inbox}.
 */
public final class SessionService {

    private static final Logger LOG = LoggerFactory.getLogger(SessionService.class);

    /** What the rest of the master does with authenticated minion messages. Called on worker threads. */
    public interface Inbox {

        /** A job return from {@code minionId}; run {@code ack} once it is stored, and the minion stops resending. */
        void onReturn(String minionId, SessionMessage.Return ret, Runnable ack);

        void onGrains(String minionId, SessionMessage.Grains grains);
    }

    private final SessionTable sessions;
    private final PublishKeyring keyring;
    private final ServerTransport transport;
    private final PrivateKey masterKey;
    private final Predicate<String> unknownSessionLimiter;
    private final Inbox inbox;
    private final BiPredicate<Peer, SessionFrame> otherSessions;
    private final Clock clock;

    public SessionService(SessionTable sessions, PublishKeyring keyring, ServerTransport transport,
            PrivateKey masterKey, Predicate<String> unknownSessionLimiter, Inbox inbox,
            BiPredicate<Peer, SessionFrame> otherSessions, Clock clock) {
        this.otherSessions = otherSessions;
        this.sessions = sessions;
        this.keyring = keyring;
        this.transport = transport;
        this.masterKey = masterKey;
        this.unknownSessionLimiter = unknownSessionLimiter;
        this.inbox = inbox;
        this.clock = clock;
    }

    public void handle(Peer peer, byte[] frame) {
        Decoded decoded = Codec.decode(frame, FrameLimits.MAX_FRAME);
        if (!(decoded instanceof Decoded.Ok ok) || !(ok.message() instanceof SessionFrame sealed)
                || sealed.direction() != SessionFrame.Direction.MINION_TO_MASTER) {
            LOG.debug("Session frame from {} dropped: {}", peer.remoteAddress(),
                    decoded instanceof Decoded.Malformed m ? m.reason() : "not a minion-to-master session frame");
            return;
        }
        MinionSession session = sessions.bySessionId(SessionId.of(sealed.sessionId())).orElse(null);
        if (session == null) {
            // Not a minion's: perhaps a publisher's session; else the sender must authenticate again.
            if (!otherSessions.test(peer, sealed)) {
                answerUnknown(peer, sealed);
            }
            return;
        }
        SessionMessage message;
        try {
            message = Sessions.open(session.requestKey(), sealed, SessionFrame.Direction.MINION_TO_MASTER);
        } catch (CryptoException | RuntimeException | io.brine.protocol.codec.MalformedException e) {
            LOG.debug("Minion {} ({}): session frame dropped: {}", session.minionId(), peer.remoteAddress(),
                    e.getMessage());
            return;
        }
        if (!session.acceptCounter(sealed.counter())) {
            LOG.debug("Minion {} ({}): replayed session frame {} dropped", session.minionId(), peer.remoteAddress(),
                    sealed.counter());
            return;
        }
        if (!peer.equals(session.peer())) {
            transport.bind(session.minionId(), peer);
        }
        session.seen(peer, clock.millis());
        switch (message.type()) {
            case HEARTBEAT -> {
                SessionMessage.Heartbeat heartbeat = (SessionMessage.Heartbeat) message;
                reply(session, new SessionMessage.HeartbeatReply(keyring.current().number()));
                if (heartbeat.generation() != keyring.current().number()) {
                    reply(session, keyUpdate());
                }
            }
            case KEY_REQUEST -> reply(session, keyUpdate());
            case GRAINS -> inbox.onGrains(session.minionId(), (SessionMessage.Grains) message);
            case RETURN -> {
                SessionMessage.Return ret = (SessionMessage.Return) message;
                inbox.onReturn(session.minionId(), ret,
                        () -> reply(session, new SessionMessage.Ack(List.of(ret.jid()))));
            }
            default -> LOG.debug("Minion {}: unexpected {} dropped", session.minionId(), message.type());
        }
    }

    /** The current generation's key and serial floor, for one minion's session. */
    public SessionMessage.KeyUpdate keyUpdate() {
        PublishKeyring.Generation generation = keyring.current();
        return new SessionMessage.KeyUpdate(generation.number(), generation.key().bytes(), keyring.serialFloor());
    }

    /** Seals {@code message} for {@code session} and sends it on the request channel, to the peer it last used. */
    public boolean reply(MinionSession session, SessionMessage message) {
        return transport.send(session.peer(), seal(session, message));
    }

    /** Seals {@code message} for {@code session} and sends it on the minion's publish topic. */
    public Set<String> push(MinionSession session, SessionMessage message) {
        return transport.publish(List.of(session.minionId()), seal(session, message));
    }

    private byte[] seal(MinionSession session, SessionMessage message) {
        SessionFrame sealed = Sessions.seal(session.requestKey(), session.sessionId().bytes(),
                SessionFrame.Direction.MASTER_TO_MINION, session.nextSendCounter(), message);
        return Codec.encode(sealed);
    }

    private void answerUnknown(Peer peer, SessionFrame sealed) {
        // Signing costs a private-key operation, so unknown sessions share the auth rate limit per source.
        if (!unknownSessionLimiter.test(peer.remoteAddress())) {
            LOG.debug("Unknown session from {} dropped: over the rate limit", peer.remoteAddress());
            return;
        }
        LOG.debug("Unknown session from {}: asking it to authenticate again", peer.remoteAddress());
        transport.send(peer, Codec.encodeSigned(new SessionUnknown(sealed.sessionId(), sealed.counter(),
                clock.millis()), masterKey));
    }
}

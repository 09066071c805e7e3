package io.brine.master.session;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.brine.daemon.config.MasterConfig;
import io.brine.protocol.crypto.SessionKey;
import io.brine.transport.Peer;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every open session, minions' and publishers', by session id: the one place a session frame's sender is looked
 * up. At most one session per minion: a new auth replaces the old session, and removing a minion forgets its
 * request key, so nothing sealed for it later can reach it. Publisher sessions are bounded in number and end after
 * an hour unused, as nothing else ends them.
 */
public final class SessionTable {

    static final int MAX_PUBLISHER_SESSIONS = 10_000;
    static final Duration PUBLISHER_IDLE = Duration.ofHours(1);

    private final ConcurrentHashMap<SessionId, MinionSession> bySessionId = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, MinionSession> byMinion = new ConcurrentHashMap<>();
    private final Cache<SessionId, PublisherSession> publishers = Caffeine.newBuilder()
            .maximumSize(MAX_PUBLISHER_SESSIONS)
            .expireAfterAccess(PUBLISHER_IDLE)
            .build();

    /** Opens a fresh session for {@code minionId}, replacing any previous one. */
    public MinionSession open(String minionId, RSAPublicKey publicKey, Peer peer, long nowMs) {
        return open(minionId, publicKey, peer, nowMs, Long.MIN_VALUE, true).orElseThrow();
    }

    /**
     * Opens a fresh session for {@code minionId} made by an auth request dated {@code authTimestampMs}, replacing
     * the previous one when that was made by an older request or holds another key: empty, and nothing changed,
     * otherwise. A captured request, replayed, never takes a session from the request of its key that came after it
     * (PROTOCOL.md 8.1); a session of another key is never the newer one, since the caller opens only for a key the
     * store accepted (a stale request of a removed key that replaces it is refused after the open, by the caller's
     * check of its key, and the minion of the accepted key signs in again).
     */
    public Optional<MinionSession> open(
            String minionId, RSAPublicKey publicKey, Peer peer, long nowMs, long authTimestampMs) {
        return open(minionId, publicKey, peer, nowMs, authTimestampMs, false);
    }

    private Optional<MinionSession> open(
            String minionId, RSAPublicKey publicKey, Peer peer, long nowMs, long authTimestampMs, boolean always) {
        MinionSession[] replaced = new MinionSession[1];
        MinionSession[] opened = new MinionSession[1];
        byMinion.compute(minionId, (id, previous) -> {
            if (!always
                    && previous != null
                    && previous.holds(publicKey)
                    && previous.authTimestampMs() >= authTimestampMs) {
                return previous;
            }
            opened[0] = new MinionSession(
                    minionId, SessionId.random(), SessionKey.random(), publicKey, peer, nowMs, authTimestampMs);
            bySessionId.put(opened[0].sessionId(), opened[0]);
            replaced[0] = previous;
            return opened[0];
        });
        if (replaced[0] != null) {
            bySessionId.remove(replaced[0].sessionId(), replaced[0]);
            replaced[0].close();
        }
        return Optional.ofNullable(opened[0]);
    }

    /** Opens a fresh session for publisher {@code name}; its earlier sessions stay until they idle out. */
    public PublisherSession openPublisher(String name, Optional<MasterConfig.PublisherAcl> acl, Peer peer) {
        PublisherSession session = new PublisherSession(name, SessionId.random(), SessionKey.random(), acl, peer);
        publishers.put(session.sessionId(), session);
        return session;
    }

    /** The session, a minion's or a publisher's, that {@code id} names. */
    public Optional<Session> bySessionId(SessionId id) {
        Session session = bySessionId.get(id);
        return Optional.ofNullable(session != null ? session : publishers.getIfPresent(id));
    }

    public Optional<MinionSession> byMinion(String minionId) {
        return Optional.ofNullable(byMinion.get(minionId));
    }

    /** Forgets the minion's session; returns whether there was one. */
    public boolean remove(String minionId) {
        MinionSession session = byMinion.remove(minionId);
        if (session == null) {
            return false;
        }
        bySessionId.remove(session.sessionId(), session);
        session.close();
        return true;
    }

    /** Forgets {@code session} if it is still its minion's session; returns whether it was. */
    public boolean remove(MinionSession session) {
        if (!byMinion.remove(session.minionId(), session)) {
            return false;
        }
        bySessionId.remove(session.sessionId(), session);
        session.close();
        return true;
    }

    /** A snapshot of the minions' open sessions. */
    public List<MinionSession> all() {
        return new ArrayList<>(byMinion.values());
    }

    /** Minions with an open session. */
    public int size() {
        return byMinion.size();
    }
}

package io.brine.master.session;

import io.brine.protocol.crypto.SessionKey;
import io.brine.transport.Peer;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The sessions of accepted minions, at most one per minion: a new auth replaces the old session, and removing a
 * minion forgets its request key, so nothing sealed for it later can reach it.
 */
public final class SessionTable {

    private final ConcurrentHashMap<SessionId, MinionSession> bySessionId = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, MinionSession> byMinion = new ConcurrentHashMap<>();

    /** Opens a fresh session for {@code minionId}, replacing any previous one. */
    public MinionSession open(String minionId, RSAPublicKey publicKey, Peer peer, long nowMs) {
        MinionSession session = new MinionSession(minionId, SessionId.random(), SessionKey.random(), publicKey, peer,
                nowMs);
        bySessionId.put(session.sessionId(), session);
        MinionSession previous = byMinion.put(minionId, session);
        if (previous != null) {
            bySessionId.remove(previous.sessionId(), previous);
            previous.close();
        }
        return session;
    }

    public Optional<MinionSession> bySessionId(SessionId id) {
        return Optional.ofNullable(bySessionId.get(id));
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

    /** A snapshot of the open sessions. */
    public List<MinionSession> all() {
        return new ArrayList<>(byMinion.values());
    }

    public int size() {
        return byMinion.size();
    }
}

package io.brine.master;

import io.brine.transport.Peer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Which frames of unknown sessions earn a signed {@code SessionUnknown} (PROTOCOL.md 8.4), each a private-key
 * operation. After a master restart every minion's transport delivers the frames it queued while the master was down
 * (heartbeats, returns) on its new connection, then the minion resumes or authenticates on that same connection,
 * which makes the answer useless: before this, each such frame cost a signature (at 1,000 minions, most of the
 * restarted master's CPU). So an answer waits {@code grace}, and is not sent when the connection has asked for a
 * session (an auth or resumption request) meanwhile; at most one waits per connection, and a connection that asked
 * gets none for its other frames of unknown sessions within the grace. Both calls are made on the connection's
 * transport thread, in the order its frames arrived. At most {@code capacity} connections are followed at once;
 * past that, an answer goes at once, as before.
 */
final class UnknownSessionAnswers {

    /** How long an answer waits for its connection to ask for a session. */
    static final Duration GRACE = Duration.ofSeconds(2);
    /** Connections followed at once. */
    static final int CAPACITY = 100_000;

    /** Runs a task after a delay, on a thread that is not a transport's. */
    interface Later {
        void after(Duration delay, Runnable task);
    }

    private enum State {
        WAITING,
        ASKED
    }

    private final ConcurrentHashMap<Peer, State> connections = new ConcurrentHashMap<>();
    private final Duration grace;
    private final int capacity;
    private final Later later;
    private final AtomicLong spared = new AtomicLong();

    UnknownSessionAnswers(Duration grace, int capacity, Later later) {
        this.grace = grace;
        this.capacity = capacity;
        this.later = later;
    }

    /**
     * A frame of an unknown session from {@code peer}: {@code answer} runs once the grace has passed unless the
     * connection asked for a session meanwhile; not at all when an answer already waits for this connection or it
     * asked within the grace; at once when {@code capacity} connections are already followed.
     */
    void unknown(Peer peer, Runnable answer) {
        if (connections.size() >= capacity && !connections.containsKey(peer)) {
            answer.run();
            return;
        }
        if (connections.putIfAbsent(peer, State.WAITING) != null) {
            spared.incrementAndGet();
            return;
        }
        later.after(grace, () -> {
            if (connections.remove(peer, State.WAITING)) {
                answer.run();
            } else {
                connections.remove(peer);
                spared.incrementAndGet();
            }
        });
    }

    /** {@code peer} sent an auth or resumption request: the answer waiting for it, if any, is not sent. */
    void asked(Peer peer) {
        connections.computeIfPresent(peer, (p, state) -> State.ASKED);
    }

    /** Frames of unknown sessions left unanswered because their connection asked for a session. */
    long spared() {
        return spared.get();
    }

    /** Connections followed now. */
    int following() {
        return connections.size();
    }
}

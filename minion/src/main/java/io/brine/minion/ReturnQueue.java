package io.brine.minion;

import io.brine.protocol.message.SessionMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Returns not yet acknowledged by the master, oldest first. Bounded: past {@code capacity} the oldest return is
 * dropped (and logged by the caller), never memory without bound. Confined to the minion's event thread.
 */
final class ReturnQueue {

    record Pending(SessionMessage.Return ret, long firstSentMs, long nextSendMs, int attempts) {
    }

    private final LinkedHashMap<String, Pending> pending = new LinkedHashMap<>();
    private final int capacity;

    ReturnQueue(int capacity) {
        this.capacity = capacity;
    }

    /** Adds a return; returns the one evicted to make room, if any. */
    SessionMessage.Return add(SessionMessage.Return ret, long nowMs) {
        SessionMessage.Return evicted = null;
        if (pending.size() >= capacity && !pending.containsKey(ret.jid())) {
            Map.Entry<String, Pending> oldest = pending.entrySet().iterator().next();
            evicted = oldest.getValue().ret();
            pending.remove(oldest.getKey());
        }
        pending.put(ret.jid(), new Pending(ret, nowMs, nowMs, 0));
        return evicted;
    }

    void ack(List<String> jids) {
        jids.forEach(pending::remove);
    }

    /** Returns due for (re)sending, marking them sent with a doubled delay, capped at {@code maxDelayMs}. */
    List<SessionMessage.Return> due(long nowMs, long baseDelayMs, long maxDelayMs) {
        List<SessionMessage.Return> due = new ArrayList<>();
        for (Map.Entry<String, Pending> entry : pending.entrySet()) {
            Pending p = entry.getValue();
            if (p.nextSendMs() <= nowMs) {
                long delay = Math.min(maxDelayMs, baseDelayMs << Math.min(p.attempts(), 20));
                entry.setValue(new Pending(p.ret(), p.firstSentMs(), nowMs + delay, p.attempts() + 1));
                due.add(p.ret());
            }
        }
        return due;
    }

    /** Makes every pending return due now (after a new session). */
    void resendAll(long nowMs) {
        pending.replaceAll((jid, p) -> new Pending(p.ret(), p.firstSentMs(), nowMs, 0));
    }

    /** When the next pending return is due, if any. */
    OptionalLong nextDueMs() {
        return pending.values().stream().mapToLong(Pending::nextSendMs).min();
    }

    int size() {
        return pending.size();
    }
}

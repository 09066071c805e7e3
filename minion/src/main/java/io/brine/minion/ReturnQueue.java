package io.brine.minion;

import io.brine.protocol.message.SessionMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Returns not yet acknowledged by the master, oldest first. Bounded: past {@code capacity} the oldest return is
 * dropped (and logged by the caller), never memory without bound. Confined to the minion's event thread, but for
 * the counts the metrics endpoint reads from its own threads ({@link #queued()}, {@link #resent()},
 * {@link #evicted()}).
 */
final class ReturnQueue {

    record Pending(SessionMessage.Return ret, long firstSentMs, long nextSendMs, int attempts) {}

    private final LinkedHashMap<String, Pending> pending = new LinkedHashMap<>();
    private final int capacity;
    private final AtomicLong queued = new AtomicLong();
    private final AtomicLong resent = new AtomicLong();
    private final AtomicLong evicted = new AtomicLong();

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
            this.evicted.incrementAndGet();
        }
        pending.put(ret.jid(), new Pending(ret, nowMs, nowMs, 0));
        queued.set(pending.size());
        return evicted;
    }

    void ack(List<String> jids) {
        jids.forEach(pending::remove);
        queued.set(pending.size());
    }

    /** Returns due for (re)sending, marking them sent with a doubled delay, capped at {@code maxDelayMs}. */
    List<SessionMessage.Return> due(long nowMs, long baseDelayMs, long maxDelayMs) {
        List<SessionMessage.Return> due = new ArrayList<>();
        for (Map.Entry<String, Pending> entry : pending.entrySet()) {
            Pending p = entry.getValue();
            if (p.nextSendMs() <= nowMs) {
                long delay = Math.min(maxDelayMs, baseDelayMs << Math.min(p.attempts(), 20));
                entry.setValue(new Pending(p.ret(), p.firstSentMs(), nowMs + delay, p.attempts() + 1));
                if (p.attempts() > 0) {
                    resent.incrementAndGet();
                }
                due.add(p.ret());
            }
        }
        return due;
    }

    /** Makes every pending return due now (after a new session). */
    void resendAll(long nowMs) {
        resent.addAndGet(pending.values().stream().filter(p -> p.attempts() > 0).count()); // sent before: resends
        pending.replaceAll((jid, p) -> new Pending(p.ret(), p.firstSentMs(), nowMs, 0));
    }

    /** When the next pending return is due, if any. */
    OptionalLong nextDueMs() {
        return pending.values().stream().mapToLong(Pending::nextSendMs).min();
    }

    int size() {
        return pending.size();
    }

    /** Returns waiting for the master's acknowledgement now. */
    long queued() {
        return queued.get();
    }

    /** Sends of a return after its first, since the start. */
    long resent() {
        return resent.get();
    }

    /** Returns dropped unacknowledged to make room, since the start. */
    long evicted() {
        return evicted.get();
    }
}

package io.brine.master.auth;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Which pending answers repeat the last one given to an id: a pending minion asks again every
 * {@code acceptance_wait_time} (30 s by default), and 5,000 of them wrote 10,000 log and audit lines a minute that
 * said nothing new. A pending answer is recorded when it is the first for its id since the master started, or when
 * the key or the reason changed; the repeats are counted ({@code brine_auth_answers_total{outcome="pending"}}), not
 * written. Any other answer to the id forgets it, so a key pending again after a reject or a delete is written again.
 *
 * <p>Bounded: it remembers the last {@code capacity} ids (least recently answered forgotten first), so a flood of
 * made-up ids costs what it cost before (a line each), never memory. Thread-safe.
 */
public final class RepeatedPending {

    /** The default bound: more pending ids than any {@code max_pending} in use remembers. */
    public static final int DEFAULT_CAPACITY = 100_000;

    private record Last(String fingerprint, String reason) {}

    private final Map<String, Last> last;

    public RepeatedPending(int capacity) {
        this.last = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Last> eldest) {
                return size() > capacity;
            }
        };
    }

    /** Whether this pending answer to {@code id} says what the last one said (and so is not worth a line). */
    public synchronized boolean repeats(String id, String fingerprint, String reason) {
        Last now = new Last(fingerprint, reason);
        Last before = last.put(id, now);
        return now.equals(before);
    }

    /** An answer other than pending was given to {@code id}. */
    public synchronized void forget(String id) {
        last.remove(id);
    }
}

package io.brine.master.resume;

import java.time.Clock;
import java.time.Duration;
import java.util.function.BiConsumer;
import org.slf4j.Logger;

/**
 * What a default-level master logs of the minions that resume: a resumption after a quiet second is one INFO line
 * naming the minion, as before; while more follow (a restart: a whole fleet within seconds), they are counted and
 * told in one INFO line a second, and each minion's own line is logged at DEBUG. Nothing is left untold: a count
 * waits at most {@link #INTERVAL} (or, should its line's task never run, until the first resumption two intervals
 * on). Each resumption is still audited one by one ({@code auth-resumed}); refusals are logged apart.
 */
final class ResumptionLog {

    /** At most one INFO line per interval while minions resume. */
    static final Duration INTERVAL = Duration.ofSeconds(1);

    private final Logger log;
    private final Clock clock;
    private final BiConsumer<Duration, Runnable> later;
    private final Object lock = new Object();

    /** Guarded by {@link #lock}: until then a resumption is counted, not logged at INFO. */
    private long quietAtMs = Long.MIN_VALUE;
    /** Guarded by {@link #lock}: resumptions counted and not yet told, and when the first of them came. */
    private long counted;

    private long countedSinceMs;

    /**
     * @param later runs a task once after a delay: the count's line
     */
    ResumptionLog(Logger log, Clock clock, BiConsumer<Duration, Runnable> later) {
        this.log = log;
        this.clock = clock;
        this.later = later;
    }

    /** Minion {@code id} resumed from {@code address}. */
    void resumed(String id, Object address) {
        boolean alone;
        boolean tellLater = false;
        boolean overdue;
        synchronized (lock) {
            long now = clock.millis();
            // The count's line is the later task's; if that task never ran (it was lost, or its thread could not be
            // started on a master at its limits), the count is told here, or every minion would stay at DEBUG.
            overdue = counted > 0 && now - countedSinceMs >= 2 * INTERVAL.toMillis();
            alone = counted == 0 && now >= quietAtMs;
            if (alone) {
                quietAtMs = now + INTERVAL.toMillis();
            } else if (counted++ == 0) {
                countedSinceMs = now;
                tellLater = true;
            }
        }
        if (alone) {
            log.info("Minion {} ({}): resumed with a ticket", id, address);
        } else {
            log.debug("Minion {} ({}): resumed with a ticket", id, address);
        }
        if (tellLater) {
            later.accept(INTERVAL, this::tell);
        }
        if (overdue) {
            tell();
        }
    }

    /** Tells what was counted since the last line, and keeps counting for another interval. */
    private void tell() {
        long told;
        long sinceMs;
        long now;
        synchronized (lock) {
            told = counted;
            sinceMs = countedSinceMs;
            now = clock.millis();
            counted = 0;
            quietAtMs = now + INTERVAL.toMillis();
        }
        if (told > 0) {
            log.info(
                    "{} more minion{} resumed with a ticket in {} ms (each minion's line at DEBUG)",
                    told,
                    told == 1 ? "" : "s",
                    Math.max(0, now - sinceMs));
        }
    }
}

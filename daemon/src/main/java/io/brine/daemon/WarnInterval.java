package io.brine.daemon;

import java.time.Clock;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * At most one WARN per interval for a condition a stranger can cause at will (a bad key, a full disk under a flood
 * of new minions): the first occurrence is logged, later ones within the interval are counted and the count is told
 * with the next line.
 */
public final class WarnInterval {

    private final Clock clock;
    private final long intervalMs;
    private final AtomicLong nextAtMs = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong suppressed = new AtomicLong();

    public WarnInterval(Clock clock, long intervalMs) {
        this.clock = clock;
        this.intervalMs = intervalMs;
    }

    /**
     * Whether to log now; when it is, the number of occurrences not logged since the last line (else -1).
     */
    public long due() {
        long now = clock.millis();
        long next = nextAtMs.get();
        if ((next == Long.MIN_VALUE || now >= next) && nextAtMs.compareAndSet(next, now + intervalMs)) {
            return suppressed.getAndSet(0);
        }
        suppressed.incrementAndGet();
        return -1;
    }

    /**
     * Logs {@code format} with {@code args} at WARN when {@link #due}, the count of the lines not logged since the
     * last one appended ("(and N more since the last line)").
     */
    public void warn(Logger log, String format, Object... args) {
        long suppressed = due();
        if (suppressed >= 0) {
            Object[] all = Arrays.copyOf(args, args.length + 1);
            all[args.length] = suppressed > 0 ? " (and " + suppressed + " more since the last line)" : "";
            log.warn(format + "{}", all);
        }
    }
}

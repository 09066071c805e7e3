package io.brine.minion;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;

/**
 * At most one WARN line per reason and interval, with how many events it stands for: what a peer can trigger at will
 * (forged auth replies, stale publications, returns the master refuses) is logged so that an admin sees it, but a flood cannot fill the disk
 * through the log.
 *
 * <p>Confined to the minion's event thread.
 */
final class WarnThrottle {

    /** How often each reason may be logged. */
    static final Duration INTERVAL = Duration.ofMinutes(1);

    /** What may be logged; each has its own interval. */
    enum Reason {
        FORGED_AUTH_REPLY,
        OTHER_MASTER_KEY,
        UNVERIFIED_REJECTION,
        STALE_PUBLICATION,
        RETURN_REFUSED
    }

    private final Clock clock;
    private final Map<Reason, Instant> lastLogged = new EnumMap<>(Reason.class);
    private final Map<Reason, Long> unlogged = new EnumMap<>(Reason.class);

    WarnThrottle(Clock clock) {
        this.clock = clock;
    }

    /**
     * Counts one event of {@code reason}.
     *
     * @return 0 when no line is due yet; otherwise the number of events the line stands for (this one and those
     *         not logged since the last line)
     */
    long count(Reason reason) {
        long events = unlogged.merge(reason, 1L, Long::sum);
        Instant now = clock.instant();
        Instant last = lastLogged.get(reason);
        if (last != null && now.isBefore(last.plus(INTERVAL))) {
            return 0;
        }
        lastLogged.put(reason, now);
        unlogged.remove(reason);
        return events;
    }
}

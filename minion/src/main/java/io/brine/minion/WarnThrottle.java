package io.brine.minion;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import org.slf4j.Logger;

/**
 * At most one WARN line per reason and interval, with how many events it stands for: what a peer can trigger at will
 * (forged auth replies, forged, replayed, reordered or stale publications, frames that do not open, returns the
 * master refuses) is logged so that an admin sees it, but a flood cannot fill the disk through the log. A minion
 * talks to one master at a time, so per reason is per reason and source: the minion's side of the master's
 * {@code DropLog}.
 *
 * <p>Thread-safe; each owner keeps its own.
 */
public final class WarnThrottle {

    /** How often each reason may be logged. */
    static final Duration INTERVAL = Duration.ofMinutes(1);

    /** What may be logged; each has its own interval. */
    public enum Reason {
        FORGED_AUTH_REPLY,
        OTHER_MASTER_KEY,
        UNVERIFIED_REJECTION,
        STALE_PUBLICATION,
        RETURN_REFUSED,
        /** An auth reply to no outstanding request: late, or replayed. */
        UNANSWERED_AUTH_REPLY,
        /** A frame the codec refuses, or a message the master never sends. */
        MALFORMED_FRAME,
        FORGED_PUBLICATION,
        REPLAYED_PUBLICATION,
        /** A publication that came after too many newer ones, or after its generation was replaced. */
        REORDERED_PUBLICATION,
        /** A publication held for its generation's key, dropped before the key came. */
        UNKEYED_PUBLICATION,
        UNOPENED_PUBLICATION,
        PUBLICATION_WITHOUT_SESSION,
        /** A signed publication whose target does not cover this minion. */
        NOT_TARGETED,
        /** A session frame that does not open, is for another session, or is a replay. */
        SESSION_FRAME
    }

    private final Clock clock;
    private final Map<Reason, Instant> lastLogged = new EnumMap<>(Reason.class);
    private final Map<Reason, Long> unlogged = new EnumMap<>(Reason.class);

    public WarnThrottle(Clock clock) {
        this.clock = clock;
    }

    /**
     * Counts one event of {@code reason}.
     *
     * @return 0 when no line is due yet; otherwise the number of events the line stands for (this one and those
     *         not logged since the last line)
     */
    synchronized long count(Reason reason) {
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

    /**
     * Counts one event of {@code reason} and, when a line is due, logs {@code message} with {@code args} at WARN,
     * followed by how many events the line stands for. Text from the master in {@code args} must be escaped.
     */
    public void warn(Logger log, Reason reason, String message, Object... args) {
        long events = count(reason);
        if (events > 0) {
            Object[] all = Arrays.copyOf(args, args.length + 2);
            all[args.length] = events;
            all[args.length + 1] = INTERVAL.toSeconds();
            log.warn(message + " ({} like it since the last line; one line per {} s at most)", all);
        }
    }
}

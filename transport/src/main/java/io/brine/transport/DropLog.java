package io.brine.transport;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Clock;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * What a default-level master records of frames it drops or refuses: one WARN line per reason and source address
 * per interval, with the count, never a line per frame, so that a flood cannot fill the disk through the log.
 * Reasons and sources are escaped (no control characters, no line breaks) and truncated: they may carry what an
 * attacker sent. The (source, reason) pairs remembered are bounded; past the bound, pairs share one line per reason.
 * The master's dispatcher and Salt service use it for frames they decode and refuse; the transports for frames they
 * refuse at the header (a length over the connection's limit, bytes that are not the protocol), master and minion
 * side alike, so that nothing a peer sends is dropped without a line.
 */
public final class DropLog {

    /** How often one (source, reason) pair may be logged, unless a caller chooses otherwise. */
    public static final Duration INTERVAL = Duration.ofMinutes(1);

    static final int MAX_TEXT = 160;
    static final int MAX_PAIRS = 10_000;

    private final Logger log;
    private final Duration interval;
    private final Clock clock;
    private final Cache<String, Window> windows;

    private static final class Window {
        long startMs;
        long count;

        Window(long startMs) {
            this.startMs = startMs;
        }
    }

    /** At most one line per {@link #INTERVAL} for each (source, reason), by the system clock. */
    public DropLog(Logger log) {
        this(log, INTERVAL, Clock.systemUTC());
    }

    public DropLog(Logger log, Duration interval, Clock clock) {
        this.log = log;
        this.interval = interval;
        this.clock = clock;
        this.windows = Caffeine.newBuilder()
                .maximumSize(MAX_PAIRS)
                .expireAfterAccess(interval.multipliedBy(2))
                .build();
    }

    /** One frame from {@code source} dropped for {@code reason}. */
    public void dropped(String source, String reason) {
        dropped(source, reason, null);
    }

    /**
     * One frame from {@code source} dropped for {@code reason}, with a {@code detail} that varies from frame to frame
     * (an announced length): shown on the line that is logged, not part of what is counted, so that a peer varying
     * it still gets one line per interval.
     */
    public void dropped(String source, String reason, String detail) {
        String where = printable(source);
        String why = printable(reason);
        String key = where + '\u0000' + why;
        if (detail != null) {
            why += " (" + printable(detail) + ")";
        }
        long now = clock.millis();
        long[] report = {0};
        windows.asMap().compute(key, (k, window) -> {
            if (window == null) {
                report[0] = 1;
                return new Window(now);
            }
            window.count++;
            if (now - window.startMs >= interval.toMillis()) {
                report[0] = window.count;
                window.count = 0;
                window.startMs = now;
            }
            return window;
        });
        if (report[0] > 0) {
            log.warn(
                    "Frames from {} dropped: {} ({} since the last report; one line per {} s at most)",
                    where,
                    why,
                    report[0],
                    interval.toSeconds());
        }
    }

    /** {@code text} with control and non-ASCII characters escaped, cut at {@value #MAX_TEXT} characters. */
    static String printable(String text) {
        if (text == null) {
            return "?";
        }
        StringBuilder out = new StringBuilder(Math.min(text.length(), MAX_TEXT) + 8);
        for (int i = 0; i < text.length(); i++) {
            if (out.length() >= MAX_TEXT) {
                return out.append("...").toString();
            }
            char c = text.charAt(i);
            if (c >= 0x20 && c < 0x7f) {
                out.append(c);
            } else {
                out.append(String.format("\\u%04x", (int) c));
            }
        }
        return out.toString();
    }
}

package io.brine.master.jobs;

import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/**
 * Job ids in Salt's form: the UTC time to the microsecond, {@code 20261122031109123456}. Sortable as strings and
 * unique within a master: when two jobs fall in the same microsecond the later one takes the next microsecond.
 */
public final class JobIds {

    private static final DateTimeFormatter FORMAT = DateTimeFormatter.ofPattern("yyyyMMddHHmmssSSSSSS");

    private final Clock clock;
    private Instant last = Instant.EPOCH;

    public JobIds(Clock clock) {
        this.clock = clock;
    }

    public synchronized String next() {
        Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
        if (!now.isAfter(last)) {
            now = last.plus(1, ChronoUnit.MICROS);
        }
        last = now;
        return FORMAT.format(LocalDateTime.ofInstant(now, ZoneOffset.UTC));
    }

    /** True for strings of this form (20 digits): what the job cache accepts as a directory name. */
    public static boolean isValid(String jid) {
        return jid != null && jid.length() == 20 && jid.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    /** The time a jid names. */
    public static Instant time(String jid) {
        return LocalDateTime.parse(jid, FORMAT).toInstant(ZoneOffset.UTC);
    }
}

package io.brine.daemon.config;

import io.brine.protocol.MinionIds;
import java.util.Locale;
import java.util.Optional;

/** The daemons' log threshold, as named in their config files ({@code log_level: info}). */
public enum LogLevel {
    ERROR,
    WARN,
    INFO,
    DEBUG,
    TRACE;

    /** The name used in config files. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The level a daemon's {@code -l LEVEL} names: brine's own names, and Salt's as a Salt admin types them
     * ({@code warning}; {@code critical} is brine's error, {@code garbage} and {@code all} its trace, {@code profile}
     * its debug), any case. Empty for anything else, {@code quiet} too (a daemon's log is never silenced).
     */
    public static Optional<LogLevel> fromCommandLine(String name) {
        return Optional.ofNullable(
                switch (name.toLowerCase(Locale.ROOT)) {
                    case "error", "critical" -> ERROR;
                    case "warn", "warning" -> WARN;
                    case "info" -> INFO;
                    case "debug", "profile" -> DEBUG;
                    case "trace", "garbage", "all" -> TRACE;
                    default -> null;
                });
    }

    /** {@code -l LEVEL}, {@code --log-level LEVEL} of brine-master and brine-minion. */
    public static final class Converter implements picocli.CommandLine.ITypeConverter<LogLevel> {
        @Override
        public LogLevel convert(String value) {
            return fromCommandLine(value)
                    .orElseThrow(() -> new picocli.CommandLine.TypeConversionException(
                            "expected error, warning, info, debug or trace (Salt's critical, profile, garbage and all too),"
                                    + " not " + MinionIds.printable(value)));
        }
    }
}

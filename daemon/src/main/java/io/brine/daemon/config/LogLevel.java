package io.brine.daemon.config;

import java.util.Locale;

/** The daemons' log threshold, as named in their config files ({@code log_level: info}). */
public enum LogLevel {
    ERROR, WARN, INFO, DEBUG, TRACE;

    /** The name used in config files. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }
}

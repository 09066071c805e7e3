package io.brine.daemon.config;

import java.util.Locale;

/** How the operational log is written ({@code log_format}): text lines for people, JSON lines for log shippers. */
public enum LogFormat {
    TEXT,
    JSON;

    /** The name used in config files. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }
}

package io.brine.daemon.config;

import java.util.Locale;

/** The master's {@code key_rotation}: whether a minion may replace its accepted key by a key it proves it holds. */
public enum KeyRotationPolicy {
    /** The new key replaces the old one at once (the request is authenticated by the old key). */
    ALLOW,
    /**
     * The new key waits for an admin beside the accepted one (PROTOCOL.md 6.3): accepted, it replaces the old key as
     * {@link #ALLOW} would; rejected, the old key stays.
     */
    PENDING,
    /** Every rotation is refused, with a reason the minion logs. */
    DENY;

    /** The value as written in {@code master.yaml}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}

package io.brine.daemon.config;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;

/**
 * A configured secret (such as a minion's autosign token). It keeps the value out of {@code toString()}, so a
 * config record can be logged whole (DESIGN.md §4.9); only {@link #reveal()} gives it out.
 */
public final class Secret {

    private final String value;

    public Secret(String value) {
        this.value = Objects.requireNonNull(value, "value");
    }

    public String reveal() {
        return value;
    }

    /** Constant-time, so that comparing a presented secret does not leak how much of it matched. */
    @Override
    public boolean equals(Object o) {
        return o instanceof Secret other
                && MessageDigest.isEqual(
                        value.getBytes(StandardCharsets.UTF_8), other.value.getBytes(StandardCharsets.UTF_8));
    }

    /** Constant: a hash of the value would say something about it. */
    @Override
    public int hashCode() {
        return 0x5ec7e7;
    }

    @Override
    public String toString() {
        return "<redacted>";
    }
}

package io.brine.protocol.codec;

import java.util.Optional;

/**
 * The validator for job ids. A jid names files in the master's job cache and arrives from minions in returns, so it
 * is as strict as a minion id: 1 to 64 characters of {@code [A-Za-z0-9._-]}, starting with a letter or digit
 * (Salt's 20-digit jids and UUIDs both fit).
 */
public final class Jids {

    public static final int MAX_LENGTH = 64;

    private Jids() {}

    /** Why {@code jid} is not a valid jid, or empty when it is. */
    public static Optional<String> problem(String jid) {
        if (jid == null || jid.isEmpty()) {
            return Optional.of("jid is empty");
        }
        if (jid.length() > MAX_LENGTH) {
            return Optional.of("jid is longer than " + MAX_LENGTH + " characters");
        }
        for (int i = 0; i < jid.length(); i++) {
            char c = jid.charAt(i);
            boolean alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
            if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) {
                return Optional.of(
                        i == 0
                                ? "jid does not start with a letter or digit"
                                : String.format("jid has a character outside [A-Za-z0-9._-] at position %d", i));
            }
        }
        return Optional.empty();
    }

    public static boolean isValid(String jid) {
        return problem(jid).isEmpty();
    }
}

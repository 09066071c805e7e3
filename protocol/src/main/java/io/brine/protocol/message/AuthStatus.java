package io.brine.protocol.message;

import java.util.Optional;

/** The master's answer to an auth request. */
public enum AuthStatus {
    ACCEPTED(0),
    PENDING(1),
    REJECTED(2),
    DENIED(3),
    /** {@code max_minions} or {@code max_pending} reached. */
    FULL(4),
    /** The request was refused before a key decision: rate limit, bad signature, stale timestamp, bad suite. */
    REFUSED(5);

    private final int code;

    AuthStatus(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static Optional<AuthStatus> of(long code) {
        for (AuthStatus status : values()) {
            if (status.code == code) {
                return Optional.of(status);
            }
        }
        return Optional.empty();
    }
}

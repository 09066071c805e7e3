package io.brine.store.keys;

import java.util.Optional;

/**
 * The result of an admin operation on one key. {@code message} names the id and, unless {@link Status#DONE}, the
 * reason; it is safe to print.
 */
public record AdminResult(String id, Status status, Optional<KeyState> from, Optional<KeyState> to,
        String fingerprint, String message) {

    public enum Status {
        /** The key moved or was deleted. */
        DONE,
        /** The key already was where it was asked to go. */
        UNCHANGED,
        /** No key of the id in the state the operation starts from. */
        NOT_FOUND,
        /** The store refused: fingerprint mismatch, unreadable file, a limit, or a key that would be replaced. */
        REFUSED
    }

    static AdminResult done(String id, KeyState from, Optional<KeyState> to, String fingerprint, String message) {
        return new AdminResult(id, Status.DONE, Optional.of(from), to, fingerprint, message);
    }

    static AdminResult of(String id, Status status, String message) {
        return new AdminResult(id, status, Optional.empty(), Optional.empty(), null, message);
    }

    public boolean done() {
        return status == Status.DONE;
    }
}

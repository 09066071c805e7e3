package io.brine.store.keys;

import java.util.Optional;

/**
 * The result of an admin operation on one key. {@code message} names the id and, unless {@link Status#DONE}, the
 * reason; it is safe to print.
 */
public record AdminResult(
        String id, Status status, Optional<KeyState> from, Optional<KeyState> to, String fingerprint, String message) {

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

    /**
     * Refused: {@code id} now holds another key ({@code now}; null when it cannot be read), in {@code state}, than
     * the {@code from} key with fingerprint {@code expected} that the admin was shown or named (DESIGN.md §4.6):
     * an operation bound to one key never reports another key's state as its outcome.
     */
    public static AdminResult replaced(String id, KeyState state, String now, KeyState from, String expected) {
        return of(
                id,
                Status.REFUSED,
                id + ": the id now holds " + (state == KeyState.ACCEPTED ? "an " : "a ")
                        + state.label() + " key" + (now == null ? " that cannot be read" : " with fingerprint " + now)
                        + ", not the " + from.label() + " key " + expected + "; nothing changed");
    }

    public boolean done() {
        return status == Status.DONE;
    }
}

package io.brine.store.keys;

/**
 * The store's answer to an offered key. Callers switch over it exhaustively. {@code fingerprint} is always the
 * offered key's; {@code reason} is for logs and the audit trail and never holds key material.
 */
public sealed interface KeyDecision
        permits KeyDecision.Accepted,
                KeyDecision.Pending,
                KeyDecision.Rejected,
                KeyDecision.Denied,
                KeyDecision.Full,
                KeyDecision.OtherKind {

    String id();

    String reason();

    /** The offered key is the id's accepted key. */
    record Accepted(String id, String fingerprint, String reason) implements KeyDecision {}

    /** The offered key waits in {@code minions_pre/} for an admin. */
    record Pending(String id, String fingerprint, String reason) implements KeyDecision {}

    /** The id is rejected (by an admin or an autoreject policy). */
    record Rejected(String id, String fingerprint, String reason) implements KeyDecision {}

    /**
     * The offered key differs from the id's pending or accepted key; it was written to {@code minions_denied/} and
     * the stored key is untouched. {@code fingerprint} is the offered key's.
     */
    record Denied(String id, String fingerprint, String reason) implements KeyDecision {}

    /** A limit (pending keys, minions) is reached; nothing was written. */
    record Full(String id, String reason) implements KeyDecision {}

    /**
     * The id holds a key (pending, accepted or rejected) filed for another kind of minion ({@code held}) than the
     * offer's: nothing was written, no policy was asked. A Salt sign-in never takes over a brine minion's key, nor a
     * brine auth a Salt minion's; an admin changes a minion's kind by deleting its key.
     */
    record OtherKind(String id, String fingerprint, MinionKind held, String reason) implements KeyDecision {

        public OtherKind(String id, String fingerprint, MinionKind held) {
            this(
                    id,
                    fingerprint,
                    held,
                    "the id is held by a " + held.label() + " minion; an admin changes a"
                            + " minion's kind by deleting its key");
        }
    }
}

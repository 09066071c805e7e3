package io.brine.store.keys;

/**
 * The store's answer to an offered key. Callers switch over it exhaustively. {@code fingerprint} is always the
 * offered key's; {@code reason} is for logs and the audit trail and never holds key material.
 */
public sealed interface KeyDecision permits KeyDecision.Accepted, KeyDecision.Pending, KeyDecision.Rejected,
        KeyDecision.Denied, KeyDecision.Full {

    String id();

    String reason();

    /** The offered key is the id's accepted key. */
    record Accepted(String id, String fingerprint, String reason) implements KeyDecision {
    }

    /** The offered key waits in {@code minions_pre/} for an admin. */
    record Pending(String id, String fingerprint, String reason) implements KeyDecision {
    }

    /** The id is rejected (by an admin or an autoreject policy). */
    record Rejected(String id, String fingerprint, String reason) implements KeyDecision {
    }

    /**
     * The offered key differs from the id's pending or accepted key; it was written to {@code minions_denied/} and
     * the stored key is untouched. {@code fingerprint} is the offered key's.
     */
    record Denied(String id, String fingerprint, String reason) implements KeyDecision {
    }

    /** A limit (pending keys, minions) is reached; nothing was written. */
    record Full(String id, String reason) implements KeyDecision {
    }
}

package io.brine.store.keys;

/**
 * DESIGN.md §2's transition table as a pure function: given what the store holds for an id and what the policies
 * concluded, what the master answers and what it writes. The {@link KeyStore} applies the outcome to disk under its
 * lock; this class never sees files.
 *
 * <p>One refinement of the table, following Salt: a pending key that an autoreject policy now matches moves to
 * {@code minions_rejected/}, so an admin's later {@code --accept-all} cannot let it in.
 */
public final class KeyTransitions {

    /** What the master answers. */
    public enum Answer {
        ACCEPTED, PENDING, REJECTED, DENIED, FULL
    }

    /** What the store writes. */
    public enum Write {
        NONE,
        /** The offered key to {@code minions_pre/}. */
        NEW_PENDING,
        /** The offered key to {@code minions/}. */
        NEW_ACCEPTED,
        /** The offered key to {@code minions_rejected/}. */
        NEW_REJECTED,
        /** The pending key moves to {@code minions/}. */
        PENDING_TO_ACCEPTED,
        /** The pending key moves to {@code minions_rejected/}. */
        PENDING_TO_REJECTED,
        /** The offered key to {@code minions_denied/}; the stored key stays. */
        DENIED,
        /**
         * A grant or token proved the id: the pending key (a squatter's, no policy accepted it) to
         * {@code minions_denied/}, the offered key to {@code minions/}.
         */
        REPLACE_PENDING
    }

    /**
     * Counts and limits that bound what unauthenticated offers may write. A limit of 0 means unlimited.
     * {@code maxRejected} bounds only what autoreject writes: past it the answer is still "rejected".
     */
    public record Limits(int pending, int maxPending, int accepted, int maxMinions, int rejected, int maxRejected) {

        public static final Limits UNLIMITED = new Limits(0, 0, 0, 0, 0, 0);

        boolean pendingFull() {
            return maxPending > 0 && pending >= maxPending;
        }

        boolean minionsFull() {
            return maxMinions > 0 && accepted >= maxMinions;
        }

        boolean rejectedFull() {
            return maxRejected > 0 && rejected >= maxRejected;
        }
    }

    public record Outcome(Answer answer, Write write, String reason) {

        /** The answer as the store gives it for {@code id}, naming the offered key's {@code fingerprint}. */
        public KeyDecision decision(String id, String fingerprint) {
            return switch (answer) {
                case ACCEPTED -> new KeyDecision.Accepted(id, fingerprint, reason);
                case PENDING -> new KeyDecision.Pending(id, fingerprint, reason);
                case REJECTED -> new KeyDecision.Rejected(id, fingerprint, reason);
                case DENIED -> new KeyDecision.Denied(id, fingerprint, reason);
                case FULL -> new KeyDecision.Full(id, reason);
            };
        }
    }

    private KeyTransitions() {
    }

    public static Outcome decide(KeyLookup current, PolicyVerdict verdict, Limits limits) {
        return switch (current) {
            case UNKNOWN -> switch (verdict) {
                case REJECT -> limits.rejectedFull()
                        ? new Outcome(Answer.REJECTED, Write.NONE, "rejected by policy (not recorded: "
                                + limits.maxRejected() + " rejected keys stored)")
                        : new Outcome(Answer.REJECTED, Write.NEW_REJECTED, "rejected by policy");
                case ACCEPT -> limits.minionsFull()
                        ? full("max minions (" + limits.maxMinions() + ") reached")
                        : new Outcome(Answer.ACCEPTED, Write.NEW_ACCEPTED, "accepted by policy");
                case NONE -> limits.pendingFull()
                        ? full("max pending keys (" + limits.maxPending() + ") reached")
                        : new Outcome(Answer.PENDING, Write.NEW_PENDING, "new key awaits acceptance");
            };
            case PENDING_SAME -> switch (verdict) {
                case ACCEPT -> limits.minionsFull()
                        ? full("max minions (" + limits.maxMinions() + ") reached")
                        : new Outcome(Answer.ACCEPTED, Write.PENDING_TO_ACCEPTED, "pending key accepted by policy");
                case REJECT -> new Outcome(Answer.REJECTED, Write.PENDING_TO_REJECTED, "pending key rejected by policy");
                case NONE -> new Outcome(Answer.PENDING, Write.NONE, "key awaits acceptance");
            };
            // Only a grant or token is asked here (Admission): it proves the id, a pending key proves nothing.
            case PENDING_OTHER -> verdict != PolicyVerdict.ACCEPT
                    ? new Outcome(Answer.DENIED, Write.DENIED, "key differs from the pending key")
                    : limits.minionsFull() ? full("max minions (" + limits.maxMinions() + ") reached")
                    : new Outcome(Answer.ACCEPTED, Write.REPLACE_PENDING, "accepted by a grant or token over a"
                            + " pending key no policy accepted (that key moved to minions_denied/)");
            case ACCEPTED_OTHER -> new Outcome(Answer.DENIED, Write.DENIED, "key differs from the accepted key");
            case ACCEPTED_SAME -> new Outcome(Answer.ACCEPTED, Write.NONE, "key accepted");
            case REJECTED -> new Outcome(Answer.REJECTED, Write.NONE, "id is rejected");
        };
    }

    private static Outcome full(String reason) {
        return new Outcome(Answer.FULL, Write.NONE, reason);
    }
}

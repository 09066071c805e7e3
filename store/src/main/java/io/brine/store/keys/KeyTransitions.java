package io.brine.store.keys;

import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.protocol.crypto.Fingerprints;
import java.security.interfaces.RSAPublicKey;
import java.util.List;
import java.util.Objects;

/**
 * Who gets in: DESIGN.md §2's transition table ({@link #decide}) and the whole admission decision of an offered key
 * around it ({@link #plan}), as pure functions of what a backend read. Every {@link KeyStore} backend only reads the
 * id's state and commits the plan atomically (the file store under its lock, the cluster's in one versioned
 * transaction); this class never sees files or znodes.
 *
 * <p>One refinement of the table, following Salt: a pending key that an autoreject policy now matches moves to
 * {@code minions_rejected/}, so an admin's later {@code --accept-all} cannot let it in.
 */
public final class KeyTransitions {

    /** What the master answers. */
    public enum Answer {
        ACCEPTED,
        PENDING,
        REJECTED,
        DENIED,
        FULL
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

    /**
     * What an id holds as a backend read it: its {@link KeyLookup} against the offered key and the {@link MinionKind}
     * the key was filed for. {@code readable} is false for an entry the backend cannot parse (a damaged file in a
     * state directory): it counts as another key in its state.
     */
    public record Current(KeyLookup lookup, MinionKind kind, boolean readable) {

        /** The id holds no pending, accepted or rejected key. */
        public static final Current NONE = new Current(KeyLookup.UNKNOWN, MinionKind.BRINE, true);

        public Current {
            Objects.requireNonNull(lookup, "lookup");
            Objects.requireNonNull(kind, "kind");
        }

        /** A key the backend read, compared with the offered one ({@link KeyLookup#of}). */
        public static Current of(KeyLookup lookup, MinionKind kind) {
            return lookup == KeyLookup.UNKNOWN ? NONE : new Current(lookup, kind, true);
        }

        /** An entry in {@code state} whose key the backend cannot read. */
        public static Current unreadable(KeyState state, MinionKind kind) {
            return new Current(
                    switch (state) {
                        case PENDING -> KeyLookup.PENDING_OTHER;
                        case ACCEPTED -> KeyLookup.ACCEPTED_OTHER;
                        case REJECTED, DENIED -> KeyLookup.REJECTED;
                    },
                    kind,
                    false);
        }

        /** Whether the id holds a key filed for another kind of minion than {@code offered}. */
        boolean otherKind(MinionKind offered) {
            return lookup != KeyLookup.UNKNOWN && kind != offered;
        }
    }

    /**
     * The decision on one offer and the write that makes it true. {@code heldBy} is the kind the id's key was filed
     * for when that is not the offer's (then nothing is written); null otherwise. {@code offeredKeyHeld}: the id holds
     * the offered key, pending or accepted, for the offer's kind.
     */
    public record Plan(Outcome outcome, MinionKind heldBy, boolean offeredKeyHeld) {

        public Write write() {
            return outcome.write();
        }

        public String reason() {
            return outcome.reason();
        }

        /** The answer for {@code id}, naming the offered key's {@code fingerprint}. */
        public KeyDecision decision(String id, String fingerprint) {
            return heldBy != null
                    ? new KeyDecision.OtherKind(id, fingerprint, heldBy)
                    : outcome.decision(id, fingerprint);
        }

        /**
         * The answer for {@code id}, naming {@code offered} by the fingerprint of the first of {@code copies} (null
         * for none) that is the same key, computed when it was stored, or by its own.
         */
        public KeyDecision decision(String id, RSAPublicKey offered, StoredKey... copies) {
            for (StoredKey copy : copies) {
                if (copy != null && KeyLookup.sameKey(copy.key(), offered)) {
                    return decision(id, copy.fingerprint());
                }
            }
            return decision(id, Fingerprints.of(offered));
        }

        /** The same decision, written by nobody: what an answer from an in-memory view is. */
        Plan unwritten() {
            return new Plan(new Outcome(outcome.answer(), Write.NONE, outcome.reason()), heldBy, offeredKeyHeld);
        }
    }

    private KeyTransitions() {}

    /**
     * Whether an offer with {@code current} asks the acceptance policies (and a grant or token): only for an unknown
     * id and a pending key of the offer's kind. Salt's {@code _auth} proves nothing about the key, so an offer of the
     * other kind is refused before any policy runs.
     */
    public static boolean asksPolicies(Current current, MinionKind offered) {
        return !current.otherKind(offered)
                && switch (current.lookup()) {
                    case UNKNOWN, PENDING_SAME, PENDING_OTHER -> true;
                    case ACCEPTED_SAME, ACCEPTED_OTHER, REJECTED -> false;
                };
    }

    /**
     * Whether an offer with {@code current} checks the offered key's factors, once, before any policy runs: not for
     * the key the store already holds under the id (checked when it was stored), nor for an offer of the other kind.
     */
    public static boolean checksFactors(Current current, MinionKind offered) {
        return !current.otherKind(offered)
                && current.lookup() != KeyLookup.ACCEPTED_SAME
                && current.lookup() != KeyLookup.PENDING_SAME;
    }

    /**
     * Whether {@link #plan} needs to know which other ids hold the offered key. Not for an offer of the other kind, an
     * accepted same key or a rejected id: those never write, and the sharing only changes what an offer writes and
     * the reason it is written with.
     */
    public static boolean readsSharing(Current current, MinionKind offered) {
        return !current.otherKind(offered)
                && current.lookup() != KeyLookup.ACCEPTED_SAME
                && current.lookup() != KeyLookup.REJECTED;
    }

    /**
     * The answer a backend gives from its in-memory view, before it locks or reads anything: the plan with no other
     * id holding the key and no limit, with nothing to write when it is a steady state (no limit nor other id can turn
     * a plan without a write into one with a write) or the denial of the key already in {@code minions_denied/}
     * ({@code denied}, the id's denied key in the view, null for none, is {@code offeredKey}); a plan with a write
     * means the backend must {@link #plan} again on what it reads where it commits.
     */
    public static Plan fromView(
            Current viewed, MinionKind offered, PolicyVerdict verdict, StoredKey denied, RSAPublicKey offeredKey) {
        Plan plan = plan(viewed, offered, verdict, viewed.lookup(), List.of(), Limits.UNLIMITED);
        return plan.write() == Write.DENIED && denied != null && KeyLookup.sameKey(denied.key(), offeredKey)
                ? plan.unwritten()
                : plan;
    }

    /** How a denial for an entry that is not a valid key file begins: an integrity warning, not a key mismatch. */
    public static final String UNREADABLE_ENTRY = "integrity warning: not a valid key file";

    /**
     * The admission decision on an offer of a key of kind {@code offered}, and the write that makes it true.
     *
     * @param current what the id holds, read where the backend commits (under its lock, in its transaction)
     * @param verdict what the policies concluded, asked (before the lock) about the state {@code askedAbout}
     * @param sharing the other ids holding the offered key, in any state (read as {@code current}, when
     *     {@link #readsSharing})
     */
    public static Plan plan(
            Current current,
            MinionKind offered,
            PolicyVerdict verdict,
            KeyLookup askedAbout,
            List<String> sharing,
            Limits limits) {
        return plan(current, offered, verdict, askedAbout, sharing, limits, false);
    }

    /**
     * {@link #plan(Current, MinionKind, PolicyVerdict, KeyLookup, List, Limits)} for an offered key that may have been
     * {@code retired} by a rotation of this id ({@link #readsRetired}): such a key never becomes the id's pending or
     * accepted key again, whatever the policies said; it goes to {@code minions_denied/}.
     */
    public static Plan plan(
            Current current,
            MinionKind offered,
            PolicyVerdict verdict,
            KeyLookup askedAbout,
            List<String> sharing,
            Limits limits,
            boolean retired) {
        Plan plan = plan6(current, offered, verdict, askedAbout, sharing, limits);
        return retired
                        && switch (plan.write()) {
                            case NEW_PENDING, NEW_ACCEPTED, PENDING_TO_ACCEPTED, REPLACE_PENDING -> true;
                            case NONE, NEW_REJECTED, PENDING_TO_REJECTED, DENIED -> false;
                        }
                ? new Plan(
                        new Outcome(Answer.DENIED, Write.DENIED, "key retired by a rotation of this id"), null, false)
                : plan;
    }

    /**
     * Whether {@link #plan} needs to know if the offered key was retired by a rotation of the id: only when it could
     * write the offered key as the id's pending or accepted key.
     */
    public static boolean readsRetired(Current current, MinionKind offered) {
        return !current.otherKind(offered)
                && switch (current.lookup()) {
                    case UNKNOWN, PENDING_OTHER -> true;
                    case PENDING_SAME, ACCEPTED_SAME, ACCEPTED_OTHER, REJECTED -> false;
                };
    }

    private static Plan plan6(
            Current current,
            MinionKind offered,
            PolicyVerdict verdict,
            KeyLookup askedAbout,
            List<String> sharing,
            Limits limits) {
        if (current.otherKind(offered)) {
            // Never an id filed for the other kind, whatever the policies said: an admin deletes the key first.
            return new Plan(
                    new Outcome(
                            Answer.DENIED,
                            Write.NONE,
                            "held by a " + current.kind().label() + " minion"),
                    current.kind(),
                    false);
        }
        KeyLookup lookup = current.lookup();
        if (!current.readable() && lookup != KeyLookup.REJECTED) {
            // A directory, a link or a damaged file where the id's key belongs: planted or broken, for an admin to
            // see. Nothing is written, not even the offered key beside it in minions_denied/.
            return new Plan(
                    new Outcome(
                            Answer.DENIED,
                            Write.NONE,
                            UNREADABLE_ENTRY + " (the "
                                    + (lookup == KeyLookup.PENDING_OTHER ? "pending" : "accepted")
                                    + " entry of this id is a "
                                    + "directory, a link or a damaged file): an admin must look"),
                    null,
                    false);
        }
        // A verdict displaces a pending key only when it was given about that very state (a grant or token), and never
        // an unreadable one: its key could not be kept in minions_denied/, and a damaged file is for an admin to see.
        PolicyVerdict effective =
                lookup == KeyLookup.PENDING_OTHER && (askedAbout != KeyLookup.PENDING_OTHER || !current.readable())
                        ? PolicyVerdict.NONE
                        : verdict;
        // One key, one id: no policy accepts a key that is stored under another id, in any state.
        boolean shared = !sharing.isEmpty();
        Outcome outcome =
                decide(lookup, shared && effective == PolicyVerdict.ACCEPT ? PolicyVerdict.NONE : effective, limits);
        if (shared && outcome.write() != Write.NONE) {
            outcome = new Outcome(
                    outcome.answer(),
                    outcome.write(),
                    outcome.reason() + "; "
                            + KeyListing.sameKeyAs(sharing)
                            + (effective == PolicyVerdict.ACCEPT
                                    ? ": not accepted by policy, an admin must decide"
                                    : ""));
        }
        return new Plan(outcome, null, lookup.isOfferedKey());
    }

    public static Outcome decide(KeyLookup current, PolicyVerdict verdict, Limits limits) {
        return switch (current) {
            case UNKNOWN ->
                switch (verdict) {
                    case REJECT ->
                        limits.rejectedFull()
                                ? new Outcome(
                                        Answer.REJECTED,
                                        Write.NONE,
                                        "rejected by policy (not recorded: " + limits.maxRejected()
                                                + " rejected keys stored)")
                                : new Outcome(Answer.REJECTED, Write.NEW_REJECTED, "rejected by policy");
                    case ACCEPT ->
                        limits.minionsFull()
                                ? full("max minions (" + limits.maxMinions() + ") reached")
                                : new Outcome(Answer.ACCEPTED, Write.NEW_ACCEPTED, "accepted by policy");
                    case NONE ->
                        limits.pendingFull()
                                ? full("max pending keys (" + limits.maxPending() + ") reached")
                                : new Outcome(Answer.PENDING, Write.NEW_PENDING, "new key awaits acceptance");
                };
            case PENDING_SAME ->
                switch (verdict) {
                    case ACCEPT ->
                        limits.minionsFull()
                                ? full("max minions (" + limits.maxMinions() + ") reached")
                                : new Outcome(
                                        Answer.ACCEPTED, Write.PENDING_TO_ACCEPTED, "pending key accepted by policy");
                    case REJECT ->
                        new Outcome(Answer.REJECTED, Write.PENDING_TO_REJECTED, "pending key rejected by policy");
                    case NONE -> new Outcome(Answer.PENDING, Write.NONE, "key awaits acceptance");
                };
            // Only a grant or token is asked here (Admission): it proves the id, a pending key proves nothing.
            case PENDING_OTHER ->
                verdict != PolicyVerdict.ACCEPT
                        ? new Outcome(Answer.DENIED, Write.DENIED, "key differs from the pending key")
                        : limits.minionsFull()
                                ? full("max minions (" + limits.maxMinions() + ") reached")
                                : new Outcome(
                                        Answer.ACCEPTED,
                                        Write.REPLACE_PENDING,
                                        "accepted by a grant or token over a"
                                                + " pending key no policy accepted (that key moved to minions_denied/)");
            case ACCEPTED_OTHER -> new Outcome(Answer.DENIED, Write.DENIED, "key differs from the accepted key");
            case ACCEPTED_SAME -> new Outcome(Answer.ACCEPTED, Write.NONE, "key accepted");
            case REJECTED -> new Outcome(Answer.REJECTED, Write.NONE, "id is rejected");
        };
    }

    /**
     * The decision on a minion's key rotation: whether the store replaces the id's accepted key. {@code rotates}: write
     * the new key as the accepted one and retire the old; {@code already}: the new key is the accepted key (a retry
     * after a lost answer), nothing to write, answered as done.
     */
    public record RotationPlan(boolean rotates, boolean already, String reason) {

        /** The answer for {@code id}, naming both keys. */
        public RotationDecision decision(String id, String oldFingerprint, String newFingerprint) {
            return rotates || already
                    ? new RotationDecision.Rotated(id, oldFingerprint, newFingerprint, reason)
                    : new RotationDecision.Refused(id, newFingerprint, reason);
        }
    }

    /**
     * Who may rotate: the admission rules for a brine minion's new key in place of its accepted one, as a pure
     * function of what a backend read where it commits. The caller has checked the request's two signatures and the
     * new key's shape and factors.
     *
     * @param old         what the id holds compared with the key the request is authenticated by
     * @param replacement what the id holds compared with the new key
     * @param sharing     the other ids holding the new key, in any state
     * @param retired     whether the new key was retired by an earlier rotation of this id
     */
    public static RotationPlan planRotation(
            Current old, Current replacement, KeyRotationPolicy policy, List<String> sharing, boolean retired) {
        if (old.otherKind(MinionKind.BRINE)) {
            return refuse("held by a " + old.kind().label() + " minion");
        }
        if (replacement.lookup() == KeyLookup.ACCEPTED_SAME && old.lookup() == KeyLookup.ACCEPTED_SAME) {
            return refuse("the new key is the old key"); // the id holds one key: both are it
        }
        if (replacement.lookup() == KeyLookup.ACCEPTED_SAME) {
            return new RotationPlan(false, true, "the new key is already the accepted key");
        }
        switch (old.lookup()) {
            case ACCEPTED_SAME -> {}
            case ACCEPTED_OTHER -> {
                return refuse("the old key is no longer the accepted key (replaced meanwhile)");
            }
            case PENDING_SAME, PENDING_OTHER -> {
                return refuse("the id holds no accepted key, only a pending one");
            }
            case REJECTED -> {
                return refuse("the id is rejected");
            }
            case UNKNOWN -> {
                return refuse("the id holds no accepted key (deleted meanwhile)");
            }
        }
        if (policy == KeyRotationPolicy.DENY) {
            return refuse("key rotation is denied by this master (key_rotation: deny)");
        }
        if (retired) {
            return refuse("the new key was retired by an earlier rotation of this id");
        }
        if (!sharing.isEmpty()) {
            return refuse("the new key is held by another id (" + KeyListing.sameKeyAs(sharing) + ")");
        }
        return new RotationPlan(true, false, "key rotated by the minion");
    }

    private static RotationPlan refuse(String reason) {
        return new RotationPlan(false, false, reason);
    }

    private static Outcome full(String reason) {
        return new Outcome(Answer.FULL, Write.NONE, reason);
    }
}

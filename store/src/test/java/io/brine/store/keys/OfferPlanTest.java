package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.KeyTransitions.Current;
import io.brine.store.keys.KeyTransitions.Limits;
import io.brine.store.keys.KeyTransitions.Plan;
import io.brine.store.keys.KeyTransitions.Write;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link KeyTransitions#plan}, the one admission decision both key stores commit, over every combination of what the
 * id holds, the offer's kind, the verdict and the state it was asked about, who else holds the key, and the limits,
 * against {@link #TABLE}: DESIGN.md §2 and the rules the stores applied before it was one function, written out.
 */
class OfferPlanTest {

    /** What the id holds, as a backend read it where it commits. */
    enum Held {
        NONE(Current.NONE),
        PENDING_SAME(Current.of(KeyLookup.PENDING_SAME, MinionKind.BRINE)),
        ACCEPTED_SAME(Current.of(KeyLookup.ACCEPTED_SAME, MinionKind.BRINE)),
        REJECTED(Current.of(KeyLookup.REJECTED, MinionKind.BRINE)),
        PENDING_OTHER(Current.of(KeyLookup.PENDING_OTHER, MinionKind.BRINE)),
        ACCEPTED_OTHER(Current.of(KeyLookup.ACCEPTED_OTHER, MinionKind.BRINE)),
        UNREADABLE_PENDING(Current.unreadable(KeyState.PENDING, MinionKind.BRINE)),
        UNREADABLE_ACCEPTED(Current.unreadable(KeyState.ACCEPTED, MinionKind.BRINE)),
        UNREADABLE_REJECTED(Current.unreadable(KeyState.REJECTED, MinionKind.BRINE));

        final Current current;

        Held(Current current) {
            this.current = current;
        }
    }

    private static final Limits UNDER = new Limits(5, 10, 5, 10, 5, 10);
    private static final Limits AT = new Limits(10, 10, 10, 10, 10, 10);
    private static final String OTHER_ID = "db7";
    private static final RSAPublicKey OFFERED = (RSAPublicKey) TestKeys.pair(1).getPublic();
    private static final RSAPublicKey ANOTHER = (RSAPublicKey) TestKeys.pair(2).getPublic();
    private static final StoredKey OFFERED_DENIED = new StoredKey("web1", KeyState.DENIED, OFFERED, "denied-fp");

    /**
     * First matching row wins; {@code *} matches anything. Columns: what the id holds | the offer's kind against the
     * stored one's | the verdict | asked about that state (this) or another (else) | another id holds the key
     * (shared) or not (alone) | limits under or at their maximum -> the decision | the write.
     */
    private static final String[] TABLE = {
        // An unknown id: the policies decide, bounded by the limits; a key another id holds is never accepted by one.
        "NONE                | * | ACCEPT | * | alone  | under -> Accepted  | NEW_ACCEPTED",
        "NONE                | * | ACCEPT | * | alone  | at    -> Full      | NONE",
        "NONE                | * | ACCEPT | * | shared | under -> Pending   | NEW_PENDING",
        "NONE                | * | REJECT | * | *      | under -> Rejected  | NEW_REJECTED",
        "NONE                | * | REJECT | * | *      | at    -> Rejected  | NONE",
        "NONE                | * | NONE   | * | *      | under -> Pending   | NEW_PENDING",
        "NONE                | * | *      | * | *      | at    -> Full      | NONE",
        // An id filed for the other kind of minion: nothing is written whatever the policies said.
        "*                   | other | *  | * | *      | *     -> OtherKind | NONE",
        // The same pending key: promoted or rejected by a policy, whatever state it was asked about.
        "PENDING_SAME        | same | ACCEPT | * | alone | under -> Accepted | PENDING_TO_ACCEPTED",
        "PENDING_SAME        | same | ACCEPT | * | alone | at    -> Full     | NONE",
        "PENDING_SAME        | same | REJECT | * | *     | *     -> Rejected | PENDING_TO_REJECTED",
        "PENDING_SAME        | same | *      | * | *     | *     -> Pending  | NONE",
        // Another pending key: displaced only by an acceptance asked about it (a grant or token), else denied.
        "PENDING_OTHER       | same | ACCEPT | this | alone | under -> Accepted | REPLACE_PENDING",
        "PENDING_OTHER       | same | ACCEPT | this | alone | at    -> Full     | NONE",
        "PENDING_OTHER       | same | *      | *    | *     | *     -> Denied   | DENIED",
        // An unreadable pending or accepted entry (a planted directory or link, a damaged file) is never displaced,
        // and the offered key is not written beside it: an admin must look.
        "UNREADABLE_PENDING  | same | * | * | * | * -> Denied   | NONE",
        "ACCEPTED_SAME       | same | * | * | * | * -> Accepted | NONE",
        "ACCEPTED_OTHER      | same | * | * | * | * -> Denied   | DENIED",
        "UNREADABLE_ACCEPTED | same | * | * | * | * -> Denied   | NONE",
        "REJECTED            | same | * | * | * | * -> Rejected | NONE",
        "UNREADABLE_REJECTED | same | * | * | * | * -> Rejected | NONE",
    };

    record Offered(
            Held held, boolean otherKind, PolicyVerdict verdict, boolean askedThis, boolean shared, boolean atLimits) {

        String[] columns() {
            return new String[] {
                held.name(),
                otherKind ? "other" : "same",
                verdict.name(),
                askedThis ? "this" : "else",
                shared ? "shared" : "alone",
                atLimits ? "at" : "under"
            };
        }

        Plan plan() {
            KeyLookup askedAbout = askedThis
                    ? held.current.lookup()
                    : held.current.lookup() == KeyLookup.UNKNOWN ? KeyLookup.PENDING_SAME : KeyLookup.UNKNOWN;
            return KeyTransitions.plan(
                    held.current,
                    otherKind ? MinionKind.SALT : MinionKind.BRINE,
                    verdict,
                    askedAbout,
                    shared ? List.of(OTHER_ID) : List.of(),
                    atLimits ? AT : UNDER);
        }

        @Override
        public String toString() {
            return String.join(" | ", columns());
        }
    }

    static Stream<Offered> everyOffer() {
        List<Offered> all = new ArrayList<>();
        for (Held held : Held.values()) {
            for (boolean otherKind : new boolean[] {false, true}) {
                for (PolicyVerdict verdict : PolicyVerdict.values()) {
                    for (boolean askedThis : new boolean[] {false, true}) {
                        for (boolean shared : new boolean[] {false, true}) {
                            for (boolean atLimits : new boolean[] {false, true}) {
                                all.add(new Offered(held, otherKind, verdict, askedThis, shared, atLimits));
                            }
                        }
                    }
                }
            }
        }
        return all.stream();
    }

    /** The first row of {@link #TABLE} that matches {@code offer}. */
    private static int rowOf(Offered offer) {
        String[] columns = offer.columns();
        for (int row = 0; row < TABLE.length; row++) {
            String[] cells = TABLE[row].split("->")[0].split("\\|");
            boolean matches = true;
            for (int i = 0; i < columns.length; i++) {
                String cell = cells[i].strip();
                matches &= cell.equals("*") || cell.equals(columns[i]);
            }
            if (matches) {
                return row;
            }
        }
        throw new AssertionError("no row for " + offer);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyOffer")
    void decisionAndWriteAreTheTables(Offered offer) {
        String[] expected = TABLE[rowOf(offer)].split("->")[1].split("\\|");
        Plan plan = offer.plan();
        KeyDecision decision = plan.decision("web1", "fp");

        assertThat(decision.getClass().getSimpleName()).isEqualTo(expected[0].strip());
        assertThat(plan.write()).isEqualTo(Write.valueOf(expected[1].strip()));
        assertThat(decision.id()).isEqualTo("web1");
        assertThat(decision.reason()).isNotBlank();
        if (decision instanceof KeyDecision.OtherKind otherKind) {
            assertThat(otherKind.held()).isEqualTo(MinionKind.BRINE);
        }
        assertThat(plan.offeredKeyHeld())
                .isEqualTo(!offer.otherKind()
                        && (offer.held() == Held.PENDING_SAME || offer.held() == Held.ACCEPTED_SAME));
        // What is written says which other id holds the key; what is not written is an answer about this id alone.
        assertThat(decision.reason().contains("same key as " + OTHER_ID))
                .isEqualTo(offer.shared() && plan.write() != Write.NONE);
    }

    @Test
    void everyRowDecidesSomeOffer() {
        Set<Integer> used = new HashSet<>();
        everyOffer().forEach(offer -> used.add(rowOf(offer)));
        for (int row = 0; row < TABLE.length; row++) {
            assertThat(used).as(TABLE[row]).contains(row);
        }
    }

    /**
     * A plan answered from a backend's view without a lock is the plan it would commit whatever other id holds the
     * key and however full the store is: limits and sharing only ever take a write away.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("everyOffer")
    void anAnswerFromTheViewHoldsForAnySharingAndLimits(Offered offer) {
        MinionKind kind = offer.otherKind() ? MinionKind.SALT : MinionKind.BRINE;
        Plan fast = KeyTransitions.fromView(offer.held().current, kind, offer.verdict(), null, OFFERED);
        if (fast.write() != Write.NONE || !offer.askedThis()) {
            return;
        }
        Plan committed = offer.plan();
        assertThat(committed.write()).isEqualTo(Write.NONE);
        assertThat(committed.decision("web1", "fp").getClass())
                .isEqualTo(fast.decision("web1", "fp").getClass());
    }

    @Test
    void theSameKeyAlreadyDeniedIsAnsweredWithoutAWriteAndNamedByItsStoredFingerprint() {
        StoredKey anotherDenied = new StoredKey("web1", KeyState.DENIED, ANOTHER, Fingerprints.of(ANOTHER));
        for (Held held : List.of(Held.PENDING_OTHER, Held.ACCEPTED_OTHER)) {
            Plan fast = KeyTransitions.fromView(
                    held.current, MinionKind.BRINE, PolicyVerdict.NONE, OFFERED_DENIED, OFFERED);
            assertThat(fast.write()).as(held.name()).isEqualTo(Write.NONE);
            assertThat(fast.decision("web1", OFFERED, null, OFFERED_DENIED))
                    .isEqualTo(new KeyDecision.Denied("web1", "denied-fp", fast.reason()));
            for (StoredKey denied : Arrays.asList(null, anotherDenied)) {
                Plan written =
                        KeyTransitions.fromView(held.current, MinionKind.BRINE, PolicyVerdict.NONE, denied, OFFERED);
                assertThat(written.write()).isEqualTo(Write.DENIED);
                assertThat(written.decision("web1", OFFERED, denied))
                        .isEqualTo(new KeyDecision.Denied("web1", Fingerprints.of(OFFERED), written.reason()));
            }
        }
    }

    @Test
    void policiesAreAskedFactorsCheckedAndSharingReadOnlyWhereTheyCanMatter() {
        // held | asks policies | checks factors | reads sharing (an offer of the same kind; the other kind: none)
        String[] rows = {
            "NONE                | true  | true  | true",
            "PENDING_SAME        | true  | false | true",
            "PENDING_OTHER       | true  | true  | true",
            "ACCEPTED_SAME       | false | false | false",
            "ACCEPTED_OTHER      | false | true  | true",
            "REJECTED            | false | true  | false",
        };
        for (String row : rows) {
            String[] cells = row.split("\\|");
            Current current = Held.valueOf(cells[0].strip()).current;
            assertThat(KeyTransitions.asksPolicies(current, MinionKind.BRINE))
                    .as(row)
                    .isEqualTo(Boolean.parseBoolean(cells[1].strip()));
            assertThat(KeyTransitions.checksFactors(current, MinionKind.BRINE))
                    .as(row)
                    .isEqualTo(Boolean.parseBoolean(cells[2].strip()));
            assertThat(KeyTransitions.readsSharing(current, MinionKind.BRINE))
                    .as(row)
                    .isEqualTo(Boolean.parseBoolean(cells[3].strip()));
            boolean held = current.lookup() != KeyLookup.UNKNOWN;
            assertThat(KeyTransitions.asksPolicies(current, MinionKind.SALT))
                    .as(row)
                    .isEqualTo(!held);
            assertThat(KeyTransitions.checksFactors(current, MinionKind.SALT))
                    .as(row)
                    .isEqualTo(!held);
            assertThat(KeyTransitions.readsSharing(current, MinionKind.SALT))
                    .as(row)
                    .isEqualTo(!held);
        }
    }
}

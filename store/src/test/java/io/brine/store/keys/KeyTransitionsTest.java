package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.store.keys.KeyTransitions.Answer;
import io.brine.store.keys.KeyTransitions.Limits;
import io.brine.store.keys.KeyTransitions.Outcome;
import io.brine.store.keys.KeyTransitions.Write;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** DESIGN.md §2's table, row by row, then the limits. */
class KeyTransitionsTest {

    private static final Limits ROOMY = new Limits(5, 10, 5, 10, 5, 10);
    private static final Limits NO_PENDING_ROOM = new Limits(10, 10, 5, 10, 5, 10);
    private static final Limits NO_MINION_ROOM = new Limits(5, 10, 10, 10, 5, 10);
    private static final Limits NO_REJECTED_ROOM = new Limits(5, 10, 5, 10, 10, 10);

    @ParameterizedTest(name = "{0} + {1} -> {2}, writes {3}")
    @CsvSource({
        // the id is     verdict  answer    write
        "UNKNOWN,        REJECT,  REJECTED, NEW_REJECTED",
        "UNKNOWN,        ACCEPT,  ACCEPTED, NEW_ACCEPTED",
        "UNKNOWN,        NONE,    PENDING,  NEW_PENDING",
        "PENDING_SAME,   ACCEPT,  ACCEPTED, PENDING_TO_ACCEPTED",
        "PENDING_SAME,   NONE,    PENDING,  NONE",
        "PENDING_SAME,   REJECT,  REJECTED, PENDING_TO_REJECTED",
        "PENDING_OTHER,  NONE,    DENIED,   DENIED",
        "PENDING_OTHER,  ACCEPT,  ACCEPTED, REPLACE_PENDING", // ACCEPT here only from a grant or token (Admission)
        "PENDING_OTHER,  REJECT,  DENIED,   DENIED",
        "ACCEPTED_OTHER, NONE,    DENIED,   DENIED",
        "ACCEPTED_OTHER, ACCEPT,  DENIED,   DENIED",
        "ACCEPTED_OTHER, REJECT,  DENIED,   DENIED",
        "ACCEPTED_SAME,  NONE,    ACCEPTED, NONE",
        "ACCEPTED_SAME,  ACCEPT,  ACCEPTED, NONE",
        "ACCEPTED_SAME,  REJECT,  ACCEPTED, NONE",
        "REJECTED,       NONE,    REJECTED, NONE",
        "REJECTED,       ACCEPT,  REJECTED, NONE",
        "REJECTED,       REJECT,  REJECTED, NONE",
    })
    void tableRow(KeyLookup current, PolicyVerdict verdict, Answer answer, Write write) {
        Outcome outcome = KeyTransitions.decide(current, verdict, ROOMY);
        assertThat(outcome.answer()).isEqualTo(answer);
        assertThat(outcome.write()).isEqualTo(write);
        assertThat(outcome.reason()).isNotBlank();
        assertThat(KeyTransitions.decide(current, verdict, Limits.UNLIMITED)).isEqualTo(outcome);
    }

    @Test
    void aNewPendingKeyPastMaxPendingIsFullAndWritesNothing() {
        Outcome outcome = KeyTransitions.decide(KeyLookup.UNKNOWN, PolicyVerdict.NONE, NO_PENDING_ROOM);
        assertThat(outcome.answer()).isEqualTo(Answer.FULL);
        assertThat(outcome.write()).isEqualTo(Write.NONE);
        assertThat(outcome.reason()).contains("max pending keys (10)");
    }

    @Test
    void maxPendingDoesNotStopAcceptanceRejectionOrKnownKeys() {
        assertThat(KeyTransitions.decide(KeyLookup.UNKNOWN, PolicyVerdict.ACCEPT, NO_PENDING_ROOM)
                        .write())
                .isEqualTo(Write.NEW_ACCEPTED);
        assertThat(KeyTransitions.decide(KeyLookup.UNKNOWN, PolicyVerdict.REJECT, NO_PENDING_ROOM)
                        .write())
                .isEqualTo(Write.NEW_REJECTED);
        assertThat(KeyTransitions.decide(KeyLookup.PENDING_SAME, PolicyVerdict.NONE, NO_PENDING_ROOM)
                        .answer())
                .isEqualTo(Answer.PENDING);
    }

    @Test
    void aNewAcceptancePastMaxMinionsIsFull() {
        for (KeyLookup current : EnumSet.of(KeyLookup.UNKNOWN, KeyLookup.PENDING_SAME)) {
            Outcome outcome = KeyTransitions.decide(current, PolicyVerdict.ACCEPT, NO_MINION_ROOM);
            assertThat(outcome.answer()).as(current.name()).isEqualTo(Answer.FULL);
            assertThat(outcome.write()).isEqualTo(Write.NONE);
            assertThat(outcome.reason()).contains("max minions (10)");
        }
    }

    @Test
    void maxMinionsDoesNotStopAnAlreadyAcceptedMinion() {
        assertThat(KeyTransitions.decide(KeyLookup.ACCEPTED_SAME, PolicyVerdict.NONE, NO_MINION_ROOM)
                        .answer())
                .isEqualTo(Answer.ACCEPTED);
    }

    @Test
    void autorejectPastMaxRejectedStillRejectsButRecordsNothing() {
        Outcome outcome = KeyTransitions.decide(KeyLookup.UNKNOWN, PolicyVerdict.REJECT, NO_REJECTED_ROOM);
        assertThat(outcome.answer()).isEqualTo(Answer.REJECTED);
        assertThat(outcome.write()).isEqualTo(Write.NONE);
    }

    @Test
    void everyLookupAndVerdictHasAnAnswer() {
        for (KeyLookup current : KeyLookup.values()) {
            for (PolicyVerdict verdict : PolicyVerdict.values()) {
                for (Limits limits : new Limits[] {ROOMY, NO_PENDING_ROOM, NO_MINION_ROOM, NO_REJECTED_ROOM}) {
                    Outcome outcome = KeyTransitions.decide(current, verdict, limits);
                    assertThat(outcome).isNotNull();
                    if (outcome.answer() == Answer.FULL) {
                        assertThat(outcome.write()).isEqualTo(Write.NONE);
                    }
                }
            }
        }
    }
}

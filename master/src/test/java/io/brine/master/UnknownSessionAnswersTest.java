package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.transport.Peer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class UnknownSessionAnswersTest {

    /** The grace's tasks, run when the test says the grace has passed. */
    private final List<Runnable> waiting = new ArrayList<>();

    private final UnknownSessionAnswers answers =
            new UnknownSessionAnswers(Duration.ofSeconds(2), 2, (delay, task) -> waiting.add(task));
    private final AtomicInteger answered = new AtomicInteger();

    private void graceEnds() {
        List<Runnable> due = new ArrayList<>(waiting);
        waiting.clear();
        due.forEach(Runnable::run);
    }

    @Test
    void aConnectionThatAsksForASessionWithinTheGraceIsNotAnswered() {
        Peer minion = () -> "10.0.0.1";
        answers.unknown(minion, answered::incrementAndGet);
        answers.unknown(minion, answered::incrementAndGet);
        answers.asked(minion);
        answers.unknown(minion, answered::incrementAndGet); // queued before, delivered after: still spared

        graceEnds();

        assertThat(answered).hasValue(0);
        assertThat(answers.spared()).isEqualTo(3);
        assertThat(answers.following()).isZero();
    }

    @Test
    void aConnectionThatNeverAsksIsAnsweredOnceWhenTheGraceEndsAndAgainForALaterFrame() {
        Peer stale = () -> "10.0.0.2";
        answers.unknown(stale, answered::incrementAndGet);
        answers.unknown(stale, answered::incrementAndGet);
        assertThat(answered).hasValue(0);

        graceEnds();
        assertThat(answered).hasValue(1);
        assertThat(answers.spared()).isEqualTo(1);

        answers.unknown(stale, answered::incrementAndGet);
        graceEnds();
        assertThat(answered).hasValue(2);
    }

    @Test
    void askingWithoutAWaitingAnswerLeavesNothingBehind() {
        answers.asked(() -> "10.0.0.3");

        assertThat(answers.following()).isZero();
    }

    @Test
    void oneConnectionPastTheCapacityIsAnsweredAtOnce() {
        answers.unknown(() -> "10.0.0.4", answered::incrementAndGet);
        answers.unknown(() -> "10.0.0.5", answered::incrementAndGet);
        assertThat(answered).hasValue(0);

        answers.unknown(() -> "10.0.0.6", answered::incrementAndGet);

        assertThat(answered).hasValue(1);
        assertThat(answers.following()).isEqualTo(2);
        graceEnds();
        assertThat(answered).hasValue(3);
    }
}

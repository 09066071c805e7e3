package io.brine.master.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ReturnsAwaitedTest {

    @Test
    void aReturnBeforeTheMissingMinionsAreKnownDoesNotEndTheWait() {
        ReturnsAwaited awaited = new ReturnsAwaited();
        // Returns arrive while the job is being read: the wait must not end (it did, with hundreds missing).
        assertThat(awaited.returned("m1")).isFalse();
        assertThat(awaited.returned("m2")).isFalse();
        // The job read shows m1 missing still (read before its return was stored), and m3.
        assertThat(awaited.known(List.of("m1", "m3"))).isFalse();
        assertThat(awaited.returned("m3")).isTrue();
    }

    @Test
    void whenEveryMissingMinionReturnedWhileTheJobWasReadTheWaitEndsAtOnce() {
        ReturnsAwaited awaited = new ReturnsAwaited();
        awaited.returned("m1");
        awaited.returned("m2");
        assertThat(awaited.known(List.of("m1", "m2"))).isTrue();
    }

    @Test
    void theWaitEndsOnlyAtTheLastMissingReturn() {
        ReturnsAwaited awaited = new ReturnsAwaited();
        assertThat(awaited.known(List.of("m1", "m2"))).isFalse();
        assertThat(awaited.returned("m1")).isFalse();
        assertThat(awaited.returned("m1")).as("a duplicate").isFalse();
        assertThat(awaited.returned("m2")).isTrue();
    }
}

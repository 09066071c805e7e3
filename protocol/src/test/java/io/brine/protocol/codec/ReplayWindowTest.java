package io.brine.protocol.codec;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ReplayWindowTest {

    private final ReplayWindow window = new ReplayWindow();

    @Test
    void acceptsEachCounterOnce() {
        assertThat(window.highest()).isZero();
        assertThat(window.accept(1)).isTrue();
        assertThat(window.accept(1)).isFalse();
        assertThat(window.accept(2)).isTrue();
        assertThat(window.accept(2)).isFalse();
        assertThat(window.highest()).isEqualTo(2);
    }

    @Test
    void refusesCountersBelowOne() {
        assertThat(window.accept(0)).isFalse();
        assertThat(window.accept(-1)).isFalse();
        assertThat(window.accept(Long.MIN_VALUE)).isFalse();
    }

    @Test
    void acceptsOutOfOrderCountersInsideTheWindowOnce() {
        assertThat(window.accept(10)).isTrue();
        assertThat(window.accept(7)).isTrue();
        assertThat(window.accept(3)).isTrue();
        assertThat(window.accept(7)).isFalse();
        assertThat(window.accept(8)).isTrue();
        assertThat(window.highest()).isEqualTo(10);
    }

    @Test
    void theWindowIs64Wide() {
        assertThat(window.accept(100)).isTrue();
        assertThat(window.accept(100 - 63)).isTrue(); // the oldest counter still inside
        assertThat(window.accept(100 - 64)).isFalse(); // just outside
        assertThat(window.wouldAccept(100 - 62)).isTrue();
    }

    @Test
    void slidingForwardForgetsOnlyWhatFallsOut() {
        assertThat(window.accept(1)).isTrue();
        assertThat(window.accept(64)).isTrue();
        assertThat(window.accept(1)).isFalse(); // seen, and still inside
        assertThat(window.accept(65)).isTrue();
        assertThat(window.accept(1)).isFalse(); // now outside
        assertThat(window.accept(2)).isTrue(); // never seen, still inside
        assertThat(window.accept(64)).isFalse(); // seen before the slide
    }

    @Test
    void aJumpBeyondTheWindowClearsIt() {
        assertThat(window.accept(5)).isTrue();
        assertThat(window.accept(1_000)).isTrue();
        assertThat(window.accept(999)).isTrue();
        assertThat(window.accept(5)).isFalse();
        assertThat(window.accept(Long.MAX_VALUE)).isTrue();
        assertThat(window.accept(Long.MAX_VALUE)).isFalse();
        assertThat(window.accept(Long.MAX_VALUE - 63)).isTrue();
    }

    @Test
    void wouldAcceptChangesNothing() {
        assertThat(window.wouldAccept(3)).isTrue();
        assertThat(window.wouldAccept(3)).isTrue();
        assertThat(window.highest()).isZero();
        window.accept(3);
        assertThat(window.wouldAccept(3)).isFalse();
    }
}

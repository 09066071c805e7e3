package io.brine.transport.zmtp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The connection checks' deadlines fall on a grid shared by every connection, so that an idle master's event loop
 * wakes once per step of it for all the checks due then (ZmtpServerHandler).
 */
class TimerGridTest {

    private static final long GRID = 1_000;

    @Test
    void deadlinesAreRoundedUpToTheNextGridPointNeverEarlier() {
        assertThat(ZmtpServerHandler.onGrid(10_250, 5_000, GRID)).isEqualTo(16_000);
        assertThat(ZmtpServerHandler.onGrid(10_000, 5_000, GRID)).isEqualTo(15_000);
        assertThat(ZmtpServerHandler.onGrid(10_999, 0, GRID)).isEqualTo(11_000);
        assertThat(ZmtpServerHandler.onGrid(11_000, 0, GRID))
                .as("at least 1 ns ahead")
                .isEqualTo(12_000);
    }

    @Test
    void connectionsWithDeadlinesInOneStepShareTheirGridPoint() {
        long first = ZmtpServerHandler.onGrid(123_456, 59_001, GRID);
        long second = ZmtpServerHandler.onGrid(123_900, 58_700, GRID);
        assertThat(first).isEqualTo(second).isEqualTo(183_000);
    }

    @Test
    void negativeNanoTimesRoundTheSameWay() {
        assertThat(ZmtpServerHandler.onGrid(-10_250, 5_000, GRID)).isEqualTo(-5_000);
        assertThat(ZmtpServerHandler.onGrid(-1_500, 100, GRID)).isEqualTo(-1_000);
    }
}

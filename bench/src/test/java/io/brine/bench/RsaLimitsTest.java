package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RsaLimitsTest {

    @Test
    void anOperationsRateIsPerSecondOfTheThreadsCpuNotOfTheWallClock() {
        // A loaded machine: each operation takes 2 ms of CPU and 40 ms by the wall clock.
        AtomicLong wall = new AtomicLong();
        AtomicLong cpu = new AtomicLong();
        Runnable op = () -> {
            wall.addAndGet(40_000_000);
            cpu.addAndGet(2_000_000);
        };

        double rate = RsaLimits.rate(1.0, op, wall::get, cpu::get);

        assertThat(rate).isEqualTo(500.0);
        assertThat(cpu.get()).isEqualTo(30 * 2_000_000L); // ten at a time until a wall-clock second was over
    }
}

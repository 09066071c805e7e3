package io.brine.master.resume;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.brine.daemon.testing.LogCapture;
import io.brine.protocol.testing.MovableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class ResumptionLogTest {

    private final MovableClock clock = new MovableClock(Instant.parse("2026-11-29T08:00:00Z"));
    /** The count's lines, run when the test says the interval has passed. */
    private final List<Runnable> later = new ArrayList<>();

    private final ResumptionLog log =
            new ResumptionLog(LoggerFactory.getLogger(ResumeService.class), clock, (delay, line) -> {
                assertThat(delay).isEqualTo(ResumptionLog.INTERVAL);
                later.add(line);
            });

    /** The test's logging may be quieter than a master's default: each minion's line at DEBUG is counted too. */
    private final ch.qos.logback.classic.Logger logger =
            (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(ResumeService.class);

    private final Level level = logger.getLevel();

    @BeforeEach
    void logEverything() {
        logger.setLevel(Level.DEBUG);
    }

    @AfterEach
    void restoreLevel() {
        logger.setLevel(level);
    }

    private void intervalEnds() {
        clock.advance(ResumptionLog.INTERVAL);
        List<Runnable> due = new ArrayList<>(later);
        later.clear();
        due.forEach(Runnable::run);
    }

    @Test
    void aThousandMinionsResumingAtOnceAreOneLineEachSecondWithTheirCountNotAThousandLines() {
        try (LogCapture lines = LogCapture.of(ResumeService.class)) {
            for (int i = 0; i < 600; i++) {
                log.resumed("minion-" + i, "10.0.0.1:" + (1000 + i));
            }
            intervalEnds();
            for (int i = 600; i < 1000; i++) {
                log.resumed("minion-" + i, "10.0.0.1:" + (1000 + i));
            }
            intervalEnds();
            intervalEnds(); // nothing more: no line

            assertThat(lines.at(Level.INFO))
                    .containsExactly(
                            "Minion minion-0 (10.0.0.1:1000): resumed with a ticket",
                            "599 more minions resumed with a ticket in 1000 ms (each minion's line at DEBUG)",
                            "400 more minions resumed with a ticket in 1000 ms (each minion's line at DEBUG)");
            assertThat(lines.at(Level.DEBUG))
                    .hasSize(999)
                    .last()
                    .isEqualTo("Minion minion-999 (10.0.0.1:1999): resumed with a ticket");
        }
    }

    @Test
    void aMinionResumingAloneAfterAQuietSecondIsNamedAtInfoAndTheLastCountIsNeverLeftUntold() {
        try (LogCapture lines = LogCapture.of(ResumeService.class)) {
            log.resumed("web-1", "10.0.0.1:1000");
            log.resumed("web-2", "10.0.0.2:1000");
            intervalEnds();
            clock.advance(Duration.ofMinutes(5));
            log.resumed("web-3", "10.0.0.3:1000");

            assertThat(lines.at(Level.INFO))
                    .containsExactly(
                            "Minion web-1 (10.0.0.1:1000): resumed with a ticket",
                            "1 more minion resumed with a ticket in 1000 ms (each minion's line at DEBUG)",
                            "Minion web-3 (10.0.0.3:1000): resumed with a ticket");
            assertThat(later).isEmpty();
        }
    }

    @Test
    void aCountWhoseLaterLineNeverRanIsToldByTheNextResumption() {
        ResumptionLog lost =
                new ResumptionLog(LoggerFactory.getLogger(ResumeService.class), clock, (delay, line) -> {});
        try (LogCapture lines = LogCapture.of(ResumeService.class)) {
            for (int i = 0; i < 600; i++) {
                lost.resumed("minion-" + i, "10.0.0.1:" + (1000 + i));
            }
            clock.advance(ResumptionLog.INTERVAL.multipliedBy(2));
            lost.resumed("minion-600", "10.0.0.1:1600");

            assertThat(lines.at(Level.INFO))
                    .containsExactly(
                            "Minion minion-0 (10.0.0.1:1000): resumed with a ticket",
                            "600 more minions resumed with a ticket in 2000 ms (each minion's line at DEBUG)");
        }
    }
}

package io.brine.master.resume;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.testing.MovableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ticket keys on disk: 0600, kept across a restart, rotated daily, one period of grace, never trusted blindly. */
class TicketKeysTest {

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(Instant.parse("2026-11-28T12:00:00Z"));

    @Test
    void theKeysAreWrittenOwnerOnlyAndOutliveARestart() throws Exception {
        Path file = dir.resolve(TicketKeys.FILE);
        TicketKeys.Key key = TicketKeys.open(file, clock).current();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("rw-------");
        TicketKeys again = TicketKeys.open(file, clock);
        assertThat(again.current().id()).isEqualTo(key.id());
        assertThat(again.find(key.id()).orElseThrow().bytes())
                .isEqualTo(key.key().bytes());
    }

    @Test
    void aKeyIsReplacedAfterAPeriodAndRetiredAPeriodLater() throws Exception {
        Path file = dir.resolve(TicketKeys.FILE);
        TicketKeys keys = TicketKeys.open(file, clock);
        TicketKeys.Key first = keys.current();
        clock.advance(Duration.ofMillis(TicketKeys.PERIOD_MS - 1));
        assertThat(keys.current().id()).isEqualTo(first.id());
        clock.advance(Duration.ofMillis(1));
        TicketKeys.Key second = keys.current();
        assertThat(second.id()).isNotEqualTo(first.id());
        // The replaced key still opens its tickets for one period, across a restart too.
        assertThat(TicketKeys.open(file, clock).find(first.id())).isPresent();
        clock.advance(Duration.ofMillis(TicketKeys.PERIOD_MS - 1));
        assertThat(keys.find(first.id())).isPresent();
        clock.advance(Duration.ofMillis(1));
        assertThat(keys.find(first.id())).isEmpty();
        assertThat(keys.find(second.id())).isPresent();
    }

    @Test
    void aKeyMadeWhileTheClockWasAheadIsReplacedOnceItIsSetRightAndRetiredAPeriodLater() throws Exception {
        Path file = dir.resolve(TicketKeys.FILE);
        Instant right = clock.instant();
        clock.advance(Duration.ofDays(365)); // the master's clock a year ahead, then set right
        TicketKeys.Key ahead = TicketKeys.open(file, clock).current();
        clock.set(right);
        TicketKeys keys = TicketKeys.open(file, clock);
        TicketKeys.Key sealing = keys.current();
        assertThat(sealing.id()).as("a key dated a year ahead seals on").isNotEqualTo(ahead.id());
        assertThat(keys.find(ahead.id()))
                .as("opens its tickets for one more period")
                .isPresent();
        clock.advance(Duration.ofMillis(TicketKeys.PERIOD_MS));
        keys.current();
        assertThat(keys.find(ahead.id()))
                .as("retired 48 h at most after the clock is set right")
                .isEmpty();
        assertThat(keys.find(sealing.id())).isPresent();
    }

    @Test
    void aFileOthersCouldReadOrWriteOrADamagedOneIsReplacedNotUsed() throws Exception {
        Path file = dir.resolve(TicketKeys.FILE);
        TicketKeys.Key key = TicketKeys.open(file, clock).current();
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        TicketKeys replaced = TicketKeys.open(file, clock);
        assertThat(replaced.find(key.id())).isEmpty();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("rw-------");

        Files.writeString(file, "brine-ticket-keys 1\nnot a key\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        TicketKeys afterDamage = TicketKeys.open(file, clock);
        assertThat(afterDamage.find(replaced.current().id())).isEmpty();
        assertThat(TicketKeys.open(file, clock).current().id())
                .isEqualTo(afterDamage.current().id());
    }

    @Test
    void aSymbolicLinkIsNotFollowed() throws Exception {
        Path elsewhere = dir.resolve("elsewhere");
        Files.writeString(elsewhere, "kept");
        Path file = dir.resolve(TicketKeys.FILE);
        Files.createSymbolicLink(file, elsewhere);
        TicketKeys.open(file, clock);
        assertThat(Files.isSymbolicLink(file)).isFalse();
        assertThat(Files.readString(elsewhere)).isEqualTo("kept");
    }
}

package io.brine.master.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The record of the newest auth request taken per key: what a restart must not forget, and its file's rules. */
class SeenAuthRequestsTest {

    static final String WEB1 = Fingerprints.of(TestKeys.pair(1).getPublic());
    static final String OTHER = Fingerprints.of(TestKeys.pair(2).getPublic());

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(Instant.parse("2026-11-28T12:00:00Z"));

    Path file() {
        return dir.resolve("cache").resolve(SeenAuthRequests.FILE);
    }

    @Test
    void aRequestTakenBeforeARestartIsNotNewAfterItAndOnlyForItsKey() throws Exception {
        long ahead = clock.millis() + Duration.ofMinutes(4).toMillis();
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            assertThat(seen.isNewer("web1", WEB1, ahead)).isTrue();
            seen.record("web1", WEB1, ahead);
            assertThat(seen.isNewer("web1", WEB1, ahead)).isFalse();
        }
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            assertThat(seen.isNewer("web1", WEB1, ahead)).isFalse();
            assertThat(seen.isNewer("web1", WEB1, ahead - 1)).isFalse();
            assertThat(seen.isNewer("web1", WEB1, ahead + 1)).isTrue();
            // Another key (a stranger's under the same id, or another minion's) is not held back by it.
            assertThat(seen.isNewer("web1", OTHER, clock.millis())).isTrue();
            assertThat(seen.isNewer("db1", WEB1, clock.millis())).isTrue();
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file())))
                .isEqualTo("rw-------");
    }

    @Test
    void aFirstStartRefusesWhatIsDatedBeforeItAndTakesWhatIsNot() throws Exception {
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            assertThat(seen.isNewer("web1", WEB1, clock.millis() - 1)).isFalse();
            assertThat(seen.isNewer("web1", WEB1, clock.millis())).isTrue();
        }
        // The floor is on disk: a later start does not lower it.
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            assertThat(seen.isNewer("web1", WEB1, clock.millis() - 1)).isFalse();
        }
    }

    @Test
    void aRunThatDidNotStopCleanlyRaisesTheFloorToTheNextStartAndACleanOneKeepsIt() throws Exception {
        clock.advance(Duration.ofSeconds(10));
        long dated = clock.millis() - 1000; // dated behind the master's clock: written, not forced
        SeenAuthRequests crashed = SeenAuthRequests.open(file(), clock);
        crashed.record("web1", WEB1, dated);
        assertThat(Files.readAllLines(file())).last().asString().startsWith("web1 ");
        clock.advance(Duration.ofSeconds(1));
        long restart = clock.millis();
        // Never closed: as after a kill, whatever reached the disk. Requests of any key dated before the start are
        // refused, in case the lost run took them without a record; the fresh ones are taken.
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            assertThat(seen.isNewer("db1", OTHER, restart - 1)).isFalse();
            assertThat(seen.isNewer("db1", OTHER, restart)).isTrue();
            assertThat(seen.isNewer("web1", WEB1, dated)).isFalse();
            seen.record("web1", WEB1, restart);
        }
        assertThat(Files.readAllLines(file())).last().asString().startsWith("closed ");
        clock.advance(Duration.ofSeconds(1));
        // Closed cleanly: the floor stays where it was, and what was recorded still holds.
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            assertThat(seen.isNewer("db1", OTHER, restart)).isTrue();
            assertThat(seen.isNewer("db1", OTHER, restart - 1)).isFalse();
            assertThat(seen.isNewer("web1", WEB1, restart)).isFalse();
            assertThat(seen.isNewer("web1", WEB1, restart + 1)).isTrue();
        }
        crashed.close(); // its file was replaced at the restart: this changes nothing
    }

    @Test
    void recordsPastTheSkewAreLeftOutAtAStartAndTheFloorKeepsThemRefusedWhenTheClockGoesBack() throws Exception {
        long dated = clock.millis() + 1000;
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            seen.record("web1", WEB1, dated);
        }
        // One past the bound: the record's date is more than the skew behind the clock.
        clock.advance(Timestamps.MAX_CLOCK_SKEW.plusMillis(1001));
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            assertThat(seen.size()).isZero();
            clock.set(Instant.ofEpochMilli(dated));
            assertThat(seen.isNewer("web1", WEB1, dated)).isFalse();
        }
        assertThat(Files.readAllLines(file())).hasSize(2).first().asString().startsWith("floor ");
    }

    @Test
    void aRecordWithinTheSkewIsKeptAtAStart() throws Exception {
        long dated = clock.millis();
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            seen.record("web1", WEB1, dated);
        }
        clock.advance(Timestamps.MAX_CLOCK_SKEW);
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            assertThat(seen.size()).isOne();
            assertThat(seen.isNewer("web1", WEB1, dated)).isFalse();
        }
    }

    @Test
    void theFileIsRewrittenOnceItHasGrownOnePastItsBound() throws Exception {
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock, 10)) {
            // floor line + 9 appended: 10 lines, not over the bound yet.
            for (int i = 1; i <= 9; i++) {
                seen.record("web1", WEB1, clock.millis() + i);
            }
            assertThat(Files.readAllLines(file())).hasSize(10);
            seen.record("web1", WEB1, clock.millis() + 10);
            // The first start's floor, and the one live record.
            assertThat(Files.readAllLines(file()))
                    .containsExactly("floor " + clock.millis(), "web1 " + WEB1 + " " + (clock.millis() + 10));
        }
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            assertThat(seen.isNewer("web1", WEB1, clock.millis() + 10)).isFalse();
        }
    }

    @Test
    void aLastLineCutShortByACrashIsIgnored() throws Exception {
        long dated = clock.millis() + 5;
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            seen.record("web1", WEB1, dated);
        }
        Files.writeString(file(), "db1 " + OTHER.substring(0, 10), StandardOpenOption.APPEND);
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            assertThat(seen.isNewer("web1", WEB1, dated)).isFalse();
            assertThat(seen.isNewer("db1", OTHER, clock.millis())).isTrue();
        }
        assertThat(Files.readString(file())).endsWith("\n").doesNotContain("db1");
    }

    @Test
    void aDamagedLineStopsTheStartNamingTheFileAndTheLine() throws Exception {
        try (SeenAuthRequests seen = SeenAuthRequests.open(file(), clock)) {
            seen.record("web1", WEB1, clock.millis());
        }
        for (String damaged : List.of(
                "web1 " + WEB1 + " -5\n",
                "web1 " + WEB1 + "\n",
                "../x " + WEB1 + " 5\n",
                "\n",
                "floor 12345678901234567890\n")) {
            String kept = Files.readString(file());
            Files.writeString(file(), damaged, StandardOpenOption.APPEND);
            assertThatThrownBy(() -> SeenAuthRequests.open(file(), clock))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(file() + " is damaged at line 4")
                    .hasMessageContaining("remove it");
            Files.writeString(file(), kept);
        }
    }

    @Test
    void aFileOthersCouldHaveWrittenOrALinkStopsTheStart() throws Exception {
        SeenAuthRequests.open(file(), clock).close();
        Files.setPosixFilePermissions(file(), PosixFilePermissions.fromString("rw--w----"));
        assertThatThrownBy(() -> SeenAuthRequests.open(file(), clock))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("writable by its group");
        Files.setPosixFilePermissions(file(), PosixFilePermissions.fromString("rw-------"));
        Path elsewhere = Files.move(file(), dir.resolve("elsewhere"));
        Files.createSymbolicLink(file(), elsewhere);
        assertThatThrownBy(() -> SeenAuthRequests.open(file(), clock))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("symlink");
    }

    @Test
    void aFileOnePastItsSizeBoundStopsTheStart() throws Exception {
        SeenAuthRequests.open(file(), clock).close();
        try (RandomAccessFile grown = new RandomAccessFile(file().toFile(), "rw")) {
            grown.setLength(SeenAuthRequests.MAX_BYTES + 1L);
        }
        assertThatThrownBy(() -> SeenAuthRequests.open(file(), clock))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("larger than");
    }
}

package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.files.AtomicFiles;
import io.brine.minion.auth.MasterPin;
import io.brine.minion.auth.MinionKeyring;
import io.brine.minion.auth.MinionKeys;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KeyRotationTest {

    private static final Instant MADE = Instant.parse("2026-01-01T00:00:00Z");
    private static final Duration MAX_AGE = Duration.ofDays(90);

    @TempDir
    Path pkiDir;

    private final MovableClock clock = new MovableClock(MADE);

    private KeyRotation rotation(Optional<Duration> maxAge) throws Exception {
        Path pem = pkiDir.resolve(MinionKeys.PRIVATE_FILE);
        AtomicFiles.write(pem, Pem.bytes(TestKeys.privatePem(MinionFixture.MINION_KEY)), AtomicFiles.OWNER_READ);
        Files.setLastModifiedTime(pem, FileTime.from(MADE));
        MinionKeyring keyring = MinionKeyring.load(pkiDir, 2048);
        return new KeyRotation(
                "web1",
                keyring,
                new MasterPin(pkiDir, null),
                new StatusFile("web1", null, clock, "fp"),
                2048,
                clock,
                maxAge,
                Runnable::run);
    }

    @Test
    void aKeyIsDueOnlyWhenOlderThanKeyMaxAge() throws Exception {
        KeyRotation rotation = rotation(Optional.of(MAX_AGE));
        clock.set(MADE.plus(MAX_AGE));
        assertThat(rotation.dueByAge()).as("exactly key_max_age old").isFalse();
        clock.advance(Duration.ofSeconds(1));
        assertThat(rotation.dueByAge()).as("one second older").isTrue();
    }

    @Test
    void withoutKeyMaxAgeAKeyIsNeverRotatedByAge() throws Exception {
        KeyRotation rotation = rotation(Optional.empty());
        clock.set(MADE.plus(Duration.ofDays(3650)));
        assertThat(rotation.dueByAge()).isFalse();
    }
}

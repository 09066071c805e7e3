package io.brine.master.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.testing.MovableClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class StoreWritesTest {

    final MovableClock clock = new MovableClock(Instant.parse("2026-11-28T18:00:00Z"));
    final StoreWrites writes = new StoreWrites(clock);

    @Test
    void aFailedAuditLineIsCountedAndNamedUntilAWriteSucceeds() {
        boolean written = writes.audit("brine auth", "web1 (10.0.0.7)", () -> {
            throw new UncheckedIOException(
                    "cannot write to /cache/audit.log: No space left on device",
                    new IOException("No space left on device"));
        });

        assertThat(written).isFalse();
        assertThat(writes.auditFailures()).isEqualTo(1);
        assertThat(writes.problem())
                .contains("cannot write: cannot write to /cache/audit.log: No space left on " + "device");
        assertThat(writes.audit("brine auth", "web1 (10.0.0.7)", () -> {})).isTrue();
        assertThat(writes.problem()).isEmpty();
    }

    @Test
    void aFailureNobodyRepeatsIsForgottenOnePastTheWindow() {
        writes.failed("/pki/minions_pre/web1: No space left on device");

        clock.advance(StoreWrites.NOT_READY_FOR);
        assertThat(writes.problem()).isPresent();
        clock.advance(Duration.ofMillis(1));
        assertThat(writes.problem()).isEmpty();
    }
}

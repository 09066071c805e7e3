package io.brine.master.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyDecision;
import io.brine.store.policy.PolicyDecision;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A pending minion's retries are recorded once, then only what changes. */
class AuditedAuthTest {

    @TempDir
    Path dir;

    private long lines(Path file, String event) throws Exception {
        return Files.readAllLines(file).stream()
                .filter(line -> line.contains("\"" + event + "\""))
                .count();
    }

    @Test
    void aPendingKeyIsRecordedOnceAndAgainOnlyWhenItsKeyOrAnswerChanges() throws Exception {
        Path file = dir.resolve("audit.log");
        AuditedAuth audit = new AuditedAuth(AuditLog.openFile(file, Clock.systemUTC()));
        PolicyDecision none = PolicyDecision.none();
        for (int retry = 0; retry < 20; retry++) { // ten minutes of retries every 30 s
            audit.decided("web1", "10.0.0.1:4506", "fp1", new KeyDecision.Pending("web1", "fp1", "awaiting"), none);
        }
        assertThat(lines(file, "auth-pending")).isEqualTo(1);

        audit.decided("web1", "10.0.0.1:4506", "fp2", new KeyDecision.Pending("web1", "fp2", "awaiting"), none);
        assertThat(lines(file, "auth-pending")).as("another key for the id").isEqualTo(2);

        audit.decided("web1", "10.0.0.1:4506", "fp2", new KeyDecision.Rejected("web1", "fp2", "rejected"), none);
        audit.decided("web1", "10.0.0.1:4506", "fp2", new KeyDecision.Pending("web1", "fp2", "awaiting"), none);
        assertThat(lines(file, "auth-pending"))
                .as("pending again after another answer")
                .isEqualTo(3);
        assertThat(lines(file, "auth-rejected")).isEqualTo(1);
    }

    @Test
    void theMemoryIsBoundedAndForgetsTheLeastRecentlyAnsweredFirst() {
        RepeatedPending pending = new RepeatedPending(2);
        assertThat(pending.repeats("a", "fa", "r")).isFalse();
        assertThat(pending.repeats("b", "fb", "r")).isFalse();
        assertThat(pending.repeats("a", "fa", "r")).isTrue();
        assertThat(pending.repeats("c", "fc", "r")).isFalse(); // b, the least recent, is forgotten
        assertThat(pending.repeats("a", "fa", "r")).isTrue();
        assertThat(pending.repeats("b", "fb", "r")).isFalse();
    }
}

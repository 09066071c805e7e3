package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.BulkDelete;
import io.brine.store.keys.KeyState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * brine-key deleting thousands of accepted keys next to a running master: the master sees the deletion at once
 * (brine-key holds the store lock throughout), ends the sessions and rotates the publish key once, not once a poll.
 */
class BulkRemovalRotationTest {

    private static final int MINIONS = 1200;

    @Test
    void theMasterRotatesThePublishKeyOnceForAWholeBulkDeletion(@TempDir Path dir) throws Exception {
        try (WiredMaster wired = WiredMaster.start(dir)) {
            Path accepted = wired.config().pkiDir().resolve(KeyState.ACCEPTED.dirName());
            for (int i = 0; i < MINIONS; i++) {
                Path file = accepted.resolve(String.format("m%05d", i));
                Files.writeString(file, TestKeys.publicPem(10 + i % 50));
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            }
            wired.keyStore().refresh();
            assertThat(wired.keyStore().acceptedIds()).hasSize(MINIONS);
            long generation = wired.master().keyring().current().number();

            try (BulkDelete bulk = BulkDelete.open(wired.config().pkiDir(), AuditLog.none())) {
                for (int i = 0; i < MINIONS; i++) {
                    assertThat(bulk.delete(String.format("m%05d", i), KeyState.ACCEPTED, null, "admin")
                                    .done())
                            .isTrue();
                }
            }

            await().until(() -> !rotations(wired).isEmpty());
            assertThat(wired.keyStore().acceptedIds()).isEmpty();
            assertThat(rotations(wired))
                    .singleElement()
                    .asString()
                    .contains("keys of " + MINIONS + " minions removed (m00000, ...)");
            assertThat(wired.master().keyring().current().number()).isEqualTo(generation + 1);
        }
    }

    private static List<String> rotations(WiredMaster wired) throws Exception {
        Path audit = wired.config().auditLog();
        return Files.exists(audit)
                ? Files.readAllLines(audit).stream()
                        .filter(line -> line.contains("\"publish-key-rotated\""))
                        .toList()
                : List.of();
    }
}

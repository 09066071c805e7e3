package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.store.audit.AuditLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link KeyStoreContract} on the filesystem store; the other store is another process's (brine-key's). */
class FileKeyStoreContractTest extends KeyStoreContract {

    @Override
    protected KeyStore open(Path pkiDir, AuditLog audit) throws Exception {
        return FileKeyStore.open(KeyStoreOptions.builder(pkiDir)
                .auditLog(audit)
                .masterKey(false)
                .pollInterval(Duration.ofMillis(50))
                .build());
    }

    // ------------------------------------------------------------ key_rotation: pending (issue 25)

    @Test
    void aPendingRotationWaitsBesideTheAcceptedKeyAndAnAdminsAcceptBoundToItsFingerprintRotates() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        String oldFp = Fingerprints.of(key(1));
        String newFp = Fingerprints.of(key(2));

        RotationDecision decision = store.rotate("web1", key(1), key(2), KeyRotationPolicy.PENDING, "minion web1");

        assertThat(decision).isInstanceOf(RotationDecision.Pending.class);
        assertThat(store.acceptedKey("web1")).as("the old key stays accepted").contains(key(1));
        assertThat(store.pendingRotations()).isEqualTo(Map.of("web1", newFp));
        assertThat(Files.getPosixFilePermissions(tmp.resolve("pki/minions_rotating/web1")))
                .isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(Files.readAllLines(audit.file()))
                .last()
                .asString()
                .contains("\"key-rotation-pending\"", newFp, "accepted key " + oldFp + " unchanged");
        // Asked again (the minion's poll): still pending, nothing written.
        long lines = Files.readAllLines(audit.file()).size();
        assertThat(store.rotate("web1", key(1), key(2), KeyRotationPolicy.PENDING, "minion web1"))
                .isInstanceOf(RotationDecision.Pending.class);
        assertThat(Files.readAllLines(audit.file())).hasSize((int) lines);

        assertThatThrownBy(() -> store.acceptRotation("web1", null, "admin"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fingerprint");
        AdminResult wrong = store.acceptRotation("web1", oldFp, "admin");
        assertThat(wrong.status()).isEqualTo(AdminResult.Status.REFUSED);
        assertThat(wrong.message()).contains("waits with the new key " + newFp);
        assertThat(store.acceptedKey("web1")).contains(key(1));

        assertThat(store.acceptRotation("web1", newFp.toUpperCase(Locale.ROOT), "admin")
                        .done())
                .isTrue();
        assertThat(store.acceptedKey("web1")).contains(key(2));
        assertThat(store.pendingRotations()).isEmpty();
        assertThat(Files.readAllLines(audit.file()))
                .last()
                .asString()
                .contains("\"key-rotated\"", "\"admin\"", "old key " + oldFp + " retired");
        // The minion's next ask is answered as done; its old key is retired.
        assertThat(store.rotate("web1", key(1), key(2), KeyRotationPolicy.PENDING, "minion web1"))
                .isInstanceOf(RotationDecision.Rotated.class);
        assertThat(store.offer("web1", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Denied.class);
    }

    @Test
    void aRejectedPendingRotationKeepsTheOldKeyAndTheMinionsNextAskIsRefused() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        store.rotate("web1", key(1), key(2), KeyRotationPolicy.PENDING, "minion web1");

        assertThat(store.rejectRotation("web1", Fingerprints.of(key(2)), "admin")
                        .done())
                .isTrue();

        assertThat(store.acceptedKey("web1")).contains(key(1));
        assertThat(store.pendingRotations()).isEmpty();
        assertThat(Files.readAllLines(audit.file())).last().asString().contains("\"key-rotation-rejected\"");
        assertThat(store.rotate("web1", key(1), key(2), KeyRotationPolicy.PENDING, "minion web1"))
                .isInstanceOf(RotationDecision.Refused.class);
        assertThat(store.pendingRotations()).isEmpty();
    }

    @Test
    void aPendingRotationOfAnIdRejectedMeanwhileIsNotAcceptedAndIsDropped() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        store.rotate("web1", key(1), key(2), KeyRotationPolicy.PENDING, "minion web1");
        store.reject("web1", KeyState.ACCEPTED, null, "admin");

        AdminResult accept = store.acceptRotation("web1", Fingerprints.of(key(2)), "admin");

        assertThat(accept.status()).isEqualTo(AdminResult.Status.REFUSED);
        assertThat(accept.message()).contains("no longer holds the accepted key that asked");
        assertThat(store.pendingRotations()).isEmpty();
        assertThat(store.lookup("web1", key(2))).isEqualTo(KeyLookup.REJECTED);
    }

    @Test
    void aRotationLeftByADeletedIdIsNeitherShownNorAcceptedForAnotherMinionAcceptedUnderIt() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        store.rotate("web1", key(1), key(2), KeyRotationPolicy.PENDING, "minion web1");
        store.delete("web1", "admin");
        store.offer("web1", key(3), PolicyVerdict.ACCEPT);

        assertThat(store.pendingRotations()).isEmpty();
        assertThat(store.acceptRotation("web1", Fingerprints.of(key(2)), "admin")
                        .status())
                .isEqualTo(AdminResult.Status.REFUSED);
        assertThat(store.acceptedKey("web1")).contains(key(3));
    }
}

package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** brine-key's deletion of many keys: each judged under the lock, each audited, all seen by the master at once. */
class BulkDeleteTest {

    @TempDir
    Path tmp;

    Path pki;
    FileKeyStore master;
    final List<List<KeyChange>> heard = new CopyOnWriteArrayList<>();

    @BeforeEach
    void openMaster() throws Exception {
        pki = tmp.resolve("pki");
        master = FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build());
        master.addListener(new KeyChangeListener() {
            @Override
            public void onChange(KeyChange change) {
                heard.add(List.of(change));
            }

            @Override
            public void onChanges(List<KeyChange> changes) {
                heard.add(List.copyOf(changes));
            }
        });
    }

    @AfterEach
    void closeMaster() {
        master.close();
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    private void write(KeyState state, String name, int key) throws Exception {
        Path file = pki.resolve(state.dirName()).resolve(name);
        Files.writeString(file, TestKeys.publicPem(key));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    }

    @Test
    void eachKeyIsJudgedOnItsFileAndBoundToTheFingerprintShown() throws Exception {
        master.offer("web1", key(1), PolicyVerdict.ACCEPT);
        master.offer("web1", key(2), PolicyVerdict.NONE); // denied
        master.offer("web2", key(3), PolicyVerdict.NONE);
        master.offer("evil", key(4), PolicyVerdict.REJECT);
        write(KeyState.PENDING, "evil", 5); // a hand-made copy: rejected/ takes precedence
        write(KeyState.PENDING, "junk", 6);
        Files.writeString(pki.resolve("minions_pre").resolve("junk"), "not a key");
        Path auditFile = tmp.resolve("audit.log");

        try (AuditLog audit = AuditLog.openFile(auditFile, Clock.systemUTC());
                BulkDelete bulk = BulkDelete.open(pki, audit)) {
            assertThat(bulk.delete("web2", KeyState.PENDING, Fingerprints.of(key(9)), "admin")
                            .message())
                    .isEqualTo("web2: the pending key has fingerprint " + Fingerprints.of(key(3)) + ", not "
                            + Fingerprints.of(key(9)) + "; nothing changed");
            assertThat(bulk.delete("evil", KeyState.PENDING, null, "admin").status())
                    .isEqualTo(AdminResult.Status.NOT_FOUND);
            assertThat(bulk.delete("junk", KeyState.PENDING, null, "admin").message())
                    .startsWith("junk: minions_pre/junk is not a valid public key");
            assertThat(bulk.delete("web1", KeyState.ACCEPTED, Fingerprints.of(key(1)), "admin")
                            .done())
                    .isTrue();
            assertThat(bulk.delete("web1", KeyState.DENIED, null, "admin").done())
                    .isTrue();
            assertThat(bulk.delete("web2", KeyState.PENDING, Fingerprints.of(key(3)), "admin")
                            .done())
                    .isTrue();
            assertThat(bulk.delete("web2", KeyState.PENDING, null, "admin").message())
                    .isEqualTo("web2: no pending key");
            assertThat(bulk.unaudited()).isEmpty();
        }

        assertThat(pki.resolve("minions").resolve("web1")).doesNotExist();
        assertThat(pki.resolve("minions_denied").resolve("web1")).doesNotExist();
        assertThat(pki.resolve("minions_pre").resolve("web2")).doesNotExist();
        assertThat(pki.resolve("minions_pre").resolve("evil")).exists();
        assertThat(Files.readAllLines(auditFile))
                .hasSize(3)
                .allMatch(line -> line.contains("\"key-deleted\"")
                        && line.contains("\"actor\":\"admin\"")
                        && line.contains("deleted by admin"));
    }

    @Test
    void aMasterPollingMeanwhileSeesTheWholeDeletionAsOneList() throws Exception {
        int count = 2 * BulkDelete.BATCH + 7;
        for (int i = 0; i < count; i++) {
            write(KeyState.ACCEPTED, String.format("m%05d", i), 10 + i % 50);
        }
        master.refresh();
        await().until(() -> heard.stream().mapToInt(List::size).sum() == count); // told on the store's thread
        heard.clear();
        AtomicBoolean stop = new AtomicBoolean();
        Thread poller = new Thread(() -> {
            while (!stop.get()) {
                master.poll(); // waits for the lock while the deletion holds it
            }
        });
        poller.start();
        try (BulkDelete bulk = BulkDelete.open(pki, AuditLog.none())) {
            for (int i = 0; i < count; i++) {
                assertThat(bulk.delete(String.format("m%05d", i), KeyState.ACCEPTED, null, "admin")
                                .done())
                        .isTrue();
            }
        } finally {
            await().until(() -> master.acceptedIds().isEmpty());
            stop.set(true);
            poller.join();
        }

        await().until(() -> heard.stream().mapToInt(List::size).sum() == count);
        assertThat(heard).hasSize(1);
        assertThat(heard.get(0))
                .allMatch(change -> change.from().orElseThrow() == KeyState.ACCEPTED
                        && change.to().isEmpty());
    }
}

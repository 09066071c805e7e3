package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The master hears, within a second, what brine-key (another process, or another store) changed. */
class KeyStoreNotificationTest {

    private static final Duration WITHIN = Duration.ofSeconds(1);

    @TempDir
    Path tmp;

    private KeyStore master;
    private final List<KeyChange> heard = new CopyOnWriteArrayList<>();

    @BeforeEach
    void openMaster() throws Exception {
        master = KeyStore.open(KeyStoreOptions.builder(tmp.resolve("pki")).masterKey(false)
                .rescanInterval(Duration.ofMillis(500)).build());
        master.addListener(heard::add);
    }

    @AfterEach
    void closeMaster() {
        master.close();
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    private static KeyChange change(String id, KeyState from, KeyState to, int key) {
        return new KeyChange(id, Optional.ofNullable(from), Optional.ofNullable(to),
                io.brine.protocol.crypto.Fingerprints.of(key(key)));
    }

    @Test
    void theMastersOwnChangesAreHeard() {
        master.offer("web1", key(1), PolicyVerdict.NONE);
        await().atMost(WITHIN).until(() -> heard.contains(change("web1", null, KeyState.PENDING, 1)));
    }

    @Test
    void anAcceptByAnotherProcessIsHeardWithinASecond() throws Exception {
        master.offer("web1", key(1), PolicyVerdict.NONE);
        Process worker = KeyStoreWorker.start("accept", tmp.resolve("pki").toString(), "web1");
        assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(new String(worker.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).contains("DONE");

        await().atMost(WITHIN).until(() -> heard.contains(change("web1", KeyState.PENDING, KeyState.ACCEPTED, 1)));
        assertThat(master.acceptedKey("web1")).contains(key(1));
    }

    @Test
    void rejectAndDeleteByAnotherStoreAreHeardWithinASecond() throws Exception {
        master.offer("web1", key(1), PolicyVerdict.ACCEPT);
        master.offer("web2", key(2), PolicyVerdict.ACCEPT);
        try (KeyStore admin = KeyStore.open(KeyStoreOptions.builder(tmp.resolve("pki")).masterKey(false)
                .pollInterval(Duration.ZERO).build())) {
            admin.reject("web1", KeyState.ACCEPTED, null, "admin");
            admin.delete("web2", KeyState.ACCEPTED, null, "admin");
        }

        await().atMost(WITHIN).until(() -> heard.containsAll(List.of(
                change("web1", KeyState.ACCEPTED, KeyState.REJECTED, 1),
                change("web2", KeyState.ACCEPTED, null, 2))));
        assertThat(master.acceptedIds()).isEmpty();
        assertThat(master.offer("web1", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Rejected.class);
    }

    @Test
    void aKeyMovedByHandIsHeardWithinASecond() throws Exception {
        master.offer("web1", key(1), PolicyVerdict.NONE);
        Path pki = tmp.resolve("pki");
        Files.move(pki.resolve("minions_pre/web1"), pki.resolve("minions/web1"));

        await().atMost(WITHIN).until(() -> heard.contains(change("web1", KeyState.PENDING, KeyState.ACCEPTED, 1)));
    }

    @Test
    void aFailingListenerDoesNotStopTheOthers() {
        master.addListener(change -> {
            throw new IllegalStateException("boom");
        });
        List<KeyChange> second = new CopyOnWriteArrayList<>();
        master.addListener(second::add);

        master.offer("web1", key(1), PolicyVerdict.NONE);

        await().atMost(WITHIN).until(() -> second.size() == 1);
    }
}

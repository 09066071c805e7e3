package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master hears what brine-key (another process, or another store) changed: at its next poll (every
 * {@code pollInterval}, 200 ms by default), or for a file edited in place, at its next full rescan. The master here
 * polls when the test says and measures the rescan interval on the test's ticker, so nothing waits for real time.
 */
class KeyStoreNotificationTest {

    private static final Duration RESCAN = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    private final AtomicLong nanos = new AtomicLong();
    private FileKeyStore master;
    private final List<KeyChange> heard = new CopyOnWriteArrayList<>();

    @BeforeEach
    void openMaster() throws Exception {
        master = FileKeyStore.open(KeyStoreOptions.builder(pki())
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .rescanInterval(RESCAN)
                .ticker(nanos::get)
                .build());
        master.addListener(heard::add);
    }

    @AfterEach
    void closeMaster() {
        master.close();
    }

    private Path pki() {
        return tmp.resolve("pki");
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    private static KeyChange change(String id, KeyState from, KeyState to, int key) {
        return new KeyChange(id, Optional.ofNullable(from), Optional.ofNullable(to), Fingerprints.of(key(key)));
    }

    private KeyStore admin() throws Exception {
        return FileKeyStore.open(KeyStoreOptions.builder(pki())
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build());
    }

    @Test
    void theMastersOwnChangesAreHeard() {
        master.offer("web1", key(1), PolicyVerdict.NONE);
        await().until(() -> heard.contains(change("web1", null, KeyState.PENDING, 1)));
    }

    @Test
    void anAcceptByAnotherProcessIsHeardAtTheNextPoll() throws Exception {
        master.offer("web1", key(1), PolicyVerdict.NONE);
        Process worker = KeyStoreWorker.start("accept", pki().toString(), "web1");
        assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(new String(worker.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                .contains("DONE");
        assertThat(master.acceptedKey("web1")).as("not polled yet").isEmpty();

        master.poll();

        assertThat(master.acceptedKey("web1")).contains(key(1));
        await().until(() -> heard.contains(change("web1", KeyState.PENDING, KeyState.ACCEPTED, 1)));
    }

    @Test
    void rejectAndDeleteByAnotherStoreAreHeardAtTheNextPoll() throws Exception {
        master.offer("web1", key(1), PolicyVerdict.ACCEPT);
        master.offer("web2", key(2), PolicyVerdict.ACCEPT);
        try (KeyStore admin = admin()) {
            admin.reject("web1", KeyState.ACCEPTED, null, "admin");
            admin.delete("web2", KeyState.ACCEPTED, null, "admin");
        }

        master.poll();

        assertThat(master.acceptedIds()).isEmpty();
        await().until(() -> heard.containsAll(List.of(
                change("web1", KeyState.ACCEPTED, KeyState.REJECTED, 1), change("web2", KeyState.ACCEPTED, null, 2))));
        assertThat(master.offer("web1", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Rejected.class);
    }

    @Test
    void aKeyMovedByHandIsHeardAtTheNextPoll() throws Exception {
        master.offer("web1", key(1), PolicyVerdict.NONE);
        Files.move(pki().resolve("minions_pre/web1"), pki().resolve("minions/web1"));

        master.poll();

        await().until(() -> heard.contains(change("web1", KeyState.PENDING, KeyState.ACCEPTED, 1)));
    }

    @Test
    void aKeyRewrittenInPlaceIsHeardAtTheFullRescanTheTickerMakesDue() throws Exception {
        master.offer("web1", key(1), PolicyVerdict.ACCEPT);
        // Written in place: neither the lock's counter nor the directory changes, so only a full rescan sees it.
        Files.write(pki().resolve("minions/web1"), Pem.bytes(Pem.publicKeySpki(key(2))));

        master.poll();
        assertThat(master.acceptedKey("web1")).as("before the rescan is due").contains(key(1));

        nanos.addAndGet(RESCAN.toNanos());
        master.poll();

        assertThat(master.acceptedKey("web1")).contains(key(2));
        await().until(() -> heard.contains(change("web1", KeyState.ACCEPTED, KeyState.ACCEPTED, 2)));
    }

    /**
     * An ask to rotate written without a bump of the asks' counter, as brine-key leaves it when the counter cannot be
     * written (a full disk): the master reads it at its next full rescan, not never.
     */
    @Test
    void aRotationAskWrittenWithoutABumpOfItsCounterIsReadAtTheFullRescan() throws Exception {
        master.offer("web1", key(1), PolicyVerdict.ACCEPT);
        Path asks = Files.createDirectories(pki().resolve(RotationAsks.DIRECTORY));
        Files.write(
                asks.resolve("web1"),
                RotationAsks.encode(new RotationAsks.Ask(Fingerprints.of(key(1)), Instant.ofEpochMilli(1))));

        master.poll();
        assertThat(master.rotationAsked("web1")).as("before the rescan is due").isEmpty();

        nanos.addAndGet(RESCAN.toNanos());
        master.poll();

        assertThat(master.rotationAsked("web1")).contains(Fingerprints.of(key(1)));
    }

    @Test
    void theWatcherPollsByItselfEveryPollInterval() throws Exception {
        List<KeyChange> polled = new CopyOnWriteArrayList<>();
        try (KeyStore watching = FileKeyStore.open(KeyStoreOptions.builder(pki())
                        .masterKey(false)
                        .pollInterval(Duration.ofMillis(20))
                        .build());
                KeyStore admin = admin()) {
            watching.addListener(polled::add);
            admin.offer("web1", key(1), PolicyVerdict.ACCEPT);

            await().until(() -> polled.contains(change("web1", null, KeyState.ACCEPTED, 1)));
        }
    }

    @Test
    void aFailingListenerDoesNotStopTheOthers() {
        master.addListener(change -> {
            throw new IllegalStateException("boom");
        });
        List<KeyChange> second = new CopyOnWriteArrayList<>();
        master.addListener(second::add);

        master.offer("web1", key(1), PolicyVerdict.NONE);

        await().until(() -> second.size() == 1);
    }
}

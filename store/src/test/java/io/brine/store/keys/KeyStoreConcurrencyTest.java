package io.brine.store.keys;

import static io.brine.store.keys.KeyStoreWorker.STABLE_KEYS;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.SuiteDefaults;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several writer processes (and two stores in this JVM) work on the same ids at once; afterwards no key is lost or
 * corrupted, and the audit log, written under the lock, tells one consistent history per id.
 */
class KeyStoreConcurrencyTest {

    private static final int IDS = 10;
    private static final int PROCESSES = 3;
    private static final int OPERATIONS = 120;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void concurrentWritersNeverCorruptTheStoreOrLoseAKey() throws Exception {
        Path pki = tmp.resolve("pki");
        Path cache = tmp.resolve("cache");
        try (AuditLog audit = AuditLog.open(cache, Clock.systemUTC());
                KeyStore seed = open(pki, audit)) {
            for (int i = 0; i < IDS; i++) {
                seed.offer(KeyStoreWorker.stableId(i), KeyStoreWorker.key(STABLE_KEYS + i), PolicyVerdict.NONE);
            }
        }
        List<Process> workers = new ArrayList<>();
        for (int p = 0; p < PROCESSES; p++) {
            workers.add(KeyStoreWorker.start(
                    "mixed",
                    pki.toString(),
                    cache.toString(),
                    String.valueOf(1000 + p),
                    String.valueOf(IDS),
                    String.valueOf(OPERATIONS)));
        }
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            long seed = 2000 + t;
            Thread thread = new Thread(() -> {
                try (AuditLog audit = AuditLog.open(cache, Clock.systemUTC());
                        KeyStore store = open(pki, audit)) {
                    Random random = new Random(seed);
                    for (int n = 0; n < OPERATIONS / 2; n++) {
                        int i = random.nextInt(IDS);
                        String id = KeyStoreWorker.stableId(i);
                        switch (random.nextInt(3)) {
                            case 0 -> store.accept(id, KeyState.PENDING, null, "thread");
                            case 1 -> store.reject(id, KeyState.ACCEPTED, null, "thread");
                            default -> store.accept(id, KeyState.REJECTED, null, "thread");
                        }
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Process worker : workers) {
            assertThat(worker.waitFor(SuiteDefaults.WORK.toSeconds(), TimeUnit.SECONDS))
                    .as("a worker process still running after %s", SuiteDefaults.WORK)
                    .isTrue();
            assertThat(new String(worker.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                    .contains("done");
            assertThat(worker.exitValue()).isZero();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(failures).isEmpty();

        Map<String, KeyState> onDisk = new HashMap<>();
        for (int i = 0; i < IDS; i++) {
            String id = KeyStoreWorker.stableId(i);
            List<KeyState> states = new ArrayList<>();
            for (KeyState state : List.of(KeyState.PENDING, KeyState.ACCEPTED, KeyState.REJECTED)) {
                Path file = pki.resolve(state.dirName()).resolve(id);
                if (Files.exists(file)) {
                    states.add(state);
                    assertThat(Files.readString(file)).as(id).isEqualTo(TestKeys.publicPem(STABLE_KEYS + i));
                }
            }
            assertThat(states).as(id).hasSize(1);
            onDisk.put(id, states.get(0));
        }
        try (KeyStore store = open(pki, AuditLog.none())) {
            assertThat(store.list().problems()).isEmpty();
        }
        assertEachIdHasOneConsistentHistory(cache.resolve(AuditLog.FILE_NAME), onDisk);
    }

    /** Each exclusive-state change starts where the previous one ended, and the last one ends where the id is. */
    private static void assertEachIdHasOneConsistentHistory(Path auditLog, Map<String, KeyState> onDisk)
            throws IOException {
        Map<String, String> last = new HashMap<>();
        int changes = 0;
        for (String line : Files.readAllLines(auditLog)) {
            JsonNode event = JSON.readTree(line);
            String id = event.get("id").asText();
            String from = event.path("from").asText(null);
            String to = event.path("to").asText(null);
            if ("denied".equals(from) || "denied".equals(to)) {
                continue;
            }
            assertThat(from).as("history of %s: %s", id, line).isEqualTo(last.get(id));
            assertThat(event.get("fingerprint").asText())
                    .isEqualTo(Fingerprints.of(
                            KeyStoreWorker.key(STABLE_KEYS + Integer.parseInt(id.substring("stable-".length())))));
            last.put(id, to);
            changes++;
        }
        assertThat(changes).isGreaterThan(IDS * 3);
        onDisk.forEach((id, state) -> assertThat(last.get(id)).as(id).isEqualTo(state.label()));
    }

    private static KeyStore open(Path pki, AuditLog audit) throws Exception {
        return FileKeyStore.open(KeyStoreOptions.builder(pki)
                .auditLog(audit)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build());
    }
}

package io.brine.store.keys;

import static io.brine.store.keys.KeyStoreWorker.CHURN_KEYS;
import static io.brine.store.keys.KeyStoreWorker.OTHER_KEYS;
import static io.brine.store.keys.KeyStoreWorker.STABLE_KEYS;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A separate JVM runs accept/reject/delete/offer operations and is killed with SIGKILL at random moments; after
 * each kill the store must hold every id in exactly one state with its key intact.
 */
class KeyStoreCrashTest {

    private static final int STABLE = 12;
    private static final int CHURN = 8;
    private static final int ROUNDS = 6;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void sigkillAtRandomMomentsNeverLosesDuplicatesOrCorruptsAKey() throws Exception {
        Path pki = tmp.resolve("pki");
        Path cache = tmp.resolve("cache");
        try (KeyStore store = open(pki)) {
            for (int i = 0; i < STABLE; i++) {
                store.offer(KeyStoreWorker.stableId(i), KeyStoreWorker.key(STABLE_KEYS + i), PolicyVerdict.NONE);
            }
        }
        Random random = new Random(20260301L);
        int totalOperations = 0;
        for (int round = 0; round < ROUNDS; round++) {
            Process worker = KeyStoreWorker.start(
                    "crash",
                    pki.toString(),
                    cache.toString(),
                    String.valueOf(random.nextLong()),
                    String.valueOf(STABLE),
                    String.valueOf(CHURN));
            int killAfter = 5 + random.nextInt(80);
            try (BufferedReader lines =
                    new BufferedReader(new InputStreamReader(worker.getInputStream(), StandardCharsets.UTF_8))) {
                assertThat(lines.readLine()).isEqualTo("ready");
                for (int n = 0; n < killAfter; n++) {
                    assertThat(lines.readLine()).as("worker output").isNotNull();
                }
                // The worker keeps going while we read: the kill lands somewhere inside a later operation.
                worker.destroyForcibly();
                assertThat(worker.waitFor(10, TimeUnit.SECONDS)).isTrue();
            }
            totalOperations += killAfter;
            assertInvariants(pki, round);
            assertAuditLinesAreWhole(cache);
        }
        assertThat(totalOperations).isGreaterThan(ROUNDS * 5);

        try (KeyStore store = open(pki)) {
            assertNoTempFiles(pki);
            KeyListing listing = store.list();
            assertThat(listing.problems()).isEmpty();
            for (int i = 0; i < STABLE; i++) {
                String id = KeyStoreWorker.stableId(i);
                long states = Stream.of(KeyState.PENDING, KeyState.ACCEPTED, KeyState.REJECTED)
                        .filter(s -> listing.find(id, s).isPresent())
                        .count();
                assertThat(states).as(id).isEqualTo(1);
            }
        }
    }

    private static KeyStore open(Path pki) throws Exception {
        return FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build());
    }

    private static void assertInvariants(Path pki, int round) throws Exception {
        for (int i = 0; i < STABLE; i++) {
            String id = KeyStoreWorker.stableId(i);
            assertThat(statesHolding(pki, id))
                    .as("round %d: %s is in exactly one state", round, id)
                    .hasSize(1);
            assertKeyIntact(pki, id, STABLE_KEYS + i);
        }
        for (int i = 0; i < CHURN; i++) {
            String id = KeyStoreWorker.churnId(i);
            assertThat(statesHolding(pki, id).size())
                    .as("round %d: %s is in at most one state", round, id)
                    .isLessThanOrEqualTo(1);
            assertKeyIntact(pki, id, CHURN_KEYS + i);
        }
        for (KeyState state : KeyState.values()) {
            try (Stream<Path> files = Files.list(pki.resolve(state.dirName()))) {
                for (Path file : files.toList()) {
                    String name = file.getFileName().toString();
                    if (name.startsWith(AtomicFiles.TEMP_PREFIX)) {
                        continue;
                    }
                    assertThat(MinionIds.isValid(name))
                            .as("round %d: %s", round, file)
                            .isTrue();
                    if (state == KeyState.DENIED) {
                        int index = name.startsWith("stable-") ? STABLE_KEYS : CHURN_KEYS;
                        index += Integer.parseInt(name.substring(name.indexOf('-') + 1));
                        assertThat(Files.readString(file))
                                .as("round %d: %s", round, file)
                                .isEqualTo(TestKeys.publicPem(OTHER_KEYS + index));
                    }
                }
            }
        }
    }

    private static Set<KeyState> statesHolding(Path pki, String id) {
        Set<KeyState> states = new HashSet<>();
        for (KeyState state : List.of(KeyState.PENDING, KeyState.ACCEPTED, KeyState.REJECTED)) {
            if (Files.exists(pki.resolve(state.dirName()).resolve(id))) {
                states.add(state);
            }
        }
        return states;
    }

    private static void assertKeyIntact(Path pki, String id, int keyIndex) throws Exception {
        for (KeyState state : statesHolding(pki, id)) {
            assertThat(Files.readString(pki.resolve(state.dirName()).resolve(id)))
                    .as(id)
                    .isEqualTo(TestKeys.publicPem(keyIndex));
        }
    }

    private static void assertNoTempFiles(Path pki) throws Exception {
        try (Stream<Path> files = Files.walk(pki)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(AtomicFiles::isTemp);
        }
    }

    private static void assertAuditLinesAreWhole(Path cache) throws Exception {
        Path log = cache.resolve(AuditLog.FILE_NAME);
        if (!Files.exists(log)) {
            return;
        }
        String content = Files.readString(log);
        assertThat(content).endsWith("\n");
        for (String line : content.split("\n")) {
            assertThat(JSON.readTree(line).get("event").asText()).startsWith("key-");
        }
    }
}

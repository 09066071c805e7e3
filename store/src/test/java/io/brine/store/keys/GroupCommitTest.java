package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Concurrent first offers are a group commit: they share one force of {@code minions_pre/} (and one counter bump
 * and audit force), and none is answered before the force that makes its key durable has returned. A test hook
 * stands at that force; what it has forced is the disk a power loss would leave.
 */
class GroupCommitTest {

    private static final int OFFERS = 8;

    @TempDir
    Path tmp;

    private final ExecutorService minions = Executors.newFixedThreadPool(OFFERS);
    private final Set<String> durable = ConcurrentHashMap.newKeySet();
    private final AtomicInteger forces = new AtomicInteger();
    private final List<AuditLog> audits = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        minions.shutdownNow();
        assertThat(minions.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        for (AuditLog audit : audits) {
            audit.close();
        }
    }

    @Test
    void concurrentFirstOffersShareOneForceAndNoneIsAnsweredBeforeIt() throws Exception {
        CountDownLatch firstForce = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger firstBatch = new AtomicInteger();
        try (FileKeyStore store = open(KeyStoreOptions.builder(pki()), dir -> {
            if (forces.incrementAndGet() == 1) {
                firstBatch.set(names(dir).size());
                firstForce.countDown();
                waitFor(release);
            }
            force(dir);
        })) {
            Map<String, String> early = new ConcurrentHashMap<>();
            List<Future<Offer>> answers = new ArrayList<>();
            for (int i = 0; i < OFFERS; i++) {
                answers.add(offer(store, i, early));
            }
            waitFor(firstForce);
            // Every offer not in the first batch waits for the next: none of them writes or is answered meanwhile.
            await().until(() -> store.queuedOffers() == OFFERS - firstBatch.get());
            assertThat(answers).noneMatch(Future::isDone);
            release.countDown();
            for (Future<Offer> answer : answers) {
                assertThat(answer.get(30, TimeUnit.SECONDS).decision()).isInstanceOf(KeyDecision.Pending.class);
            }
            assertThat(early).isEmpty();
            assertThat(forces).hasValue(2);
            assertThat(store.list().keys(KeyState.PENDING)).hasSize(OFFERS);
        }
    }

    @Test
    void theLimitOnPendingKeysHoldsAcrossTheOffersOfOneBatch() throws Exception {
        CountDownLatch firstForce = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (FileKeyStore store = open(KeyStoreOptions.builder(pki()).maxPending(OFFERS / 2), dir -> {
            if (forces.incrementAndGet() == 1) {
                firstForce.countDown();
                waitFor(release);
            }
            force(dir);
        })) {
            Future<Offer> first = offer(store, 0, new ConcurrentHashMap<>());
            waitFor(firstForce);
            List<Future<Offer>> rest = new ArrayList<>();
            for (int i = 1; i < OFFERS; i++) {
                rest.add(offer(store, i, new ConcurrentHashMap<>()));
            }
            await().until(() -> store.queuedOffers() == OFFERS - 1);
            release.countDown();
            assertThat(first.get(30, TimeUnit.SECONDS).decision()).isInstanceOf(KeyDecision.Pending.class);
            int full = 0;
            for (Future<Offer> answer : rest) {
                full += answer.get(30, TimeUnit.SECONDS).decision() instanceof KeyDecision.Full ? 1 : 0;
            }
            assertThat(full).isEqualTo(OFFERS - OFFERS / 2);
            assertThat(store.list().keys(KeyState.PENDING)).hasSize(OFFERS / 2);
            assertThat(names(pki().resolve(KeyState.PENDING.dirName()))).hasSize(OFFERS / 2);
        }
    }

    @Test
    void aCrashBetweenTheWritesAndTheirForceLosesNoAnsweredKey() throws Exception {
        Map<String, String> early = new ConcurrentHashMap<>();
        List<String> answered = new ArrayList<>();
        List<String> refused = new ArrayList<>();
        try (FileKeyStore store = open(KeyStoreOptions.builder(pki()), dir -> {
            if (forces.incrementAndGet() > 1) {
                throw new IllegalStateException("power lost before the force"); // nothing after the first is durable
            }
            force(dir);
        })) {
            offer(store, 0, early).get(30, TimeUnit.SECONDS);
            answered.add(id(0));
            List<Future<Offer>> lost = new ArrayList<>();
            for (int i = 1; i < OFFERS; i++) {
                lost.add(offer(store, i, early));
            }
            for (int i = 0; i < lost.size(); i++) {
                try {
                    lost.get(i).get(30, TimeUnit.SECONDS);
                    answered.add(id(i + 1));
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).hasMessageContaining("power lost");
                    refused.add(id(i + 1));
                }
            }
        }
        assertThat(early).isEmpty();
        assertThat(answered).containsExactly(id(0));
        assertThat(refused).hasSize(OFFERS - 1);
        // The power loss: of the names linked, only those a force covered are left.
        Path pending = pki().resolve(KeyState.PENDING.dirName());
        for (String name : names(pending)) {
            if (!durable.contains(name)) {
                Files.delete(pending.resolve(name));
            }
        }
        try (FileKeyStore store = open(KeyStoreOptions.builder(pki()), this::force)) {
            for (String id : answered) {
                assertThat(store.list().find(id, KeyState.PENDING)).as(id).isPresent();
            }
            // The minions not answered try again and are filed now.
            for (int i = 1; i < OFFERS; i++) {
                assertThat(store.offer(id(i), key(i), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Pending.class);
            }
        }
    }

    /** Offers minion {@code i}'s key; an answer given before its key was forced goes to {@code early}. */
    private Future<Offer> offer(FileKeyStore store, int i, Map<String, String> early) {
        return minions.submit(() -> {
            Offer offer = store.offer(id(i), key(i), current -> PolicyVerdict.NONE);
            if (offer.decision() instanceof KeyDecision.Pending && !durable.contains(id(i))) {
                early.put(id(i), "answered before its key was forced");
            }
            return offer;
        });
    }

    /**
     * {@code brine-key --rotate-keys} on many ids: each ask is written whole, and its directory forced once for the
     * batch before the counter is bumped and anyone is answered (was one force per ask: 28-91 s for 1,000 ids).
     */
    @Test
    void aBatchOfRotationAsksSharesOneForceOfTheirDirectoryBeforeItIsAnswered() throws Exception {
        List<Path> forced = new CopyOnWriteArrayList<>();
        try (FileKeyStore store = open(KeyStoreOptions.builder(pki()), dir -> {
            forced.add(dir);
            force(dir);
        })) {
            for (int i = 0; i < 3; i++) {
                store.offer("web" + i, key(i), PolicyVerdict.ACCEPT);
            }
            forced.clear();

            List<AdminResult> asked = store.askRotation(List.of("web0", "web1", "web2"), "brine-key:root");

            assertThat(asked).extracting(AdminResult::status).containsOnly(AdminResult.Status.DONE);
            Path asks = pki().resolve(RotationAsks.DIRECTORY);
            assertThat(forced).containsExactly(asks);
            assertThat(durable).contains("web0", "web1", "web2");
            assertThat(store.rotationAsks()).containsOnlyKeys("web0", "web1", "web2");
        }
    }

    /**
     * Concurrent minions' key rotations are a group commit too (issue 25, was five fsyncs each, one rotation at a
     * time): every retired record of a batch is forced (one force of {@code minions_retired/}) before any of its keys
     * is forced in (one force of {@code minions/}), and nobody is answered before the force that makes its new key
     * durable. Two requests for one new key in a batch are decided one after the other: one key, one id.
     */
    @Test
    void concurrentRotationsShareOneForceOfEachDirectoryAndNoneIsAnsweredBeforeIt() throws Exception {
        int rotations = 6;
        Path accepted = pki().resolve(KeyState.ACCEPTED.dirName());
        Path retired = pki().resolve(RetiredKeys.DIRECTORY);
        List<Path> forced = new CopyOnWriteArrayList<>();
        Map<Path, Set<String>> durableIn = new ConcurrentHashMap<>();
        CountDownLatch firstForce = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger keysForced = new AtomicInteger();
        try (FileKeyStore store = open(KeyStoreOptions.builder(pki()), dir -> {
            if (!forced.isEmpty() || dir.equals(retired)) {
                forced.add(dir);
            }
            if (dir.equals(accepted) && !forced.isEmpty()) {
                // Every retired record is durable before a key it retires is forced in.
                assertThat(durableIn.getOrDefault(retired, Set.of())).containsAll(names(retired));
                if (keysForced.incrementAndGet() == 1) {
                    firstForce.countDown();
                    waitFor(release);
                }
            }
            List<String> linked = names(dir);
            AtomicFiles.forceDirectory(dir);
            durableIn.computeIfAbsent(dir, d -> ConcurrentHashMap.newKeySet()).addAll(linked);
        })) {
            for (int i = 0; i <= rotations; i++) {
                store.offer(id(i), key(i), PolicyVerdict.ACCEPT);
            }
            durableIn.clear();
            Map<String, String> early = new ConcurrentHashMap<>();
            Future<RotationDecision> first = rotate(store, 0, key(100), early, accepted, durableIn);
            waitFor(firstForce);
            List<Future<RotationDecision>> rest = new ArrayList<>();
            for (int i = 1; i < rotations; i++) {
                rest.add(rotate(store, i, key(100 + i), early, accepted, durableIn));
            }
            // Minion 6 asks for the key minion 5 asks for, in the same batch: refused, not a second holder.
            rest.add(rotate(store, rotations, key(100 + rotations - 1), early, accepted, durableIn));
            await().until(() -> store.queuedRotations() == rotations);
            assertThat(first).isNotDone();
            assertThat(rest).noneMatch(Future::isDone);
            release.countDown();

            assertThat(first.get(30, TimeUnit.SECONDS)).isInstanceOf(RotationDecision.Rotated.class);
            List<RotationDecision> decided = new ArrayList<>();
            for (Future<RotationDecision> answer : rest) {
                decided.add(answer.get(30, TimeUnit.SECONDS));
            }
            assertThat(decided.subList(0, rotations - 2)).allMatch(RotationDecision.Rotated.class::isInstance);
            assertThat(decided.subList(rotations - 2, rotations))
                    .filteredOn(RotationDecision.Rotated.class::isInstance)
                    .hasSize(1);
            assertThat(decided.subList(rotations - 2, rotations))
                    .filteredOn(RotationDecision.Refused.class::isInstance)
                    .singleElement()
                    .extracting(RotationDecision::reason)
                    .asString()
                    .contains("held by another id");
            assertThat(early).isEmpty();
            assertThat(forced).containsExactly(retired, accepted, retired, accepted);
            for (int i = 0; i < rotations - 2; i++) {
                assertThat(store.list()
                                .find(id(i), KeyState.ACCEPTED)
                                .orElseThrow()
                                .key())
                        .isEqualTo(key(100 + i));
            }
        }
    }

    /** Rotates minion {@code i}'s key to {@code next}; a rotation answered before its key was forced goes to {@code early}. */
    private Future<RotationDecision> rotate(
            FileKeyStore store,
            int i,
            RSAPublicKey next,
            Map<String, String> early,
            Path accepted,
            Map<Path, Set<String>> durableIn) {
        return minions.submit(() -> {
            RotationDecision decision = store.rotate(id(i), key(i), next, KeyRotationPolicy.ALLOW, "minion " + id(i));
            if (decision instanceof RotationDecision.Rotated
                    && !durableIn.getOrDefault(accepted, Set.of()).contains(id(i))) {
                early.put(id(i), "answered before its new key was forced");
            }
            return decision;
        });
    }

    /** The real force, after which every name in {@code dir} is durable. */
    private void force(Path dir) throws IOException {
        List<String> linked = names(dir);
        AtomicFiles.forceDirectory(dir);
        durable.addAll(linked);
    }

    private FileKeyStore open(KeyStoreOptions.Builder options, KeyWrites.DirectorySync hook) throws Exception {
        AuditLog audit = AuditLog.open(tmp.resolve("cache"), Clock.systemUTC());
        audits.add(audit);
        return FileKeyStore.open(
                options.auditLog(audit)
                        .masterKey(false)
                        .pollInterval(Duration.ZERO)
                        .build(),
                hook);
    }

    private Path pki() {
        return tmp.resolve("pki");
    }

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString())
                    .filter(n -> !AtomicFiles.isTemp(n))
                    .toList();
        }
    }

    private static String id(int i) {
        return "minion-" + i;
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    private static void waitFor(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.ClusterConfig;
import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.CheckedKeys;
import io.brine.store.keys.KeyChange;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.Offer;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.RotationDecision;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyFactory;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.RSAKeyGenParameterSpec;
import java.security.spec.RSAPublicKeySpec;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.Watcher;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two masters' key stores on one real three-server ZooKeeper ensemble started in this JVM. */
class ZkKeyStoreTest {

    private static final AtomicInteger ROOTS = new AtomicInteger();
    private static TestingCluster ensemble;

    @TempDir
    Path pki;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final Map<String, CuratorFramework> clients = new HashMap<>();
    private String root;
    private ZkKeyStore a;
    private ZkKeyStore b;

    @BeforeAll
    static void startEnsemble() throws Exception {
        ensemble = new TestingCluster(ThreeServerEnsemble.threeServerSpecs());
        ensemble.start();
    }

    @AfterAll
    static void stopEnsemble() throws Exception {
        ensemble.close();
    }

    @BeforeEach
    void openTwoMasters() throws Exception {
        root = "/brine/t" + ROOTS.incrementAndGet();
        a = store("a");
        b = store("b");
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private ZkKeyStore store(String name) throws Exception {
        CuratorFramework client = client();
        clients.put(name, client);
        ZkKeyStore store = ZkKeyStore.open(
                client,
                ZkKeyStoreOptions.of(pki.resolve(name), null, AuditLog.none(), Clock.systemUTC()),
                Duration.ofSeconds(30));
        open.add(store);
        return store;
    }

    private CuratorFramework client() throws Exception {
        CuratorFramework client = ClusterConnection.open(
                ClusterConfig.of(ensemble.getConnectString()).withRoot(root));
        open.add(client);
        return client;
    }

    private static RSAPublicKey key(int index) {
        return (RSAPublicKey) TestKeys.pair(index).getPublic();
    }

    private static KeyDecision offer(KeyStore store, String id, int key) {
        return store.offer(id, key(key), PolicyVerdict.NONE);
    }

    @Test
    void aKeyAcceptedThroughOneMasterIsAcceptedOnTheOther() throws Exception {
        List<KeyChange> heardOnA = new CopyOnWriteArrayList<>();
        a.addListener(heardOnA::add);
        assertThat(offer(a, "web1", 1)).isInstanceOf(KeyDecision.Pending.class);
        await().until(() -> b.lookup("web1", key(1)) == KeyLookup.PENDING_SAME);

        assertThat(b.accept("web1", null, "brine-key:root").done()).isTrue();

        await().until(() -> a.acceptedKey("web1").isPresent());
        assertThat(a.acceptedIds()).containsExactly("web1");
        assertThat(offer(a, "web1", 1)).isInstanceOf(KeyDecision.Accepted.class);
        await().until(() -> heardOnA.stream().anyMatch(c -> c.to().equals(Optional.of(KeyState.ACCEPTED))));
        assertThat(heardOnA)
                .extracting(KeyChange::toString)
                .containsExactly("web1: none -> pending", "web1: pending -> accepted");
    }

    @Test
    void followsTheTransitionTableAcrossMasters() {
        assertThat(offer(a, "db1", 2)).isInstanceOf(KeyDecision.Pending.class);
        assertThat(offer(b, "db1", 2)).isInstanceOf(KeyDecision.Pending.class);
        assertThat(offer(b, "db1", 3)).isInstanceOf(KeyDecision.Denied.class);
        assertThat(b.offer("db1", key(2), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        // A answers from its own view, which follows B's write by a watch: shared "within a second", not at once.
        await().until(() -> a.acceptedKey("db1").isPresent());
        assertThat(offer(a, "db1", 2)).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(offer(a, "db1", 4)).isInstanceOf(KeyDecision.Denied.class);
        assertThat(a.offer("bad", key(5), PolicyVerdict.REJECT)).isInstanceOf(KeyDecision.Rejected.class);
        assertThat(b.offer("bad", key(5), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Rejected.class);

        await().until(() -> b.list().keys(KeyState.DENIED).size() == 1
                && a.list().ids(KeyState.REJECTED).size() == 1);
        assertThat(b.list().find("db1", KeyState.DENIED).orElseThrow().key()).isEqualTo(key(4));
        assertThat(a.list().ids(KeyState.ACCEPTED)).containsExactly("db1");

        AdminResult deleted = b.delete("db1", "brine-key:root");
        assertThat(deleted.done()).isTrue();
        await().until(() -> a.list().keys(KeyState.ACCEPTED).isEmpty()
                && a.list().keys(KeyState.DENIED).isEmpty());
        assertThat(a.accept("db1", null, "admin").status()).isEqualTo(AdminResult.Status.NOT_FOUND);
    }

    @Test
    void anAcceptBoundToAnotherFingerprintChangesNothing() {
        offer(a, "web2", 6);
        AdminResult refused = b.accept("web2", "00:".repeat(31) + "00", "admin");
        assertThat(refused.status()).isEqualTo(AdminResult.Status.REFUSED);
        assertThat(refused.message()).contains("not 00:00");
        assertThat(b.lookup("web2", key(6))).isEqualTo(KeyLookup.PENDING_SAME);
    }

    @Test
    void anOfferStopsBeingCurrentWhenAnotherMasterRejectsTheKey() throws Exception {
        Offer offer = a.offer("web3", key(7), current -> PolicyVerdict.ACCEPT);
        assertThat(offer.decision()).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(offer.current()).isTrue();
        await().until(() -> b.acceptedKey("web3").isPresent());
        assertThat(b.reject("web3", null, "admin").done()).isTrue();
        await().until(() -> !offer.current());
        assertThat(a.lookup("web3", key(7))).isEqualTo(KeyLookup.REJECTED);
    }

    @Test
    void twoMastersRacingOnTheSameIdsEndInOneStateEach() throws Exception {
        int ids = 20;
        for (int i = 0; i < ids; i++) {
            offer(a, "race" + i, 10 + i);
        }
        await().until(() -> b.list().ids(KeyState.PENDING).size() == ids);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        CyclicBarrier start = new CyclicBarrier(2);
        try {
            Future<List<AdminResult>> accepts = threads.submit(() -> {
                start.await();
                List<AdminResult> results = new ArrayList<>();
                for (int i = 0; i < ids; i++) {
                    results.add(a.accept("race" + i, null, "admin-a"));
                }
                return results;
            });
            Future<List<AdminResult>> rejects = threads.submit(() -> {
                start.await();
                List<AdminResult> results = new ArrayList<>();
                for (int i = 0; i < ids; i++) {
                    results.add(b.reject("race" + i, KeyState.PENDING, null, "admin-b"));
                }
                return results;
            });
            List<AdminResult> accepted = accepts.get();
            List<AdminResult> rejected = rejects.get();
            for (int i = 0; i < ids; i++) {
                // Exactly one of the two moves happened; the other found the key gone from pending.
                assertThat(accepted.get(i).done() ^ rejected.get(i).done())
                        .as("race%d", i)
                        .isTrue();
            }
        } finally {
            threads.shutdownNow();
        }
        await().until(() -> a.list().keys(KeyState.PENDING).isEmpty()
                && b.list().keys(KeyState.PENDING).isEmpty()
                && a.list().keys().equals(b.list().keys()));
        assertThat(a.list().ids(KeyState.ACCEPTED).size()
                        + a.list().ids(KeyState.REJECTED).size())
                .isEqualTo(ids);

        List<String> trail = ZkAuditTrail.read(client());
        for (int i = 0; i < ids; i++) {
            String id = "\"id\":\"race" + i + "\"";
            List<String> events = trail.stream()
                    .filter(line -> line.contains(id))
                    .map(line -> line.replaceAll(".*\"event\":\"([a-z-]+)\".*", "$1"))
                    .toList();
            assertThat(events)
                    .as("trail of race%d", i)
                    .isIn(List.of("key-pending", "key-accepted"), List.of("key-pending", "key-rejected"));
        }
    }

    @Test
    void theAuditTrailIsOneOrderedRecordOfBothMasters() throws Exception {
        offer(a, "m1", 30);
        offer(b, "m2", 31);
        await().until(() -> b.lookup("m1", key(30)) == KeyLookup.PENDING_SAME);
        b.accept("m1", null, "admin-b");
        a.reject("m2", null, "admin-a");
        b.requestRotation("admin-b");

        List<String> trail = ZkAuditTrail.read(client());
        assertThat(trail).hasSize(5);
        assertThat(trail.get(0)).contains("\"event\":\"key-pending\"", "\"actor\":\"master\"", "\"id\":\"m1\"");
        assertThat(trail.get(1)).contains("\"event\":\"key-pending\"", "\"id\":\"m2\"");
        assertThat(trail.get(2))
                .contains(
                        "\"event\":\"key-accepted\"", "\"actor\":\"admin-b\"", "\"id\":\"m1\"", "\"from\":\"pending\"");
        assertThat(trail.get(3)).contains("\"event\":\"key-rejected\"", "\"actor\":\"admin-a\"");
        assertThat(trail.get(4)).contains("\"event\":\"rotation-requested\"");
        assertThat(a.rotationRequests()).isEqualTo(1);
    }

    @Test
    void nothingSecretIsWrittenToZooKeeper() throws Exception {
        offer(a, "s1", 40);
        a.offer("s2", key(41), PolicyVerdict.ACCEPT);
        offer(b, "s2", 42);
        CuratorFramework client = client();
        List<String> all = new ArrayList<>();
        collect(client, "/", all);
        assertThat(all).isNotEmpty().noneMatch(data -> data.contains("PRIVATE"));
        assertThat(String.join("\n", all)).contains("BEGIN PUBLIC KEY");
    }

    /**
     * Holds the ZooKeeper event thread of {@code name}'s connection from the next key transaction on (any master's)
     * until the test ends: that master's view hears nothing more, as when a watch is slow to arrive. Its own reads
     * and writes are synchronous and go on.
     */
    private void deafen(String name) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        open.add(release::countDown);
        clients.get(name)
                .getData()
                .usingWatcher((Watcher) event -> {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                })
                .forPath(ZkRecords.SEQ);
    }

    @Test
    void aKeyAcceptedThroughOneMasterIsNotAcceptedUnderAnotherIdByAMasterThatHasNotHeardYet() throws Exception {
        deafen("b");
        assertThat(a.offer("web1", key(50), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(b.lookup("web1", key(50))).as("b's view has not heard").isEqualTo(KeyLookup.UNKNOWN);

        KeyDecision decision = b.offer("x1.prov.example.com", key(50), PolicyVerdict.ACCEPT);

        assertThat(decision).isInstanceOf(KeyDecision.Pending.class);
        assertThat(decision.reason()).contains("same key as web1", "not accepted by policy");
        await().until(() -> a.lookup("x1.prov.example.com", key(50)) == KeyLookup.PENDING_SAME);
        assertThat(a.list().sharedKeys())
                .containsEntry(Fingerprints.of(key(50)), List.of("web1", "x1.prov.example.com"));
    }

    @Test
    void twoMastersOfferingOneKeyUnderTwoIdsAtOnceAcceptItForOneIdAtMost() throws Exception {
        int keys = 8;
        deafen("a");
        deafen("b");
        ExecutorService threads = Executors.newFixedThreadPool(2);
        CyclicBarrier start = new CyclicBarrier(2);
        try {
            Future<List<KeyDecision>> onA = threads.submit(() -> offerAll(a, "a", keys, start));
            Future<List<KeyDecision>> onB = threads.submit(() -> offerAll(b, "b", keys, start));
            List<KeyDecision> fromA = onA.get();
            List<KeyDecision> fromB = onB.get();
            for (int i = 0; i < keys; i++) {
                assertThat(fromA.get(i) instanceof KeyDecision.Accepted && fromB.get(i) instanceof KeyDecision.Accepted)
                        .as("key %d accepted under a%d and b%d", i, i, i)
                        .isFalse();
                assertThat(List.of(fromA.get(i), fromB.get(i)))
                        .as("key %d", i)
                        .anyMatch(d -> d.reason().contains("same key as"));
            }
        } finally {
            threads.shutdownNow();
        }
    }

    private static List<KeyDecision> offerAll(KeyStore store, String prefix, int keys, CyclicBarrier start)
            throws Exception {
        start.await();
        List<KeyDecision> decisions = new ArrayList<>();
        for (int i = 0; i < keys; i++) {
            decisions.add(store.offer(prefix + i, key(60 + i), PolicyVerdict.ACCEPT));
        }
        return decisions;
    }

    @Test
    void aKeyStoredBeforeFingerprintsWereRecordedGetsItsFingerprintWithTheNextTransactionOnIt() throws Exception {
        // As a master of an earlier version wrote it: the key's znode alone.
        CuratorFramework old = client();
        old.create().forPath(ZkRecords.keyPath("web1"), ZkRecords.encodeKey(KeyState.ACCEPTED, key(51)));
        await().until(() -> b.acceptedKey("web1").isPresent());
        ZkWrites writes = new ZkWrites(old, Clock.systemUTC(), AuditLog.none());
        assertThat(ZkFingerprints.recorded(writes, Fingerprints.of(key(51)))).isEmpty();

        // Each write read back through its writer's session: ZooKeeper promises a session its own writes, and the
        // ensemble's three servers let another session read a follower that has not applied them yet (a CI run:
        // the old client read no fingerprint znode just after b's transaction made it).
        ZkWrites onA = new ZkWrites(a.client(), Clock.systemUTC(), AuditLog.none());
        ZkWrites onB = new ZkWrites(b.client(), Clock.systemUTC(), AuditLog.none());
        assertThat(b.offer("x1", key(51), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Pending.class);
        assertThat(ZkFingerprints.recorded(onB, Fingerprints.of(key(51)))).containsExactly("keys/web1", "keys/x1");

        assertThat(a.delete("web1", "admin").done()).isTrue();
        assertThat(ZkFingerprints.recorded(onA, Fingerprints.of(key(51)))).containsExactly("keys/x1");
        // b's server has applied the delete once b's view heard it: its transaction then reads the znode as a left it.
        await().until(() -> b.acceptedKey("web1").isEmpty());
        assertThat(b.offer("x1", key(51), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(b.delete("x1", "admin").done()).isTrue();
        assertThat(ZkFingerprints.recorded(onB, Fingerprints.of(key(51)))).isEmpty();
    }

    private static void collect(CuratorFramework client, String path, List<String> into) throws Exception {
        byte[] data = client.getData().forPath(path);
        if (data != null) {
            into.add(new String(data, StandardCharsets.UTF_8));
        }
        for (String child : client.getChildren().forPath(path)) {
            collect(client, (path.equals("/") ? "" : path) + "/" + child, into);
        }
    }

    @Test
    void aMasterStartChecksInFullOnlyTheKeysItHasNotCheckedBefore() throws Exception {
        for (int i = 1; i <= 3; i++) {
            assertThat(a.offer("web" + i, key(i), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        }
        Path cDir = pki.resolve("c");
        Files.createDirectories(cDir);
        Files.setPosixFilePermissions(cDir, PosixFilePermissions.fromString("rwx------"));
        ZkKeyStoreOptions options = ZkKeyStoreOptions.of(cDir, TestKeys.pair(0), AuditLog.none(), Clock.systemUTC());
        try (ZkKeyStore c = ZkKeyStore.open(client(), options, Duration.ofSeconds(30))) {
            assertThat(c.checkedKeys().fullChecks()).isEqualTo(3);
        }
        assertThat(cDir.resolve(CheckedKeys.FILE_NAME)).exists();
        try (ZkKeyStore c = ZkKeyStore.open(client(), options, Duration.ofSeconds(30))) {
            assertThat(c.checkedKeys().fullChecks()).isZero();
            assertThat(c.list().ids(KeyState.ACCEPTED)).containsExactly("web1", "web2", "web3");
        }

        // Written into ZooKeeper by something other than a master: a key no master checked.
        BigInteger n = key(9).getModulus().multiply(BigInteger.valueOf(7919));
        RSAPublicKey weak = (RSAPublicKey)
                KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(n, RSAKeyGenParameterSpec.F4));
        clients.get("a").create().forPath(ZkRecords.keyPath("weak"), ZkRecords.encodeKey(KeyState.ACCEPTED, weak));
        try (ZkKeyStore c = ZkKeyStore.open(client(), options, Duration.ofSeconds(30))) {
            assertThat(c.checkedKeys().fullChecks()).isEqualTo(1);
            assertThat(c.list().ids(KeyState.ACCEPTED)).containsExactly("web1", "web2", "web3");
            assertThat(c.list().problems())
                    .singleElement()
                    .satisfies(p -> assertThat(p.reason()).contains("small prime factor (7919)"));
        }
    }

    /**
     * A rotation takes the accepted key from the master's view while the view holds that version of the znode (it was
     * checked when the view read it); a znode written by hand since, which the view refused, is read, checked and
     * refused as the accepted key it is not.
     */
    @Test
    void aRotationTakesTheAcceptedKeyFromTheViewWhileItHoldsThatVersionOfTheZnode() throws Exception {
        assertThat(a.offer("web1", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(a.offer("web2", key(3), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        await().until(() -> a.acceptedKey("web2").isPresent());

        assertThat(a.rotate("web1", key(1), key(2), KeyRotationPolicy.ALLOW, "minion web1"))
                .isInstanceOf(RotationDecision.Rotated.class);
        await().until(() -> a.acceptedKey("web1").equals(Optional.of(key(2))));
        assertThat(a.rotate("web1", key(2), key(4), KeyRotationPolicy.ALLOW, "minion web1"))
                .isInstanceOf(RotationDecision.Rotated.class);
        assertThat(a.rotationKeyReads()).isZero();

        // A weak key written over web2's znode by hand: the view refuses it and keeps what it held.
        BigInteger n = key(9).getModulus().multiply(BigInteger.valueOf(7919));
        RSAPublicKey weak = (RSAPublicKey)
                KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(n, RSAKeyGenParameterSpec.F4));
        clients.get("b").setData().forPath(ZkRecords.keyPath("web2"), ZkRecords.encodeKey(KeyState.ACCEPTED, weak));
        await().until(() -> !a.list().problems().isEmpty());
        assertThatThrownBy(() -> a.rotate("web2", key(3), key(5), KeyRotationPolicy.ALLOW, "minion web2"))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("small prime factor");
        assertThat(a.rotationKeyReads()).isEqualTo(1);
        assertThat(clients.get("b").getData().forPath(ZkRecords.keyPath("web2")))
                .isEqualTo(ZkRecords.encodeKey(KeyState.ACCEPTED, weak));
    }
}

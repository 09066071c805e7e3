package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.ClusterConfig;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.PolicyVerdict;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@code /fingerprints/<hex>} records, and that nothing unauthenticated grows it without bound. */
class ZkFingerprintsTest {

    private static final AtomicInteger ROOTS = new AtomicInteger();
    private static TestingServer server;

    @TempDir
    Path pki;

    private final List<AutoCloseable> open = new ArrayList<>();
    private String root;
    private CuratorFramework clientA;
    private CuratorFramework clientB;
    private ZkKeyStore a;
    private ZkKeyStore b;

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @BeforeEach
    void openTwoMasters() throws Exception {
        root = "/brine/f" + ROOTS.incrementAndGet();
        clientA = client();
        a = store(clientA, "a");
        clientB = client();
        b = store(clientB, "b");
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private ZkKeyStore store(CuratorFramework client, String name) throws Exception {
        ZkKeyStore store = ZkKeyStore.open(
                client,
                ZkKeyStoreOptions.of(pki.resolve(name), null, AuditLog.none(), Clock.systemUTC()),
                Duration.ofSeconds(30));
        open.add(store);
        return store;
    }

    private CuratorFramework client() throws Exception {
        CuratorFramework client = ClusterConnection.open(
                ClusterConfig.of(server.getConnectString()).withRoot(root));
        open.add(client);
        return client;
    }

    private static RSAPublicKey key(int index) {
        return (RSAPublicKey) TestKeys.pair(index).getPublic();
    }

    /** The raw size of the key's fingerprint znode, -1 when there is none. */
    private int znodeBytes(RSAPublicKey key) throws Exception {
        Stat stat = clientA.checkExists().forPath(ZkFingerprints.path(Fingerprints.of(key)));
        return stat == null ? -1 : stat.getDataLength();
    }

    @Test
    void aKeyDeniedUnderEveryAcceptedIdRecordsNoSlotForIt() throws Exception {
        for (int i = 0; i < 10; i++) {
            assertThat(a.offer("web" + i, key(i), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        }
        RSAPublicKey offered = key(200);

        for (int i = 0; i < 10; i++) {
            assertThat(a.offer("web" + i, offered, PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Denied.class);
        }

        assertThat(znodeBytes(offered)).as("a denied key holds no id").isEqualTo(-1);
        assertThat(a.list().keys(KeyState.DENIED)).hasSize(10);
        // Offered under a new id it is still marked as the filesystem store marks it, and recorded for that id.
        KeyDecision fresh = a.offer("new1", offered, PolicyVerdict.ACCEPT);
        assertThat(fresh).isInstanceOf(KeyDecision.Pending.class);
        assertThat(fresh.reason()).contains("same key as web0");
        assertThat(ZkFingerprints.recorded(a.writes(), Fingerprints.of(offered)))
                .containsExactly("keys/new1");
    }

    @Test
    void oneKeyOfferedUnderManyIdsStopsBeingRecordedAtTheCapAndNothingFails() throws Exception {
        // Ids of 252 bytes: some 250 of them fill a fingerprint znode.
        String tail = "." + "a".repeat(63) + "." + "b".repeat(63) + "." + "c".repeat(63) + "." + "d".repeat(55);
        RSAPublicKey offered = key(201);
        KeyDecision last = null;
        int offers = 300;
        for (int i = 0; i < offers; i++) {
            last = a.offer(String.format("n%03d", i) + tail, offered, PolicyVerdict.NONE);
            assertThat(last).isInstanceOf(KeyDecision.Pending.class);
        }

        assertThat(znodeBytes(offered)).isBetween(ZkFingerprints.MAX_BYTES - 300, ZkFingerprints.MAX_BYTES);
        assertThat(last.reason()).contains("not recorded", "held by", "try later");
        assertThat(a.lookup(String.format("n%03d", offers - 1) + tail, offered)).isEqualTo(KeyLookup.UNKNOWN);
        int recorded =
                ZkFingerprints.recorded(a.writes(), Fingerprints.of(offered)).size();
        assertThat(a.list().keys(KeyState.PENDING)).hasSize(recorded);
        assertThat(recorded).isLessThan(offers);
        // An id that holds the key already is still answered as ever.
        assertThat(a.offer("n000" + tail, offered, PolicyVerdict.NONE).reason()).doesNotContain("not recorded");
    }

    private void deafen(CuratorFramework client) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        open.add(release::countDown);
        client.getData()
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
    void anAdminAcceptBetweenStoredStatesSaysWhoElseHoldsTheKeyAsZooKeeperHasIt() throws Exception {
        assertThat(a.offer("x1", key(202), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Pending.class);
        await().until(() -> b.lookup("x1", key(202)) == KeyLookup.PENDING_SAME);
        assertThat(b.reject("x1", KeyState.PENDING, null, "admin").done()).isTrue();
        deafen(clientB);
        assertThat(a.offer("web1", key(202), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Pending.class);
        assertThat(b.lookup("web1", key(202))).as("b has not heard").isEqualTo(KeyLookup.UNKNOWN);

        assertThat(b.accept("x1", KeyState.REJECTED, null, "admin-b").done()).isTrue();

        List<String> trail = ZkAuditTrail.read(clientA);
        assertThat(trail.get(trail.size() - 1))
                .contains("\"event\":\"key-accepted\"", "\"id\":\"x1\"", "same key as web1");
    }

    @Test
    void anAdminAcceptOfAKeyStoredBeforeFingerprintsRecordsItsFingerprint() throws Exception {
        clientA.create().forPath(ZkRecords.keyPath("web1"), ZkRecords.encodeKey(KeyState.REJECTED, key(203)));
        await().until(() -> a.lookup("web1", key(203)) == KeyLookup.REJECTED);
        assertThat(znodeBytes(key(203))).isEqualTo(-1);

        assertThat(a.accept("web1", KeyState.REJECTED, null, "admin").done()).isTrue();

        assertThat(ZkFingerprints.recorded(a.writes(), Fingerprints.of(key(203))))
                .containsExactly("keys/web1");
    }
}

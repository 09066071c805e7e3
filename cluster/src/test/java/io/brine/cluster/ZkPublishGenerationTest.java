package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.cluster.ZkPublishGeneration.Shared;
import io.brine.daemon.config.ClusterConfig;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.curator.framework.CuratorFramework;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Masters agree on one publish key generation through a real ZooKeeper server; the key is stored wrapped. */
class ZkPublishGenerationTest {

    private static final KeyPair MASTER_KEY = TestKeys.pair(200);

    @RegisterExtension
    static final SharedZooKeeperServer ZOOKEEPER = new SharedZooKeeperServer();

    private ClusterConfig cluster;
    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        cluster = ZOOKEEPER.freshRoot();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private CuratorFramework client() throws Exception {
        CuratorFramework client = ClusterConnection.open(cluster);
        open.add(client);
        return client;
    }

    private ZkPublishGeneration master() throws Exception {
        ZkPublishGeneration generation = new ZkPublishGeneration(client(), MASTER_KEY);
        open.add(generation);
        return generation;
    }

    @Test
    void theSecondMasterJoinsTheFirstOnesGenerationAndHearsItsRotations() throws Exception {
        ZkPublishGeneration a = master();
        ZkPublishGeneration b = master();
        SessionKey first = SessionKey.random();
        Shared agreedByA = a.join(new Shared(1000, first), (n, k) -> {});
        assertThat(agreedByA.number()).isEqualTo(1000);
        List<Shared> heardByB = new CopyOnWriteArrayList<>();
        Shared agreedByB = b.join(new Shared(2000, SessionKey.random()), (n, k) -> heardByB.add(new Shared(n, k)));
        assertThat(agreedByB.number()).isEqualTo(1000);
        assertThat(agreedByB.key().bytes()).isEqualTo(first.bytes());

        SessionKey second = SessionKey.random();
        assertThat(a.next(1000, new Shared(1001, second)).number()).isEqualTo(1001);
        await().until(() -> heardByB.stream().anyMatch(s -> s.number() == 1001));
        assertThat(heardByB.stream()
                        .filter(s -> s.number() == 1001)
                        .findFirst()
                        .orElseThrow()
                        .key()
                        .bytes())
                .isEqualTo(second.bytes());
    }

    @Test
    void ofMastersRotatingAtOnceOneWinsAndTheOthersAdoptItsGeneration() throws Exception {
        ZkPublishGeneration a = master();
        ZkPublishGeneration b = master();
        a.join(new Shared(5, SessionKey.random()), (n, k) -> {});
        b.join(new Shared(5, SessionKey.random()), (n, k) -> {});
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            for (long base = 5; base < 25; base++) {
                long basedOn = base;
                Future<Shared> viaA =
                        threads.submit(() -> a.next(basedOn, new Shared(basedOn + 1, SessionKey.random())));
                Future<Shared> viaB =
                        threads.submit(() -> b.next(basedOn, new Shared(basedOn + 1, SessionKey.random())));
                Shared fromA = viaA.get();
                Shared fromB = viaB.get();
                assertThat(fromA.number()).isEqualTo(basedOn + 1);
                assertThat(fromB.number()).isEqualTo(basedOn + 1);
                assertThat(fromA.key().bytes()).isEqualTo(fromB.key().bytes());
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void theKeyIsStoredOnlyWrappedForTheMasterKey() throws Exception {
        ZkPublishGeneration a = master();
        SessionKey key = SessionKey.random();
        a.join(new Shared(7, key), (n, k) -> {});
        String stored = new String(client().getData().forPath(ZkPublishGeneration.PATH), StandardCharsets.UTF_8);
        assertThat(stored)
                .doesNotContain(Base64.getEncoder().encodeToString(key.bytes()))
                .doesNotContain(HexFormat.of().formatHex(key.bytes()))
                .contains("\"generation\":7", "wrapped");
        ZkPublishGeneration otherMasterKey = new ZkPublishGeneration(client(), TestKeys.pair(201));
        open.add(otherMasterKey);
        Assertions.assertThatThrownBy(otherMasterKey::current).hasMessageContaining("same master key pair");
    }
}

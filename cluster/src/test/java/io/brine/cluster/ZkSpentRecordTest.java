package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.ClusterConfig;
import io.brine.protocol.testing.MovableClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Two masters share one record of spent grants on a real ZooKeeper server. */
class ZkSpentRecordTest {

    private static final String GRANT = "0123456789abcdef0123456789abcdef";

    @RegisterExtension
    static final SharedZooKeeperServer ZOOKEEPER = new SharedZooKeeperServer();

    private ClusterConfig cluster;
    private final List<AutoCloseable> open = new ArrayList<>();
    private final MovableClock clock = new MovableClock(Instant.parse("2026-01-01T00:00:00Z"));

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

    private ZkSpentRecord master() throws Exception {
        CuratorFramework client = ClusterConnection.open(cluster);
        open.add(client);
        return ZkSpentRecord.open(client, "spent_grants", clock);
    }

    @Test
    void aGrantSpentThroughOneMasterIsSpentOnTheOther() throws Exception {
        ZkSpentRecord a = master();
        ZkSpentRecord b = master();
        Instant expires = clock.instant().plus(Duration.ofHours(1));
        assertThat(b.isSpent(GRANT)).isFalse();
        assertThat(a.spend(GRANT, expires)).isTrue();
        assertThat(b.isSpent(GRANT)).isTrue();
        assertThat(b.spend(GRANT, expires)).isFalse();

        b.unspend(GRANT);
        assertThat(a.isSpent(GRANT)).isFalse();
    }

    @Test
    void anExpiredSpendCanBeSpentAgain() throws Exception {
        ZkSpentRecord a = master();
        assertThat(a.spend(GRANT, clock.instant().plusSeconds(60))).isTrue();
        clock.advance(Duration.ofSeconds(61));
        assertThat(a.isSpent(GRANT)).isFalse();
        assertThat(master().spend(GRANT, clock.instant().plusSeconds(60))).isTrue();
        assertThat(a.spend(GRANT, clock.instant().plusSeconds(60))).isFalse();
    }

    @Test
    void ofTwoMastersSpendingOneGrantAtOnceExactlyOneWins() throws Exception {
        ZkSpentRecord a = master();
        ZkSpentRecord b = master();
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            for (int i = 0; i < 20; i++) {
                String grant = String.format("%032x", i);
                Instant expires = clock.instant().plusSeconds(3600);
                Callable<Boolean> viaA = () -> a.spend(grant, expires);
                Callable<Boolean> viaB = () -> b.spend(grant, expires);
                Future<Boolean> first = threads.submit(viaA);
                Future<Boolean> second = threads.submit(viaB);
                assertThat(first.get() ^ second.get()).as(grant).isTrue();
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void recordsPastTheirValidityWindowArePrunedAndTheOthersStay() throws Exception {
        ZkSpentRecord a = master();
        CuratorFramework client = ClusterConnection.open(cluster);
        open.add(client);
        String parent = "/spent/spent_grants"; // under the client's namespace, the root
        assertThat(a.spend(String.format("%032x", 1), clock.instant().plusSeconds(60)))
                .isTrue();
        assertThat(a.spend(String.format("%032x", 2), clock.instant().plusSeconds(3600)))
                .isTrue();
        client.create()
                .forPath(parent + "/" + String.format("%032x", 3), "damaged".getBytes(StandardCharsets.US_ASCII));
        assertThat(a.prune()).isZero();

        clock.advance(Duration.ofSeconds(61));

        assertThat(a.prune()).isEqualTo(1);
        assertThat(client.getChildren().forPath(parent))
                .containsExactlyInAnyOrder(String.format("%032x", 2), String.format("%032x", 3));
        assertThat(a.isSpent(String.format("%032x", 2))).isTrue();
        assertThat(a.isSpent(String.format("%032x", 3))).isTrue();
    }

    @Test
    void aSpendAfterThePruneIntervalPrunesInTheBackground() throws Exception {
        ZkSpentRecord a = master();
        CuratorFramework client = ClusterConnection.open(cluster);
        open.add(client);
        String parent = "/spent/spent_grants"; // under the client's namespace, the root
        assertThat(a.spend(String.format("%032x", 1), clock.instant().plusSeconds(60)))
                .isTrue();
        // The first prune is due PRUNE_INTERVAL after the record was opened.
        assertThat(a.spend(String.format("%032x", 2), clock.instant().plusSeconds(60)))
                .isTrue();
        clock.advance(Duration.ofSeconds(61));
        assertThat(a.spend(String.format("%032x", 3), clock.instant().plusSeconds(3600)))
                .isTrue();
        assertThat(client.getChildren().forPath(parent)).hasSize(3);

        clock.advance(ZkSpentRecord.PRUNE_INTERVAL);
        assertThat(a.spend(String.format("%032x", 4), clock.instant().plusSeconds(3600)))
                .isTrue();

        await().until(() -> client.getChildren().forPath(parent).size() == 2);
        assertThat(client.getChildren().forPath(parent))
                .containsExactlyInAnyOrder(String.format("%032x", 3), String.format("%032x", 4));
    }
}

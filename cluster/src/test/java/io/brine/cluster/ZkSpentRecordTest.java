package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.ClusterConfig;
import io.brine.protocol.testing.MovableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Two masters share one record of spent grants on a real ZooKeeper server. */
class ZkSpentRecordTest {

    private static final String GRANT = "0123456789abcdef0123456789abcdef";

    private TestingServer server;
    private final List<AutoCloseable> open = new ArrayList<>();
    private final MovableClock clock = new MovableClock(Instant.parse("2026-01-01T00:00:00Z"));

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        server.close();
    }

    private ZkSpentRecord master() throws Exception {
        CuratorFramework client = ClusterConnection.open(ClusterConfig.of(server.getConnectString()));
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
}

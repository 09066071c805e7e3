package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.ClusterConfig;
import io.brine.protocol.testing.MovableClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ZkJobIndexTest {

    @RegisterExtension
    static final SharedZooKeeperServer ZOOKEEPER = new SharedZooKeeperServer();

    private ClusterConfig cluster;
    private CuratorFramework client;
    private final MovableClock clock = new MovableClock(Instant.now());

    @BeforeEach
    void start() throws Exception {
        cluster = ZOOKEEPER.freshRoot();
        client = ClusterConnection.open(cluster);
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void keepsTheFirstReturnOfEachMinionAndRefusesLargeOnes() throws Exception {
        ZkJobIndex index = new ZkJobIndex(client, clock);
        index.putJob("20260101000000000001", bytes("{\"fun\":\"test.ping\"}"));
        index.putReturn("20260101000000000001", "web1", bytes("{\"id\":\"web1\",\"n\":1}"));
        index.putReturn("20260101000000000001", "web1", bytes("{\"id\":\"web1\",\"n\":2}"));
        index.putReturn("20260101000000000001", "db1", bytes("{\"id\":\"db1\"}"));
        assertThat(index.returns("20260101000000000001")).containsOnlyKeys("db1", "web1");
        assertThat(new String(index.returns("20260101000000000001").get("web1"), StandardCharsets.UTF_8))
                .contains("\"n\":1");
        assertThatThrownBy(
                        () -> index.putReturn("20260101000000000001", "big", new byte[ZkJobIndex.MAX_RETURN_BYTES + 1]))
                .hasMessageContaining("stub");
        assertThat(index.job("20260101000000000002")).isEmpty();
    }

    @Test
    void sweepRemovesJobsOlderThanTheRetention() throws Exception {
        ZkJobIndex index = new ZkJobIndex(client, clock);
        index.putJob("20260101000000000001", bytes("{}"));
        index.putReturn("20260101000000000001", "web1", bytes("{}"));
        assertThat(index.sweep(Duration.ofHours(1))).isZero();
        clock.advance(Duration.ofHours(2));
        assertThat(index.sweep(Duration.ofHours(1))).isEqualTo(1);
        assertThat(index.jids()).isEmpty();
    }

    @Test
    void aJobRecordWrittenInTheBackgroundLandsAlsoWhenAReturnMadeItsNodeFirst() throws Exception {
        ZkJobIndex index = new ZkJobIndex(client, clock);
        index.putReturn("20260101000000000001", "web1", bytes("{}"));
        List<String> failed = new CopyOnWriteArrayList<>();

        index.putJobInBackground("20260101000000000001", bytes("{\"fun\":\"test.ping\"}"), failed::add);
        index.putJobInBackground("20260101000000000002", bytes("{\"fun\":\"test.echo\"}"), failed::add);

        await().until(() -> index.job("20260101000000000001")
                .map(b -> new String(b, StandardCharsets.UTF_8))
                .filter(text -> text.contains("test.ping"))
                .isPresent());
        await().until(() -> index.job("20260101000000000002").isPresent());
        assertThat(failed).isEmpty();
    }
}

package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.ClusterConfig;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster master's {@code /readyz} and metrics follow its ZooKeeper connection: ready while connected, not ready
 * once its session is lost (the only ZooKeeper server stopped past {@code session_timeout}), ready again when the
 * server is back; key transitions heard through ZooKeeper are counted.
 */
class ClusterHealthIT {

    @TempDir
    Path dir;

    private TestingServer zookeeper;
    private Fleet fleet;

    @AfterEach
    void stopAll() throws Exception {
        if (fleet != null) {
            fleet.close();
        }
        zookeeper.close();
    }

    private HttpResponse<String> get(String path) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + fleet.master.httpPort() + path))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    private String metrics() throws Exception {
        return get("/metrics").body();
    }

    @Test
    void notReadyWhileTheZooKeeperSessionIsLostAndReadyAgainAfter() throws Exception {
        zookeeper = new TestingServer();
        ClusterConfig cluster = new ClusterConfig(
                zookeeper.getConnectString(),
                ClusterConfig.DEFAULT_ROOT,
                Duration.ofSeconds(2),
                Optional.of(new ClusterConfig.Auth("brine", TwoMasterCluster.writePassword(dir.resolve("zk.pass")))));
        fleet = new Fleet(dir).seedMasterKeys(250, 249);
        fleet.startMaster(
                config -> config.cluster(cluster).acceptance(Fleet.autoAccept()).httpPort(0));
        MinionDaemon minion = fleet.startMinion("web1", 100, config -> config);
        Fleet.awaitState(minion, MinionState.ACCEPTED);

        await().until(() -> get("/readyz").statusCode() == 200);
        assertThat(metrics()).contains("brine_cluster_writable 1.0").contains("brine_cluster_session_expired 0.0");
        await().until(this::metrics, text -> text.contains("brine_cluster_key_transitions_total 1.0"));

        zookeeper.stop();

        HttpResponse<String> lost = await().until(() -> get("/readyz"), answer -> answer.statusCode() == 503);
        assertThat(lost.body()).contains("ZooKeeper session expired at");
        assertThat(metrics()).contains("brine_cluster_writable 0.0").contains("brine_cluster_session_expired 1.0");
        // The master goes on serving its minion from its last view.
        assertThat(minion.minion().state()).isEqualTo(MinionState.ACCEPTED);

        zookeeper.restart();

        HttpResponse<String> back = await().until(() -> get("/readyz"), answer -> answer.statusCode() == 200);
        assertThat(back.body()).isEqualTo("ready\n");
        assertThat(metrics()).contains("brine_cluster_writable 1.0").contains("brine_cluster_session_expired 0.0");
    }
}

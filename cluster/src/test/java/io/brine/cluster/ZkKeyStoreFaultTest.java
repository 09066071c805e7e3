package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.ClusterConfig;
import io.brine.protocol.testing.SuiteDefaults;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.PolicyVerdict;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** A ZooKeeper server of three dies while a master writes keys: nothing is lost, nothing is doubled. */
class ZkKeyStoreFaultTest {

    @TempDir
    Path pki;

    @RegisterExtension
    final ThreeServerEnsemble ensemble = new ThreeServerEnsemble();

    private CuratorFramework client() throws Exception {
        return ensemble.client(ClusterConfig.of(ensemble.servers().getConnectString()));
    }

    /**
     * A master whose writes wait for a lost connection as long as the suite waits for anything: a reconnect to another
     * server (after an election, when the killed one led) is what should happen, and on a loaded machine it took
     * longer than a master's 5 s, which answered the offers meanwhile without the cluster.
     */
    private ZkKeyStore store(CuratorFramework client) throws Exception {
        return ensemble.store(client, pki, SuiteDefaults.WAIT);
    }

    @Test
    void killingTheServerAMasterIsConnectedToMidWriteLosesNothing() throws Exception {
        CuratorFramework client = client();
        ZkKeyStore master = store(client);
        int ids = 60;
        AtomicInteger offered = new AtomicInteger();
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try {
            Future<List<KeyDecision>> decisions = writer.submit(() -> {
                List<KeyDecision> answers = new ArrayList<>();
                for (int i = 0; i < ids; i++) {
                    answers.add(master.offer(
                            "node" + i,
                            (RSAPublicKey) TestKeys.pair(100 + i).getPublic(),
                            i % 2 == 0 ? PolicyVerdict.NONE : PolicyVerdict.ACCEPT));
                    offered.incrementAndGet();
                }
                return answers;
            });
            await().until(() -> offered.get() >= 10);
            TestingCluster servers = ensemble.servers();
            InstanceSpec connected =
                    servers.findConnectionInstance(client.getZookeeperClient().getZooKeeper());
            assertThat(servers.killServer(connected)).isTrue();

            List<KeyDecision> answers = decisions.get();
            for (int i = 0; i < ids; i++) {
                assertThat(answers.get(i))
                        .as("node%d", i)
                        .isInstanceOf(i % 2 == 0 ? KeyDecision.Pending.class : KeyDecision.Accepted.class);
            }
        } finally {
            writer.shutdownNow();
        }

        // A master that starts now, on what is left of the ensemble, sees every key once, in its state.
        ZkKeyStore other = store(client());
        assertThat(other.list().ids(KeyState.PENDING)).hasSize(ids / 2);
        assertThat(other.list().ids(KeyState.ACCEPTED)).hasSize(ids / 2);
        List<String> trail = ZkAuditTrail.read(client);
        for (int i = 0; i < ids; i++) {
            String id = "\"id\":\"node" + i + "\"";
            assertThat(trail.stream().filter(line -> line.contains(id)).count())
                    .as("trail of node%d", i)
                    .isEqualTo(1);
        }
        // Two servers of three are a quorum: admin changes go on.
        assertThat(other.accept("node0", null, "admin").done()).isTrue();
        await().until(() -> master.acceptedKey("node0").isPresent());
    }
}

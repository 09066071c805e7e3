package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.cluster.ZkKeyStore;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.KeyState;
import java.nio.file.Path;
import java.util.List;
import org.apache.curator.test.InstanceSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real masters on a three-server ZooKeeper ensemble that loses its quorum (two servers stopped): accepted
 * minions and their jobs go on from the masters' last view, a new minion is told "pending, try later" and nothing
 * is written, admin changes are refused; when the servers come back the masters catch up and the new key is
 * recorded at the minion's next attempt.
 */
class ClusterQuorumIT {

    @TempDir
    Path dir;

    private TwoMasterCluster cluster;
    private Fleet a;
    private Fleet b;

    @BeforeEach
    void startTwoMasters() throws Exception {
        cluster = TwoMasterCluster.onThreeServers(dir);
        a = cluster.a;
        b = cluster.b;
    }

    @AfterEach
    void stopAll() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void withoutQuorumAcceptedMinionsAndJobsGoOnAndNewKeysWaitUntilItReturns() throws Exception {
        MinionDaemon web1 = a.startMinion("web1", 110, config -> config);
        Fleet.awaitState(web1, MinionState.PENDING);
        assertThat(b.master.keyStore().accept("web1", null, "brine-key:root").done()).isTrue();
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        a.awaitSubscribed("web1");
        ZkKeyStore storeA = (ZkKeyStore) a.master.keyStore();
        ZkKeyStore storeB = (ZkKeyStore) b.master.keyStore();

        List<InstanceSpec> stopped = cluster.servers().getInstances().stream().limit(2).toList();
        for (InstanceSpec spec : stopped) {
            assertThat(cluster.servers().killServer(spec)).isTrue();
        }
        await().until(() -> !storeA.health().writable() && !storeB.health().writable());
        assertThat(a.master.metrics().scrape()).contains("brine_cluster_writable 0.0");

        JobPublisher.Published job = a.publish("test.ping", List.of("web1"));
        assertThat(a.awaitReturns(job.jid(), List.of("web1"))).hasSize(1);
        MinionDaemon web2 = b.startMinion("web2", 111, config -> config);
        Fleet.awaitState(web2, MinionState.PENDING);
        assertThat(storeB.list().ids(KeyState.PENDING)).doesNotContain("web2");
        AdminResult refused = b.master.keyStore().reject("web1", null, "brine-key:root");
        assertThat(refused.status()).isEqualTo(AdminResult.Status.REFUSED);
        assertThat(refused.message()).contains("nothing changed");
        assertThat(a.sessionIds()).containsKey("web1");

        for (InstanceSpec spec : stopped) {
            assertThat(cluster.servers().restartServer(spec)).isTrue();
        }
        await().until(() -> storeA.health().writable() && storeB.health().writable());
        assertThat(a.master.metrics().scrape()).contains("brine_cluster_writable 1.0");

        // web2 asks again after its wait; its key is recorded now, and the other master hears of it.
        await().until(() -> storeA.list().ids(KeyState.PENDING).contains("web2"));
        assertThat(storeA.accept("web2", null, "brine-key:root").done()).isTrue();
        Fleet.awaitState(web2, MinionState.ACCEPTED);
    }
}

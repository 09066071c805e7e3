package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.cluster.ZkKeyStore;
import io.brine.master.jobs.JobRecord;
import io.brine.master.jobs.StoredReturn;
import io.brine.master.publish.JobPublisher;
import io.brine.master.publish.PublishException;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.KeyState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.curator.test.InstanceSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real masters on a three-server ZooKeeper ensemble that loses its quorum (two servers stopped): accepted
 * minions keep their sessions from the masters' last view, a job is refused at once ("cluster has no quorum") and
 * runs nowhere, a new minion is told "pending, try later" and nothing is written, admin changes are refused; when
 * the servers come back the masters catch up and the new key is recorded at the minion's next attempt.
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
        assertThat(b.master.keyStore().accept("web1", null, "brine-key:root").done())
                .isTrue();
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        a.awaitSubscribed("web1");
        ZkKeyStore storeA = (ZkKeyStore) a.master.keyStore();
        ZkKeyStore storeB = (ZkKeyStore) b.master.keyStore();

        List<InstanceSpec> stopped =
                cluster.servers().getInstances().stream().limit(2).toList();
        cluster.loseQuorum(stopped);
        await().until(() -> !storeA.health().writable() && !storeB.health().writable());
        assertThat(a.master.metrics().scrape()).contains("brine_cluster_writable 0.0");

        assertThatThrownBy(() -> a.publish("test.ping", List.of("web1")))
                .isInstanceOf(PublishException.class)
                .hasMessageStartingWith(JobPublisher.NO_QUORUM);
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

    /**
     * Issue 24, item 1: publishes through a master's publisher port, one after another while two of the three
     * servers stop. Each gets an answer (the client waits longer than the master may take to decide); one refused
     * ran on no minion, one accepted ran on the minion of the master it went through.
     */
    @Test
    void duringQuorumLossEveryPublishIsAnsweredAndARefusedJobRunsNowhere() throws Exception {
        MinionDaemon web1 = a.startMinion("web1", 110, config -> config);
        MinionDaemon web2 = b.startMinion("web2", 111, config -> config);
        Fleet.awaitState(web1, MinionState.PENDING);
        Fleet.awaitState(web2, MinionState.PENDING);
        assertThat(a.master.keyStore().accept("web1", null, "brine-key:root").done())
                .isTrue();
        assertThat(a.master.keyStore().accept("web2", null, "brine-key:root").done())
                .isTrue();
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        Fleet.awaitState(web2, MinionState.ACCEPTED);
        a.awaitSubscribed("web1");
        b.awaitSubscribed("web2");
        ZkKeyStore storeA = (ZkKeyStore) a.master.keyStore();
        ZkKeyStore storeB = (ZkKeyStore) b.master.keyStore();

        Map<String, String> accepted = new LinkedHashMap<>();
        List<String> refused = new ArrayList<>();
        List<InstanceSpec> stopped =
                cluster.servers().getInstances().stream().limit(2).toList();
        try (BrineClient client = a.rootClient()) {
            BrineClient.Published before = client.publish(echo("before"));
            assertThat(before.unreachable()).isEmpty();
            accepted.put("before", before.jid());
            for (InstanceSpec spec : stopped) {
                assertThat(cluster.servers().killServer(spec)).isTrue();
            }
            // Until three in a row are refused: the first may still find the cluster writable, or not know yet.
            for (int n = 0, inARow = 0; inARow < 3; n++) {
                assertThat(n).as("publishes before three refusals").isLessThan(30);
                String tag = "during-" + n;
                try {
                    BrineClient.Published job = client.publish(echo(tag));
                    assertThat(job.unreachable()).as("connected to this master").doesNotContain("web1");
                    accepted.put(tag, job.jid());
                    inARow = 0;
                } catch (ClientException.Refused e) {
                    assertThat(e.getMessage())
                            .startsWith(JobPublisher.NO_QUORUM)
                            .contains("runs nowhere");
                    refused.add(tag);
                    inARow++;
                }
            }
        }
        for (InstanceSpec spec : stopped) {
            assertThat(cluster.servers().restartServer(spec)).isTrue();
        }
        await().until(() -> storeA.health().writable() && storeB.health().writable());

        // A job published once quorum is back runs on both minions; whatever the cluster held of the earlier ones
        // was delivered before it.
        try (BrineClient client = a.rootClient()) {
            BrineClient.Published after = client.publish(echo("after"));
            assertThat(client.awaitReturns(after.jid(), List.of("web1", "web2"), Duration.ofSeconds(30), event -> {}))
                    .containsOnlyKeys("web1", "web2");
        }
        await().untilAsserted(() -> assertThat(echoed(a, "web1")).containsAll(accepted.keySet()));
        Set<Object> ran = new HashSet<>(echoed(a, "web1"));
        ran.addAll(echoed(a, "web2"));
        ran.addAll(echoed(b, "web1"));
        ran.addAll(echoed(b, "web2"));
        assertThat(ran).as("refused jobs that ran").doesNotContainAnyElementsOf(refused);
        assertThat(ran).contains("after");
    }

    private static BrineClient.Job echo(String tag) {
        return new BrineClient.Job("list", "web1,web2", "test.echo", List.of(tag), Map.of(), 0);
    }

    /** What {@code minion} echoed, in every job {@code master}'s job cache holds (its own and the cluster's). */
    private static List<Object> echoed(Fleet master, String minion) {
        List<Object> values = new ArrayList<>();
        for (JobRecord job : master.master.master().jobs().cache().list()) {
            for (StoredReturn ret : master.master.master().jobs().cache().returns(job.jid())) {
                if (ret.id().equals(minion)) {
                    values.add(ret.returnValue());
                }
            }
        }
        return values;
    }
}

package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.cli.BrineCli;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.message.SessionMessage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real masters in cluster mode on one ZooKeeper server started by the test, with the minions split between
 * them: a job published through either master reaches every targeted minion whichever master holds its session,
 * the publisher hears every return, {@code jobs show} on the other master shows them, a targeted minion that no
 * master holds is reported unreachable, and one whose delivery a master has not reported yet is not confirmed.
 */
class ClusterJobsIT {

    @TempDir
    Path dir;

    private TwoMasterCluster cluster;
    private Fleet a;
    private Fleet b;

    @BeforeEach
    void startTwoMastersWithAMinionEach() throws Exception {
        cluster = TwoMasterCluster.onOneServer(dir, config -> config.acceptance(Fleet.autoAccept()));
        a = cluster.a;
        b = cluster.b;
        MinionDaemon onA = a.startMinion("web1", 100, config -> config);
        MinionDaemon onB = b.startMinion("web2", 101, config -> config);
        Fleet.awaitState(onA, MinionState.ACCEPTED);
        Fleet.awaitState(onB, MinionState.ACCEPTED);
        a.awaitSubscribed("web1");
        b.awaitSubscribed("web2");
        assertThat(a.sessionIds()).containsOnlyKeys("web1");
        assertThat(b.sessionIds()).containsOnlyKeys("web2");
    }

    @AfterEach
    void stopAll() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aJobThroughEitherMasterReachesTheMinionsOfBothAndItsPublisherHearsEveryReturn() throws Exception {
        for (Fleet through : List.of(a, b)) {
            try (BrineClient client = through.rootClient()) {
                BrineClient.Published job =
                        client.publish(new BrineClient.Job("list", "web1,web2", "test.ping", List.of(), Map.of(), 0));
                assertThat(job.minions()).containsExactly("web1", "web2");
                assertThat(job.unreachable()).isEmpty();

                Map<String, SessionMessage.ReturnEvent> returns =
                        client.awaitReturns(job.jid(), List.of("web1", "web2"), Duration.ofSeconds(10), event -> {});

                assertThat(returns).containsOnlyKeys("web1", "web2");
                assertThat(returns.values())
                        .allSatisfy(ret -> assertThat(ret.returnValue()).isEqualTo(true));
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void jobsShowOnTheOtherMasterHasEveryReturn() throws Exception {
        String jid;
        try (BrineClient client = a.rootClient()) {
            jid = client.publish(new BrineClient.Job("glob", "web*", "test.ping", List.of(), Map.of(), 0))
                    .jid();
        }
        try (BrineClient client = b.rootClient()) {
            Map<String, Object> shown =
                    await().until(() -> client.job(jid), job -> ((Map<String, Object>) job.get("returns")).size() == 2);
            assertThat((Map<String, Object>) shown.get("returns")).containsOnlyKeys("web1", "web2");
            assertThat((List<Object>) shown.get("missing")).isEmpty();
            assertThat((List<Object>) shown.get("unreachable")).isEmpty();
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void aTargetNoMasterHoldsIsReportedUnreachableNotLost() throws Exception {
        acceptedAndStopped("web3");

        try (BrineClient client = a.rootClient()) {
            BrineClient.Published job =
                    client.publish(new BrineClient.Job("glob", "web*", "test.ping", List.of(), Map.of(), 0));

            assertThat(job.minions()).containsExactly("web1", "web2", "web3");
            assertThat(job.unreachable()).containsExactly("web3");
            assertThat(client.awaitReturns(job.jid(), List.of("web1", "web2"), Duration.ofSeconds(10), event -> {}))
                    .containsOnlyKeys("web1", "web2");
            try (BrineClient onB = b.rootClient()) {
                // The returns reach ZooKeeper after each master stored them: wait until only web3 is missing.
                Map<String, Object> shown = await().until(
                                () -> onB.job(job.jid()),
                                doc -> ((List<Object>) doc.get("missing")).equals(List.of("web3")));
                assertThat((List<Object>) shown.get("unreachable")).containsExactly("web3");
                assertThat((List<Object>) shown.get("not_confirmed")).isEmpty();
                assertThat((List<Object>) shown.get("running")).isEmpty();
            }
        }
    }

    /** Starts {@code id} on master b, has it accepted, then stops it: an accepted minion no master holds. */
    private void acceptedAndStopped(String id) throws Exception {
        MinionDaemon gone = b.startMinion(id, 102, config -> config);
        Fleet.awaitState(gone, MinionState.ACCEPTED);
        b.stopMinion(gone);
        await().until(() -> !b.zmqTransport().subscribedMinions().contains(id));
    }

    /**
     * Issue 24, item 4: while a registered master has not reported (one slow under load), the targets no report
     * names are "not confirmed", not unreachable, so the publisher waits for their returns; {@code jobs show} tells
     * running, not confirmed and unreachable apart, and once every running master has reported the rest is
     * unreachable.
     */
    @Test
    @SuppressWarnings("unchecked")
    void aTargetAMasterHasNotReportedOnIsNotConfirmedUntilEveryMasterHas() throws Exception {
        acceptedAndStopped("web3");
        try (CuratorFramework zk = CuratorFrameworkFactory.builder()
                        .connectString(cluster.connectString())
                        .namespace("brine")
                        .retryPolicy(new RetryOneTime(100))
                        .authorization("digest", TwoMasterCluster.DIGEST)
                        .build();
                BrineClient client = a.rootClient()) {
            zk.start();
            zk.create().withMode(CreateMode.EPHEMERAL).forPath("/masters/slow");

            BrineClient.Published job =
                    client.publish(new BrineClient.Job("glob", "web*", "test.sleep", List.of(60), Map.of(), 0));

            assertThat(job.minions()).containsExactly("web1", "web2", "web3");
            assertThat(job.unreachable())
                    .as("not known to be unreachable while a master is silent")
                    .isEmpty();
            Map<String, Object> shown = client.job(job.jid());
            assertThat((Map<String, Object>) shown.get("returns")).isEmpty();
            assertThat((List<Object>) shown.get("running")).containsExactly("web1", "web2");
            assertThat((List<Object>) shown.get("not_confirmed")).containsExactly("web3");
            assertThat((List<Object>) shown.get("unreachable")).isEmpty();
            assertThat((List<Object>) shown.get("missing")).containsExactly("web1", "web2", "web3");

            // brine waits for web3's return and says what it knows of it, not "not connected".
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int exit = BrineCli.run(
                    new String[] {
                        "--master",
                        "127.0.0.1",
                        "--port",
                        String.valueOf(a.retPort()),
                        "--name",
                        "root",
                        "--key",
                        a.masterConfig.cachedir().resolve("root.pem").toString(),
                        "--master-pub",
                        a.masterConfig.pkiDir().resolve("master.pub").toString(),
                        "-t",
                        "1",
                        "-L",
                        "web1,web2,web3",
                        "test.echo",
                        "hello"
                    },
                    new PrintWriter(out, true),
                    new PrintWriter(err, true));
            assertThat(exit).isEqualTo(1);
            assertThat(out.toString()).contains("web1:").contains("web2:");
            assertThat(err.toString())
                    .contains("returned 2 of 3 targeted")
                    .contains("not confirmed: web3")
                    .doesNotContain("not connected");

            zk.delete().forPath("/masters/slow");
            Map<String, Object> settled = await().until(
                            () -> client.job(job.jid()),
                            doc -> ((List<Object>) doc.get("unreachable")).equals(List.of("web3")));
            assertThat((List<Object>) settled.get("not_confirmed")).isEmpty();
            assertThat((List<Object>) settled.get("running")).containsExactly("web1", "web2");
        }
    }
}

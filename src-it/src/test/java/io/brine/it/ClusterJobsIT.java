package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.message.SessionMessage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real masters in cluster mode on one ZooKeeper server started by the test, with the minions split between
 * them: a job published through either master reaches every targeted minion whichever master holds its session,
 * the publisher hears every return, {@code jobs show} on the other master shows them, and a targeted minion that
 * no master holds is reported unreachable.
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
                BrineClient.Published job = client.publish(new BrineClient.Job("list", "web1,web2", "test.ping",
                        List.of(), Map.of(), 0));
                assertThat(job.minions()).containsExactly("web1", "web2");
                assertThat(job.unreachable()).isEmpty();

                Map<String, SessionMessage.ReturnEvent> returns = client.awaitReturns(job.jid(),
                        List.of("web1", "web2"), Duration.ofSeconds(10), event -> { });

                assertThat(returns).containsOnlyKeys("web1", "web2");
                assertThat(returns.values()).allSatisfy(ret -> assertThat(ret.returnValue()).isEqualTo(true));
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void jobsShowOnTheOtherMasterHasEveryReturn() throws Exception {
        String jid;
        try (BrineClient client = a.rootClient()) {
            jid = client.publish(new BrineClient.Job("glob", "web*", "test.ping", List.of(), Map.of(), 0)).jid();
        }
        try (BrineClient client = b.rootClient()) {
            Map<String, Object> shown = await().until(() -> client.job(jid),
                    job -> ((Map<String, Object>) job.get("returns")).size() == 2);
            assertThat((Map<String, Object>) shown.get("returns")).containsOnlyKeys("web1", "web2");
            assertThat((List<Object>) shown.get("missing")).isEmpty();
            assertThat((List<Object>) shown.get("unreachable")).isEmpty();
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void aTargetNoMasterHoldsIsReportedUnreachableNotLost() throws Exception {
        MinionDaemon gone = b.startMinion("web3", 102, config -> config);
        Fleet.awaitState(gone, MinionState.ACCEPTED);
        b.stopMinion(gone);
        await().until(() -> !b.zmqTransport().subscribedMinions().contains("web3"));

        try (BrineClient client = a.rootClient()) {
            BrineClient.Published job = client.publish(new BrineClient.Job("glob", "web*", "test.ping", List.of(),
                    Map.of(), 0));

            assertThat(job.minions()).containsExactly("web1", "web2", "web3");
            assertThat(job.unreachable()).containsExactly("web3");
            assertThat(client.awaitReturns(job.jid(), List.of("web1", "web2"), Duration.ofSeconds(10),
                    event -> { })).containsOnlyKeys("web1", "web2");
            try (BrineClient onB = b.rootClient()) {
                // The returns reach ZooKeeper after each master stored them: wait until only web3 is missing.
                Map<String, Object> shown = await().until(() -> onB.job(job.jid()),
                        doc -> ((List<Object>) doc.get("missing")).equals(List.of("web3")));
                assertThat((List<Object>) shown.get("unreachable")).containsExactly("web3");
            }
        }
    }
}

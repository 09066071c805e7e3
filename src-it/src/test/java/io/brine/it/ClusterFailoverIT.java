package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.master.publish.JobPublisher;
import io.brine.master.session.MinionSession;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.store.keys.KeyState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A minion with {@code master: [a, b]} and {@code master_type: failover} in front of a cluster of two masters on one
 * ZooKeeper server started by the test: when the master holding its session stops, or keeps the connection open and
 * answers nothing, it moves to the other with the same key (no re-acceptance), resuming its session there with the
 * ticket the first gave it (the masters share their ticket keys), and a job published through that master reaches it;
 * (issue 24, item 3). Runs beside other classes: nothing here waits on a timeout shorter than the suite's defaults;
 * that a minion stays with a master that answers, whatever its timeouts, is {@link ClusterFailoverTimeoutsIT}'s, which
 * runs alone.
 */
class ClusterFailoverIT {

    @TempDir
    Path dir;

    private TwoMasterCluster cluster;
    private Fleet a;
    private Fleet b;

    @BeforeEach
    void startTwoMasters() throws Exception {
        cluster = TwoMasterCluster.onOneServer(dir, config -> config);
        a = cluster.a;
        b = cluster.b;
        a.minionHeartbeat = Duration.ofSeconds(1);
    }

    @AfterEach
    void stopAll() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aMasterThatHoldsTheConnectionAndAnswersNothingIsLeft() throws Exception {
        try (CuttableProxy toA = new CuttableProxy(a.retPort())) {
            List<String> masters = List.of("127.0.0.1:" + toA.port(), "127.0.0.1:" + b.retPort());
            MinionDaemon minion = a.startMinion("web1", 100, config -> config.failoverMasters(masters));
            accept(minion);
            await().until(() -> a.sessionIds().containsKey("web1"));

            toA.hold(); // a's connection stays open at both ends; nothing reaches a, so nothing is answered

            await().until(() -> b.sessionIds().containsKey("web1"));
            Fleet.awaitState(minion, MinionState.ACCEPTED);
            b.awaitSubscribed("web1");
            JobPublisher.Published job = b.publish("test.ping", List.of("web1"));
            assertThat(b.awaitReturns(job.jid(), List.of("web1"))).hasSize(1);
            toA.release();
        }
    }

    private void accept(MinionDaemon minion) {
        accept(b, minion);
    }

    /** Waits until {@code minion} is pending, accepts it through {@code b} as an admin would, and waits for it. */
    static void accept(Fleet b, MinionDaemon minion) {
        Fleet.awaitState(minion, MinionState.PENDING);
        assertThat(b.master.keyStore().accept("web1", null, "brine-key:root").done())
                .isTrue();
        Fleet.awaitState(minion, MinionState.ACCEPTED);
    }

    static MinionSession session(Fleet fleet, String id) {
        return fleet.master.master().sessions().all().stream()
                .filter(s -> s.minionId().equals(id))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void whenItsMasterStopsTheMinionMovesToTheOtherWithItsKey() throws Exception {
        List<String> masters = List.of("127.0.0.1:" + a.retPort(), "127.0.0.1:" + b.retPort());
        MinionDaemon minion = a.startMinion("web1", 100, config -> config.failoverMasters(masters));
        Fleet.awaitState(minion, MinionState.PENDING);
        assertThat(b.master.keyStore().accept("web1", null, "brine-key:root").done())
                .isTrue();
        Fleet.awaitState(minion, MinionState.ACCEPTED);
        await().until(() -> a.sessionIds().containsKey("web1"));
        assertThat(b.sessionIds()).doesNotContainKey("web1");
        // It holds a resumption ticket, sealed under the cluster's ticket key (stored: status.json's resumable_until).
        await().until(() -> ResumptionIT.holdsTicket(minion));

        a.stopMaster();

        await().until(() -> b.sessionIds().containsKey("web1"));
        Fleet.awaitState(minion, MinionState.ACCEPTED);
        // b opened a's ticket: the move cost no private-key operation (issue 26).
        assertThat(minion.minion().status().reason()).isEqualTo("resumed");
        assertThat(ResumptionIT.counted(b.master, "brine.resumptions")).isEqualTo(1);
        assertThat(ResumptionIT.signedAnswers(b.master)).isZero();
        b.awaitSubscribed("web1");
        JobPublisher.Published job = b.publish("test.ping", List.of("web1"));
        assertThat(b.awaitReturns(job.jid(), List.of("web1"))).hasSize(1);
        // Moved with its key: the cluster still holds that one key for it, accepted, and nothing new is pending.
        assertThat(b.master.keyStore().list().ids(KeyState.PENDING)).isEmpty();
        assertThat(b.master.keyStore().list().ids(KeyState.DENIED)).isEmpty();
    }
}

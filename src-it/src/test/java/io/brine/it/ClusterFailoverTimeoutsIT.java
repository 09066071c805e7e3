package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.MinionConfig;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A failover minion ({@code master: [a, b]}, {@code master_type: failover}) stays with the master of a two-master
 * cluster that answers it, whatever its timeouts (issue 24, item 3; the moves are {@link ClusterFailoverIT}'s). Runs
 * alone: its minion's auth_timeout is scaled down to 1.5 s, which a heartbeat's answer delayed by a neighbour taking
 * the cores could miss, and the minion would then leave a healthy master.
 */
@RunsAlone
class ClusterFailoverTimeoutsIT {

    @TempDir
    Path dir;

    private TwoMasterCluster cluster;

    @AfterEach
    void stopAll() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * The report's {@code auth_timeout: 15}, {@code acceptance_wait_time: 5} and 30 s heartbeats, a tenth of each: the
     * grains sent after acceptance expect no answer, and the first heartbeat goes out after auth_timeout plus the
     * acceptance wait; the minion used to leave its healthy master then (every 22 s in the report).
     */
    @Test
    void aMinionStaysWithAMasterThatAnswersWhateverItsTimeouts() throws Exception {
        cluster = TwoMasterCluster.onOneServer(dir, config -> config);
        Fleet a = cluster.a;
        Fleet b = cluster.b;
        a.minionHeartbeat = Duration.ofSeconds(3);
        List<String> masters = List.of("127.0.0.1:" + a.retPort(), "127.0.0.1:" + b.retPort());
        MinionDaemon minion = a.startMinion(
                "web1",
                100,
                config -> config.failoverMasters(masters)
                        .auth(new MinionConfig.Auth(
                                Duration.ofMillis(500), Duration.ZERO, false, Duration.ofMillis(1500))));
        ClusterFailoverIT.accept(b, minion);
        await().until(() -> a.sessionIds().containsKey("web1"));
        Object session = a.sessionIds().get("web1");
        long firstSeen = ClusterFailoverIT.session(a, "web1").lastSeenMs();

        // Three heartbeats (3 to 3.75 s apart) answered by a, well past the 2 s after which the minion used to leave.
        await().until(() -> ClusterFailoverIT.session(a, "web1").lastSeenMs() - firstSeen >= 7_000);

        assertThat(a.sessionIds().get("web1")).isEqualTo(session);
        assertThat(b.sessionIds()).doesNotContainKey("web1");
        assertThat(minion.minion().state()).isEqualTo(MinionState.ACCEPTED);
    }
}

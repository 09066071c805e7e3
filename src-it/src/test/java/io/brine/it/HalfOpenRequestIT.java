package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.TransportKind;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12: the minion's ZeroMQ request connection sends no ZMTP heartbeats (the session heartbeat is answered end to
 * end), so a half-open connection is found by the minion: when a heartbeat goes unanswered for auth_timeout, the
 * minion drops the connection and authenticates again on a new one, instead of into the dead one.
 */
class HalfOpenRequestIT {

    private static final Duration HEARTBEAT = Duration.ofSeconds(1);

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    @BeforeEach
    void setUp() {
        fleet = new Fleet(dir).transport(TransportKind.ZEROMQ);
        fleet.minionHeartbeat = HEARTBEAT;
    }

    @Test
    void aMinionWhoseHeartbeatGoesUnansweredConnectsAfreshWithinTheAuthTimeout() throws Exception {
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        try (CuttableProxy requests = new CuttableProxy(fleet.retPort())) {
            MinionDaemon minion = fleet.startMinion("m1", b -> b.retPort(requests.port()));
            fleet.awaitAll(MinionState.ACCEPTED);
            Map<String, Object> before = fleet.sessionIds();
            assertThat(requests.connections).hasValue(1);

            // The connection stays open at both ends and nothing the minion sends reaches the master: half-open.
            requests.hold();

            // The next heartbeat (within 1.25 s) goes unanswered for auth_timeout (5 s); then a new connection at
            // once. Nothing else on this connection would ever notice (no ZMTP heartbeat on the request socket, the
            // proxy keeps both ends open), so a new connection at all, within the suite's wait, is the session
            // heartbeat's doing.
            await().until(() -> requests.connections.get() >= 2);
            assertThat(minion.minion().state()).isNotEqualTo(MinionState.ACCEPTED);

            requests.release();
            fleet.awaitAll(MinionState.ACCEPTED);
            await().until(() -> fleet.sessionIds().containsKey("m1")
                    && !fleet.sessionIds().get("m1").equals(before.get("m1")));
            fleet.awaitSubscribed("m1");
            JobPublisher.Published job = fleet.publish("test.ping", List.of("m1"));
            fleet.awaitReturns(job.jid(), List.of("m1"));
        }
    }
}

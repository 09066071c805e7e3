package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.daemon.config.TransportKind;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.message.SessionMessage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A minion's {@code id} grain is the id of its session, whatever it claims (issue 30, item 6; DESIGN §4.8): a minion
 * that says {@code id: db1} in its grains is not selected by {@code -G id:db1}, and is by {@code -G id:web1}.
 */
class ClaimedIdIT {

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    @Test
    void aBrineMinionClaimingAnotherIdInItsGrainsIsTargetedByItsOwn() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        // web1 misconfigured (a static grain id: db1); web2 modified to report id: db1 after auth; db1 itself.
        MinionDaemon web1 = fleet.startMinion("web1", b -> b.grains(Map.of("id", List.of("db1"))));
        MinionDaemon web2 = fleet.startMinion("web2");
        fleet.startMinion("db1");
        fleet.awaitAll(MinionState.ACCEPTED);
        fleet.awaitSubscribed("web1", "web2", "db1");
        web2.minion().reportGrains(Map.of("id", "db1", "role", "claimed"));
        await().until(() -> fleet.master.master().grains().get("web2").containsKey("role"));
        await().until(() -> fleet.master.master().grains().get("web1").containsKey("os"));
        assertThat(web1.minion().state()).isEqualTo(MinionState.ACCEPTED);

        try (BrineClient root = fleet.rootClient()) {
            assertThat(root.publish(BrineClient.Job.of("grain", "id:db1", "test.ping"))
                            .minions())
                    .containsExactly("db1");
            assertThat(root.publish(BrineClient.Job.of("compound", "G@id:db1 or P@id:db", "test.ping"))
                            .minions())
                    .containsExactly("db1");
            for (String id : List.of("web1", "web2")) {
                BrineClient.Published own = root.publish(BrineClient.Job.of("grain", "id:" + id, "test.ping"));
                assertThat(own.minions()).containsExactly(id);
                // The minion checks the target against itself too, and finds itself by its own id.
                Map<String, SessionMessage.ReturnEvent> returns =
                        root.awaitReturns(own.jid(), own.minions(), WAIT, r -> {});
                assertThat(returns).containsOnlyKeys(id);
            }
        }
    }

    @Test
    void aSaltMinionClaimingAnotherIdInItsGrainsIsTargetedByItsOwn() throws Exception {
        fleet = new Fleet(dir).transport(TransportKind.ZEROMQ);
        fleet.startMaster(b -> b.saltMinions(true).acceptance(Fleet.autoAccept()));
        fleet.startMinion("db1");
        var addresses = fleet.master.master().addresses();
        // A stock salt-minion whose minion config sets the static grain id: db1; it reports it with _pillar.
        try (SaltMinionProcess salt = SaltMinionProcess.start(
                "salt1",
                dir.resolve("salt-salt1"),
                "zeromq",
                addresses.request().getPort(),
                addresses.publish().getPort(),
                "grains:",
                "  id: db1",
                "  role: claimed")) {
            await().atMost(WAIT).until(() -> {
                salt.assertRunning();
                return fleet.master.master().grains().get("salt1").containsKey("role");
            });
            fleet.awaitAll(MinionState.ACCEPTED);
            fleet.awaitSubscribed("salt1", "db1");
            assertThat(Files.exists(fleet.masterConfig.pkiDir().resolve("minions/salt1")))
                    .isTrue();
            FleetJobs jobs = new FleetJobs(fleet);
            assertThat(jobs.publish("grain", "id:db1", "test.ping").minions()).containsExactly("db1");
            var own = jobs.publish("grain", "id:salt1", "test.ping");
            assertThat(own.minions()).containsExactly("salt1");
            assertThat(jobs.awaitReturns(own.jid(), "salt1").get("salt1").returnValue())
                    .isEqualTo(true);
        }
    }
}

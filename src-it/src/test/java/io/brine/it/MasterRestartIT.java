package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.master.client.BrineClient;
import io.brine.master.config.MasterConfig;
import io.brine.master.jobs.StoredReturn;
import io.brine.minion.MinionState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Returns survive a short master restart: the minion authenticates again by itself and resends what is unacknowledged. */
class MasterRestartIT {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private Fleet fleet;

    @AfterEach
    void stop() {
        if (fleet != null) {
            fleet.close();
        }
    }

    @Test
    void aReturnMadeWhileTheMasterRestartsReachesTheNewMastersJobCache(@TempDir Path dir) throws Exception {
        fleet = new Fleet(dir).seedMasterKeys(108, 109).keysFrom(110);
        fleet.startMaster(b -> b.acceptance(MasterConfig.Acceptance.builder().autoAccept(true).build()));
        fleet.startMinion("m1");
        await().atMost(WAIT).until(() -> fleet.minions.get(0).minion().state() == MinionState.ACCEPTED);

        // A job that runs until the test lets it finish, so the master can be stopped while it runs.
        Path started = dir.resolve("started");
        Path release = dir.resolve("release");
        String script = "touch " + started + " && while [ ! -e " + release + " ]; do sleep 0.05; done && echo done";
        String jid;
        try (BrineClient client = fleet.rootClient()) {
            jid = client.publish(new BrineClient.Job("list", "m1", "cmd.run", List.of(script),
                    Map.of("shell", true), 0)).jid();
        }
        await().atMost(WAIT).until(() -> Files.exists(started));

        fleet.stopMaster();
        Files.createFile(release); // the job ends and returns while no master is there
        fleet.restartMaster();

        await().atMost(WAIT).pollInterval(Duration.ofMillis(50))
                .until(() -> !fleet.master.master().jobs().cache().returns(jid).isEmpty());
        StoredReturn stored = fleet.master.master().jobs().cache().returns(jid).get(0);
        assertThat(stored.id()).isEqualTo("m1");
        assertThat(stored.returnValue()).isEqualTo("done");
        assertThat(fleet.master.master().sessions().all()).hasSize(1);
        assertThat(fleet.minions.get(0).minion().state()).isEqualTo(MinionState.ACCEPTED);
    }
}

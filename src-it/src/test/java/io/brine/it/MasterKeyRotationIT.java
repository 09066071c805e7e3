package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.MinionConfig;
import io.brine.keytool.BrineKey;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.minion.auth.MasterPin;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master key's rotation end to end (issue 25): brine-key rotates it beside a running master, which sends the
 * chain to its connected minion (it pins each new key and runs jobs signed under the grace), and a minion stopped
 * across three rotations comes back, is shown the chain at its auth, walks it from its pin and rejoins by itself.
 */
class MasterKeyRotationIT {

    @TempDir
    Path dir;
    @AutoClose
    Fleet fleet;

    private String pinOf(MinionConfig config) throws Exception {
        return Files.readString(config.pkiDir().resolve(MasterPin.FILE));
    }

    private String masterPub() throws Exception {
        return Files.readString(fleet.masterConfig.pkiDir().resolve("master.pub"));
    }

    @Test
    void aConnectedMinionFollowsEachRotationAndOneAwayAcrossThreeRejoinsByItself() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        MinionDaemon connected = fleet.startMinion("web1");
        MinionDaemon away = fleet.startMinion("web2");
        fleet.awaitAll(MinionState.ACCEPTED);
        MinionConfig connectedConfig = fleet.configOf(connected);
        MinionConfig awayConfig = fleet.configOf(away);
        String first = pinOf(awayConfig);
        fleet.stopMinion(away);

        for (int rotation = 1; rotation <= 3; rotation++) {
            String before = masterPub();
            int exit = BrineKey.commandLine(new BrineKey()).execute("--pki-dir", fleet.masterConfig.pkiDir()
                    .toString(), "--cachedir", dir.resolve("admin-cache").toString(), "--rotate-master-key");
            assertThat(exit).isZero();
            assertThat(masterPub()).isNotEqualTo(before);
            // The master looks for a rotation every second and sends the chain down the minion's session.
            await().until(() -> pinOf(connectedConfig).equals(masterPub()));
        }
        assertThat(Files.readString(dir.resolve("admin-cache/audit.log"))).contains("\"master-key-rotated\"");
        String jid = fleet.publish("test.ping", List.of("web1")).jid();
        assertThat(fleet.awaitReturns(jid, List.of("web1"))).hasSize(1);

        MinionDaemon back = fleet.start(awayConfig);
        Fleet.awaitState(back, MinionState.ACCEPTED);
        assertThat(pinOf(awayConfig)).isEqualTo(masterPub()).isNotEqualTo(first);
        fleet.awaitSubscribed("web1", "web2");
        String both = fleet.publish("test.ping", List.of("web1", "web2")).jid();
        assertThat(fleet.awaitReturns(both, List.of("web1", "web2"))).hasSize(2);
    }
}

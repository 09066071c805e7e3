package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.MinionConfig;
import io.brine.keytool.BrineKey;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.minion.auth.MasterPin;
import io.brine.protocol.testing.TestKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
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
            assertThat(brineKey()).isZero();
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

    private int brineKey(String... rotation) {
        List<String> args = new ArrayList<>(List.of(
                "--pki-dir",
                fleet.masterConfig.pkiDir().toString(),
                "--cachedir",
                dir.resolve("admin-cache").toString(),
                "--rotate-master-key"));
        args.addAll(List.of(rotation));
        return BrineKey.commandLine(new BrineKey()).execute(args.toArray(String[]::new));
    }

    @Test
    void aMinionThatVerifiesTheSigningKeyFollowsASignedRotationAndRefusesAnUnsignedOne() throws Exception {
        fleet = new Fleet(dir);
        Path offline = Files.createDirectories(dir.resolve("usb"));
        Path signingKey = Files.writeString(offline.resolve("master_sign.pem"), TestKeys.privatePem(200));
        Files.setPosixFilePermissions(signingKey, PosixFilePermissions.fromString("r--------"));
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        Path minionPki =
                Files.createDirectories(fleet.minionConfig("web1").build().pkiDir());
        Files.writeString(minionPki.resolve("master_sign.pub"), TestKeys.publicPem(200));
        MinionDaemon minion = fleet.startMinion("web1", b -> b.masterSignKeyName("master_sign"));
        MinionConfig config = fleet.configOf(minion);
        Fleet.awaitState(minion, MinionState.ACCEPTED);

        assertThat(brineKey("--master-sign-key", signingKey.toString())).isZero();
        await().until(() -> pinOf(config).equals(masterPub()));
        String signed = masterPub();

        // Signed by the previous master key alone, as a thief of that key could sign it: not followed, and once the
        // master answers with the new key the minion refuses it as it refuses a stranger.
        assertThat(brineKey()).isZero();
        await().until(() -> fleet.master.metrics().scrape().contains("brine_master_key_rotations_total 2.0"));
        fleet.stopMinion(minion);
        MinionDaemon back = fleet.start(config);
        Fleet.awaitState(back, MinionState.MASTER_KEY_MISMATCH);
        assertThat(pinOf(config)).isEqualTo(signed).isNotEqualTo(masterPub());
    }
}

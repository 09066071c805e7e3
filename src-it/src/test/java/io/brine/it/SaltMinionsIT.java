package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.TransportKind;
import io.brine.store.keys.AdminResult;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Stock salt-minions 3008.2 on a brine master (issue 15), each a real Python process on loopback. */
class SaltMinionsIT {

    @TempDir
    Path dir;
    @AutoClose
    Fleet fleet;
    private final java.util.List<SaltMinionProcess> salts = new java.util.ArrayList<>();

    @BeforeEach
    void setUp() {
        fleet = new Fleet(dir).transport(TransportKind.ZEROMQ);
    }

    @AfterEach
    void stopSalt() throws InterruptedException {
        for (SaltMinionProcess salt : salts) {
            salt.close();
        }
    }

    private SaltMinionProcess startSalt(String id, String transport) throws Exception {
        var addresses = fleet.master.master().addresses();
        SaltMinionProcess salt = SaltMinionProcess.start(id, dir.resolve("salt-" + id), transport,
                addresses.request().getPort(), addresses.publish().getPort());
        salts.add(salt);
        return salt;
    }

    @Test
    void aStockSaltMinionOverZeroMqIsPendingThenAcceptedAndSignsIn() throws Exception {
        fleet.startMaster(b -> b.saltMinions(true));
        SaltMinionProcess salt = startSalt("salt1", "zeromq");

        Path pending = fleet.masterConfig.pkiDir().resolve("minions_pre/salt1");
        await().atMost(WAIT).until(() -> {
            salt.assertRunning();
            return Files.exists(pending);
        });
        salt.awaitLog("Waiting");

        AdminResult accepted = fleet.master.keyStore().accept("salt1", null, "test-admin");
        assertThat(accepted.toString()).doesNotContainIgnoringCase("fail");
        assertThat(fleet.masterConfig.pkiDir().resolve("minions/salt1")).exists();

        // Signed in: it trusted and cached the master's key, then finished its start-up requests.
        await().atMost(WAIT).until(() -> Files.exists(salt.dir.resolve("pki/minion_master.pub")));
        salt.awaitLog("Minion is ready to receive requests!");
        assertThat(Files.readString(fleet.masterConfig.cachedir().resolve("audit.log")))
                .contains("auth-pending").contains("salt1");
    }
}

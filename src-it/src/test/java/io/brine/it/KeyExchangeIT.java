package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.master.keys.AdminResult;
import io.brine.master.keys.KeyState;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KeyExchangeIT {

    @TempDir
    Path dir;
    Fleet fleet;

    @BeforeEach
    void setUp() {
        fleet = new Fleet(dir);
    }

    @AfterEach
    void tearDown() {
        fleet.close();
    }

    @Test
    void aNewMinionWaitsPendingUntilAnAdminAcceptsIt() throws Exception {
        fleet.startMaster(b -> b);
        MinionDaemon web1 = fleet.startMinion("web1");
        await().atMost(Duration.ofSeconds(10)).until(() -> web1.minion().state() == MinionState.PENDING);
        Path pki = fleet.masterConfig.pkiDir();
        assertThat(pki.resolve("minions_pre/web1")).exists();

        AdminResult result = fleet.master.keyStore().accept("web1", null, "test-admin");
        assertThat(result.status()).isEqualTo(AdminResult.Status.DONE);
        await().atMost(Duration.ofSeconds(10)).until(() -> web1.minion().state() == MinionState.ACCEPTED);
        assertThat(dir.resolve("minions/web1/pki/minion_master.pub")).exists();
        assertThat(Files.readString(dir.resolve("minions/web1/pki/minion_master.pub")))
                .isEqualTo(Files.readString(pki.resolve("master.pub")));
    }
}

package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.cluster.ZkKeyStore;
import io.brine.daemon.config.TransportKind;
import io.brine.master.MasterDaemon;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.minion.auth.MasterPin;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.MasterKeyRotation.Rotated;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master key of a cluster rotated (issue 25), two in-process masters on one ZooKeeper server: both switch at
 * their watch and sign publications with the previous key through the grace; a minion signed in to a, pinned to the
 * old key and cut from a before a could tell it, fails over to b, is shown the chain, pins the new key and is
 * served; a master started after the rotation serves the new key. Over TCP, so that cutting the minion's one
 * connection to a also keeps a's succession from it (over ZeroMQ it would come down the publish port).
 */
class ClusterMasterKeyRotationIT {

    /** {@link TwoMasterCluster}'s master key, installed on both masters. */
    private static final KeyPair INSTALLED = TestKeys.pair(250);

    @TempDir
    Path dir;

    @AutoClose
    TwoMasterCluster cluster;

    private static PublicKey inForce(Fleet fleet) {
        return fleet.master.master().masterKeys().current().getPublic();
    }

    private static MasterDaemon master(Fleet fleet) {
        return fleet.master;
    }

    @Test
    void bothMastersSwitchAndAMinionFailingOverDuringTheGraceIsServedAndPinsTheNewKey() throws Exception {
        cluster = TwoMasterCluster.onOneServer(dir, config -> config.transport(TransportKind.TCP));
        Fleet a = cluster.a.transport(TransportKind.TCP);
        Fleet b = cluster.b.transport(TransportKind.TCP);
        a.minionHeartbeat = Duration.ofSeconds(1);
        Rotated rotated;
        MinionDaemon minion;
        try (CuttableProxy toA = new CuttableProxy(a.tcpPort())) {
            List<String> masters = List.of("127.0.0.1:" + toA.port(), "127.0.0.1:" + b.tcpPort());
            minion = a.startMinion("web1", 100, config -> config.failoverMasters(masters));
            ClusterFailoverIT.accept(b, minion);
            await().until(() -> a.sessionIds().containsKey("web1"));
            Path pin = a.configOf(minion).pkiDir().resolve(MasterPin.FILE);
            assertThat(Files.readString(pin)).isEqualTo(TestKeys.publicPem(250));

            // What a master's Salt side listens with (a new aes key): run on each master as it takes the rotation.
            AtomicInteger aTook = new AtomicInteger();
            AtomicInteger bTook = new AtomicInteger();
            a.master.master().masterKeys().onRotated(aTook::incrementAndGet);
            b.master.master().masterKeys().onRotated(bTook::incrementAndGet);
            toA.hold(); // a's connection stays open and silent: a's succession never reaches the minion
            rotated = ((ZkKeyStore) master(b).keyStore())
                    .rotateMasterKey(
                            INSTALLED,
                            2048,
                            Duration.ofDays(7),
                            5,
                            Optional.empty(),
                            "brine-key:test",
                            Clock.systemUTC());

            await().until(() -> inForce(a).equals(rotated.next()) && inForce(b).equals(rotated.next()));
            await().until(() -> aTook.get() == 1 && bTook.get() == 1);
            for (Fleet fleet : List.of(a, b)) {
                assertThat(fleet.master.master().masterKeys().chain()).hasSize(1);
                assertThat(fleet.master.master().masterKeys().publicationKey()).isEqualTo(INSTALLED.getPrivate());
                assertThat(fleet.master.master().masterKeys().saltSignature()).isEmpty(); // none in ZooKeeper
            }
            await().until(() -> b.sessionIds().containsKey("web1"));
            Fleet.awaitState(minion, MinionState.ACCEPTED);
            await().until(() -> Files.readString(pin).equals(Pem.publicKeySpki(rotated.next())));
            JobPublisher.Published job = b.publish("test.ping", List.of("web1"));
            assertThat(b.awaitReturns(job.jid(), List.of("web1"))).hasSize(1);
            toA.release();
        }

        a.restartMaster(); // installed with the old key, started after the rotation
        assertThat(inForce(a)).isEqualTo(rotated.next());
        assertThat(a.master.master().masterKeys().publicationKey()).isEqualTo(INSTALLED.getPrivate());
        assertThat(a.master.master().masterKeys().chain()).hasSize(1);
    }
}

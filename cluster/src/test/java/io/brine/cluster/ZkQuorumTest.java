package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.ClusterConfig;
import io.brine.protocol.testing.SuiteDefaults;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.Offer;
import io.brine.store.keys.PolicyVerdict;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Masters' key stores when their ZooKeeper ensemble (three real servers in this JVM) loses servers: one of three
 * changes nothing; without quorum, masters serve from their last view, answer new keys "pending, try later"
 * without a write, refuse admin changes and catch up when it returns; a master cut off until its session expires
 * says so and refuses admin changes until it is back.
 */
class ZkQuorumTest {

    @TempDir
    Path pki;

    @RegisterExtension
    final ThreeServerEnsemble ensemble = new ThreeServerEnsemble();

    private ZkKeyStore store(String connect, Duration sessionTimeout, Duration reconnectGrace) throws Exception {
        return ensemble.store(
                ensemble.client(new ClusterConfig(connect, "/brine", sessionTimeout, Optional.empty())),
                pki,
                reconnectGrace);
    }

    /**
     * A master whose writes wait {@code reconnectGrace} for a lost connection: the suite's wait where the test needs
     * the reconnect to another server (after an election, when the stopped one led, it took longer than a master's
     * 5 s on a loaded machine), a master's own where the test needs the answer given without the cluster.
     */
    private ZkKeyStore store(Duration reconnectGrace) throws Exception {
        return store(ensemble.servers().getConnectString(), ClusterConfig.DEFAULT_SESSION_TIMEOUT, reconnectGrace);
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    @Test
    void oneServerOfThreeStoppedHasNoVisibleEffect() throws Exception {
        ZkKeyStore a = store(SuiteDefaults.WAIT);
        ZkKeyStore b = store(SuiteDefaults.WAIT);
        TestingCluster servers = ensemble.servers();
        assertThat(servers.killServer(servers.findConnectionInstance(
                        a.client().getZookeeperClient().getZooKeeper())))
                .isTrue();

        KeyDecision pending = a.offer("n1", key(60), PolicyVerdict.NONE);
        KeyDecision accepted = a.offer("n2", key(61), PolicyVerdict.ACCEPT);

        assertThat(pending).isInstanceOf(KeyDecision.Pending.class);
        assertThat(pending.reason()).doesNotContain("not recorded");
        assertThat(accepted).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(a.accept("n1", null, "admin").done()).isTrue();
        await().until(() -> b.acceptedIds().containsAll(List.of("n1", "n2")));
        assertThat(a.health().writable()).isTrue();
        assertThat(b.health().writable()).isTrue();
    }

    @Test
    void withoutQuorumMastersServeTheirLastViewWriteNothingAndCatchUpWhenItReturns() throws Exception {
        ZkKeyStore a = store(ZkKeyStoreOptions.RECONNECT_GRACE);
        ZkKeyStore b = store(ZkKeyStoreOptions.RECONNECT_GRACE);
        assertThat(a.offer("web1", key(62), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(a.offer("db1", key(63), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Pending.class);
        await().until(() -> b.acceptedKey("web1").isPresent() && b.lookup("db1", key(63)) == KeyLookup.PENDING_SAME);
        List<InstanceSpec> stopped =
                ensemble.servers().getInstances().stream().limit(2).toList();
        for (InstanceSpec spec : stopped) {
            assertThat(ensemble.servers().killServer(spec)).isTrue();
        }
        await().until(() -> !a.health().writable() && !b.health().writable());
        assertThat(a.health().describe()).contains("ZooKeeper", "serving from the last view");

        // Accepted minions go on, from the last view.
        Offer known = a.offer("web1", key(62), current -> PolicyVerdict.NONE);
        assertThat(known.decision()).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(known.current()).isTrue();
        // A new key, even one a policy accepts: "pending, try later", nothing written.
        KeyDecision fresh = b.offer("new1", key(64), PolicyVerdict.ACCEPT);
        assertThat(fresh).isInstanceOf(KeyDecision.Pending.class);
        assertThat(fresh.reason()).contains("not recorded", "try later");
        KeyDecision other = a.offer("web1", key(65), PolicyVerdict.NONE);
        assertThat(other).isInstanceOf(KeyDecision.Denied.class);
        assertThat(other.reason()).contains("not recorded");
        // Admin changes are refused, saying why.
        AdminResult refused = b.accept("db1", null, "admin");
        assertThat(refused.status()).isEqualTo(AdminResult.Status.REFUSED);
        assertThat(refused.message()).contains("db1: accept refused", "ZooKeeper", "nothing changed");
        assertThat(a.delete("web1", "admin").status()).isEqualTo(AdminResult.Status.REFUSED);
        assertThatThrownBy(() -> a.requestRotation("admin"))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("nothing changed");
        assertThat(a.rotationRequests()).isEqualTo(-1);
        assertThat(a.list().ids(KeyState.ACCEPTED)).containsExactly("web1");
        assertThat(a.list().ids(KeyState.PENDING)).containsExactly("db1");
        assertThat(b.list().ids(KeyState.DENIED)).isEmpty();

        for (InstanceSpec spec : stopped) {
            assertThat(ensemble.servers().restartServer(spec)).isTrue();
        }
        await().until(() -> a.health().writable() && b.health().writable());

        assertThat(b.accept("db1", null, "admin").done()).isTrue();
        assertThat(b.offer("new1", key(64), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        await().until(() -> a.acceptedIds().containsAll(List.of("web1", "db1", "new1")));
        assertThat(a.rotationRequests()).isZero();
        // Nothing was written while there was no quorum: one trail entry for new1, its acceptance now.
        List<String> trail = ZkAuditTrail.read(a.client());
        assertThat(trail.stream().filter(line -> line.contains("\"id\":\"new1\"")))
                .hasSize(1);
        assertThat(trail.stream().filter(line -> line.contains("\"event\":\"key-denied\"")))
                .isEmpty();
    }

    @Test
    void aMasterCutOffUntilItsSessionExpiresRefusesAdminChangesSaysSoAndCatchesUp() throws Exception {
        CuttableProxy partition = ensemble.closeAfter(new CuttableProxy(
                ensemble.servers().getInstances().iterator().next().getConnectString()));
        ZkKeyStore a = store(partition.connectString(), Duration.ofSeconds(4), ZkKeyStoreOptions.RECONNECT_GRACE);
        ZkKeyStore b = store(SuiteDefaults.WAIT);
        assertThat(b.offer("app1", key(66), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Pending.class);
        await().until(() -> a.lookup("app1", key(66)) == KeyLookup.PENDING_SAME);

        partition.cut();
        await().until(() -> a.health().state() == ClusterHealth.State.SESSION_EXPIRED);

        assertThat(a.health().describe()).contains("session expired");
        // No policy is asked about a key that cannot be recorded (a single-use grant would be spent for nothing).
        AtomicInteger asked = new AtomicInteger();
        Offer fresh = a.offer("new2", key(67), current -> {
            asked.incrementAndGet();
            return PolicyVerdict.ACCEPT;
        });
        assertThat(asked).hasValue(0);
        assertThat(fresh.decision()).isInstanceOf(KeyDecision.Pending.class);
        assertThat(fresh.decision().reason()).contains("not recorded", "session expired", "try later");
        AdminResult refused = a.accept("app1", null, "admin");
        assertThat(refused.status()).isEqualTo(AdminResult.Status.REFUSED);
        assertThat(refused.message()).contains("session expired", "nothing changed");
        // The rest of the cluster has its quorum and goes on.
        assertThat(b.accept("app1", null, "admin").done()).isTrue();
        assertThat(a.lookup("app1", key(66))).isEqualTo(KeyLookup.PENDING_SAME);

        partition.heal();
        await().until(() -> a.health().writable());
        await().until(() -> a.acceptedKey("app1").isPresent());
        assertThat(a.reject("app1", null, "admin").done()).isTrue();
        await().until(() -> b.lookup("app1", key(66)) == KeyLookup.REJECTED);
    }
}

package io.brine.master.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.brine.cluster.ClusterConnection;
import io.brine.cluster.ZkKeyStore;
import io.brine.cluster.ZkKeyStoreOptions;
import io.brine.cluster.ZkMasterKeys;
import io.brine.daemon.config.ClusterConfig;
import io.brine.daemon.testing.LogCapture;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.MasterKeyRotation.Rotated;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster master's view of {@code /master_key} (issue 25): a record of exactly the bound (256 KiB) is read and put in
 * force; one a byte past it is refused before its bytes are fetched and logged escaped (at most once a minute: the
 * master's WarnInterval), and the master keeps the keys it had, then takes the next good record.
 */
class MasterKeyringClusterTest {

    /** ZkMasterKeys.MAX_NODE_BYTES, and its path, as PROTOCOL.md's limits table gives them. */
    private static final int BOUND = 256 * 1024;

    private static final String PATH = "/master_key";
    private static final KeyPair INSTALLED = TestKeys.pair(200);

    @TempDir
    Path pki;

    @Test
    void aRecordAtTheBoundIsReadAndOneBytePastIsRefusedEscapedWhileTheKeysInForceStay() throws Exception {
        Clock clock = Clock.systemUTC();
        try (TestingServer server = new TestingServer();
                CuratorFramework client = ClusterConnection.open(ClusterConfig.of(server.getConnectString()));
                ZkKeyStore cluster = ZkKeyStore.open(
                        client, ZkKeyStoreOptions.of(pki, null, AuditLog.none(), clock), Duration.ofSeconds(30));
                ZkMasterKeys zk = new ZkMasterKeys(client);
                LogCapture logs = LogCapture.of(MasterKeyring.class)) {
            MasterKeyring keyring = MasterKeyring.cluster(zk, INSTALLED, clock);
            assertThat(keyring.current()).isSameAs(INSTALLED);

            Rotated first = rotate(cluster, clock);
            client.setData().forPath(PATH, padded(client.getData().forPath(PATH), BOUND));
            await().until(() -> keyring.reloadIfRotated().isPresent());
            assertThat(keyring.current().getPublic()).as("read at the bound").isEqualTo(first.next());

            Rotated second = rotate(cluster, clock);
            byte[] good = client.getData().forPath(PATH);
            client.setData().forPath(PATH, padded(good, BOUND + 1));
            await().until(() -> {
                keyring.reloadIfRotated();
                return !notUsed(logs).isEmpty();
            });
            assertThat(keyring.current().getPublic())
                    .as("the keys in force stay")
                    .isEqualTo(first.next());
            assertThat(notUsed(logs))
                    .as("escaped, once (a WarnInterval of a minute)")
                    .containsExactly("Cluster master key record not used, the key in force stays: '/master_key holds "
                            + (BOUND + 1) + " bytes, over " + BOUND + "; not used'");

            client.setData().forPath(PATH, good);
            await().until(() -> keyring.reloadIfRotated().isPresent());
            assertThat(keyring.current().getPublic()).isEqualTo(second.next());
        }
    }

    private static Rotated rotate(ZkKeyStore cluster, Clock clock) throws Exception {
        return cluster.rotateMasterKey(INSTALLED, 2048, Duration.ofDays(7), 5, Optional.empty(), "brine-key:t", clock);
    }

    /** The JSON record {@code record} with spaces after it, {@code size} bytes in all (still the same record). */
    private static byte[] padded(byte[] record, int size) {
        byte[] out = Arrays.copyOf(record, size);
        Arrays.fill(out, record.length, size, (byte) ' ');
        return out;
    }

    private static List<String> notUsed(LogCapture logs) {
        return logs.at(Level.WARN).stream()
                .filter(line -> line.contains("record not used"))
                .toList();
    }
}

package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.daemon.config.ClusterConfig;
import io.brine.store.audit.AuditLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code /format}: written by the first master to open a cluster; a master of another format refuses it. */
class ZkFormatTest {

    private static final AtomicInteger ROOTS = new AtomicInteger();
    private static TestingServer server;

    @TempDir
    Path pki;

    private final String root = "/brine/v" + ROOTS.incrementAndGet();

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private CuratorFramework client() throws IOException {
        return ClusterConnection.open(
                ClusterConfig.of(server.getConnectString()).withRoot(root));
    }

    private ZkKeyStore open(CuratorFramework client) throws IOException {
        return ZkKeyStore.open(
                client, ZkKeyStoreOptions.of(pki, null, AuditLog.none(), Clock.systemUTC()), Duration.ofSeconds(30));
    }

    @Test
    void theFirstMasterWritesTheFormatAndTheNextOpensIt() throws Exception {
        try (CuratorFramework client = client()) {
            open(client).close();
            assertThat(new String(client.getData().forPath(ZkRecords.FORMAT), StandardCharsets.US_ASCII))
                    .isEqualTo(Integer.toString(ZkRecords.FORMAT_VERSION));
            open(client).close();
        }
    }

    @Test
    void aClusterOfAnotherFormatIsRefusedAndNothingIsWritten() throws Exception {
        try (CuratorFramework client = client()) {
            client.create()
                    .creatingParentContainersIfNeeded()
                    .forPath(
                            ZkRecords.FORMAT,
                            Integer.toString(ZkRecords.FORMAT_VERSION + 1).getBytes(StandardCharsets.US_ASCII));

            assertThatThrownBy(() -> open(client))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(root + " holds its keys in format '" + (ZkRecords.FORMAT_VERSION + 1)
                            + "', this brine reads and writes format " + ZkRecords.FORMAT_VERSION)
                    .hasMessageContaining("nothing was changed");
            assertThat(client.checkExists().forPath(ZkRecords.KEYS)).isNull();
        }
    }
}

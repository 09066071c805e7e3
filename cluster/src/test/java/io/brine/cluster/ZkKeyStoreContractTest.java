package io.brine.cluster;

import io.brine.daemon.config.ClusterConfig;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreContract;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link KeyStoreContract} on the cluster's store: each test's keys under their own root of one real ZooKeeper
 * server; the other store is another master's, with its own connection.
 */
class ZkKeyStoreContractTest extends KeyStoreContract {

    private static final AtomicInteger ROOTS = new AtomicInteger();
    private static TestingServer server;

    private final List<CuratorFramework> clients = new ArrayList<>();
    private final String root = "/brine/c" + ROOTS.incrementAndGet();

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @Override
    protected KeyStore open(Path pkiDir, AuditLog audit) throws Exception {
        CuratorFramework client = ClusterConnection.open(
                ClusterConfig.of(server.getConnectString()).withRoot(root));
        clients.add(client);
        return ZkKeyStore.open(
                client, ZkKeyStoreOptions.of(pkiDir, null, audit, Clock.systemUTC()), Duration.ofSeconds(30));
    }

    @Override
    protected void closed() {
        clients.forEach(CuratorFramework::close);
    }
}

package io.brine.cluster;

import io.brine.daemon.config.ClusterConfig;
import io.brine.protocol.testing.LoopbackPorts;
import io.brine.store.audit.AuditLog;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Three real ZooKeeper servers in this JVM, fresh for each test ({@code @RegisterExtension}), for tests that stop
 * and start servers; what a test opens on them is closed after it, last opened first, before the servers stop.
 */
final class ThreeServerEnsemble implements BeforeEachCallback, AfterEachCallback {

    private TestingCluster servers;
    private final List<AutoCloseable> open = new ArrayList<>();

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        servers = new TestingCluster(threeServerSpecs());
        servers.start();
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        open.clear();
        servers.close();
    }

    /**
     * Three ZooKeeper servers' specs with nine distinct loopback ports ({@link LoopbackPorts}): curator-test's
     * {@code new TestingCluster(3)} once gave one server the same port for two roles.
     */
    static List<InstanceSpec> threeServerSpecs() {
        int[] ports = LoopbackPorts.distinct(9);
        List<InstanceSpec> specs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            specs.add(new InstanceSpec(null, ports[3 * i], ports[3 * i + 1], ports[3 * i + 2], true, i + 1));
        }
        return specs;
    }

    TestingCluster servers() {
        return servers;
    }

    /** Closes {@code resource} after the test. */
    <T extends AutoCloseable> T closeAfter(T resource) {
        open.add(resource);
        return resource;
    }

    CuratorFramework client(ClusterConfig config) throws Exception {
        return closeAfter(ClusterConnection.open(config));
    }

    /**
     * A master's key store on {@code client}, with its pki directory {@code pki}, whose writes wait up to {@code
     * reconnectGrace} for a lost connection to come back.
     */
    ZkKeyStore store(CuratorFramework client, Path pki, Duration reconnectGrace) throws Exception {
        return closeAfter(ZkKeyStore.open(
                client,
                ZkKeyStoreOptions.of(pki, null, AuditLog.none(), Clock.systemUTC())
                        .withReconnectGrace(reconnectGrace),
                Duration.ofSeconds(30)));
    }
}

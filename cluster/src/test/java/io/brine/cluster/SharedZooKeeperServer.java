package io.brine.cluster;

import io.brine.daemon.config.ClusterConfig;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One real ZooKeeper server for a test class ({@code @RegisterExtension static}), started before its first test and
 * stopped after its last (a start and stop per test cost about half a second), for tests that never stop it; each
 * test takes a root of its own ({@link #freshRoot}), so the tests share the server and nothing on it.
 */
final class SharedZooKeeperServer implements BeforeAllCallback, AfterAllCallback {

    private final AtomicInteger roots = new AtomicInteger();
    private TestingServer server;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        server = new TestingServer();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        server.close();
    }

    /** The server, under a root no other test of the class uses. */
    ClusterConfig freshRoot() {
        return ClusterConfig.of(server.getConnectString()).withRoot("/brine/t" + roots.incrementAndGet());
    }
}

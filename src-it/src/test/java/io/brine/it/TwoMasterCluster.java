package io.brine.it;

import io.brine.daemon.config.ClusterConfig;
import io.brine.daemon.config.MasterConfig;
import io.brine.protocol.testing.LoopbackPorts;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.awaitility.Awaitility;

/**
 * Two real masters, {@link #a} and {@link #b}, in cluster mode on a ZooKeeper started for the test: one server, or
 * three ({@link #servers}) for a test that stops some. Both hold the cluster's one master key pair and publisher root
 * key. Closing stops the masters (with their minions), then ZooKeeper.
 */
final class TwoMasterCluster implements AutoCloseable {

    /** The cluster's one master key pair and publisher root key, installed on both masters. */
    private static final int MASTER_KEY = 250;

    private static final int ROOT_KEY = 249;

    final Fleet a;
    final Fleet b;
    private final AutoCloseable zookeeper;

    private TwoMasterCluster(Fleet a, Fleet b, AutoCloseable zookeeper) {
        this.a = a;
        this.b = b;
        this.zookeeper = zookeeper;
    }

    /** On one ZooKeeper server; {@code customize} is applied to both masters' configuration. */
    static TwoMasterCluster onOneServer(Path dir, UnaryOperator<MasterConfig.Builder> customize) throws Exception {
        TestingServer server = new TestingServer();
        return start(dir, server, server.getConnectString(), customize);
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

    /** On a three-server ensemble, started. */
    static TwoMasterCluster onThreeServers(Path dir) throws Exception {
        TestingCluster ensemble = new TestingCluster(threeServerSpecs());
        try {
            ensemble.start();
        } catch (Exception e) {
            ensemble.close();
            throw e;
        }
        return start(dir, ensemble, ensemble.getConnectString(), config -> config);
    }

    private static TwoMasterCluster start(
            Path dir, AutoCloseable zookeeper, String connect, UnaryOperator<MasterConfig.Builder> customize)
            throws Exception {
        Fleet a = null;
        Fleet b = null;
        try {
            ClusterConfig cluster = ClusterConfig.of(connect)
                    .withAuth(new ClusterConfig.Auth("brine", writePassword(dir.resolve("zk.pass"))));
            a = new Fleet(dir.resolve("a")).seedMasterKeys(MASTER_KEY, ROOT_KEY);
            b = new Fleet(dir.resolve("b")).seedMasterKeys(MASTER_KEY, ROOT_KEY);
            a.startMaster(config -> customize.apply(config.cluster(cluster)));
            b.startMaster(config -> customize.apply(config.cluster(cluster)));
            return new TwoMasterCluster(a, b, zookeeper);
        } catch (Exception | Error e) {
            new TwoMasterCluster(a, b, zookeeper).close();
            throw e;
        }
    }

    /** The masters' ZooKeeper credentials, for a test's own client ({@code authorization("digest", DIGEST)}). */
    static final byte[] DIGEST = "brine:it-secret".getBytes(StandardCharsets.UTF_8);

    /** The cluster's ZooKeeper password (digest auth, which a TestingServer takes as it is), mode 0600. */
    static Path writePassword(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, "it-secret\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    /** The ensemble's connect string, for a test's own client. */
    String connectString() {
        return zookeeper instanceof TestingServer server
                ? server.getConnectString()
                : servers().getConnectString();
    }

    /** The three servers of {@link #onThreeServers}. */
    TestingCluster servers() {
        return (TestingCluster) zookeeper;
    }

    /**
     * Kills the servers in {@code stopped} and waits until no server left serves clients. A leader whose followers
     * die notices its lost quorum only after ZooKeeper's sync limit; until then a master's client may reconnect to
     * it and find the cluster "connected" although no write can commit.
     */
    void loseQuorum(List<InstanceSpec> stopped) throws Exception {
        for (InstanceSpec spec : stopped) {
            if (!servers().killServer(spec)) {
                throw new IllegalStateException("ZooKeeper server " + spec.getServerId() + " was not running");
            }
        }
        List<InstanceSpec> left = servers().getInstances().stream()
                .filter(spec -> !stopped.contains(spec))
                .toList();
        Awaitility.await("the ZooKeeper servers left stop serving").until(() -> {
            for (InstanceSpec spec : left) {
                if (mayServe(spec)) {
                    return false;
                }
            }
            return true;
        });
    }

    /**
     * Whether {@code spec}'s server may still serve clients: false only once it answers ZooKeeper's {@code srvr} command
     * with "not currently serving". A server tearing down its serving state closes open connections, a {@code srvr}
     * among them, without an answer (ci stop 35): that says nothing yet, so the caller asks again.
     */
    private static boolean mayServe(InstanceSpec spec) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), spec.getPort())) {
            socket.setSoTimeout(2_000);
            socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            if (answer.contains("not currently serving")) {
                return false;
            }
            if (answer.isEmpty()) {
                return true;
            }
            if (!answer.contains("Mode:")) {
                throw new IllegalStateException(
                        "unexpected answer to srvr from ZooKeeper server " + spec.getServerId() + ": " + answer);
            }
            return true;
        }
    }

    @Override
    public void close() throws Exception {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        zookeeper.close();
    }
}

package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.daemon.config.MasterConfig;
import io.brine.master.MasterDaemon;
import io.brine.master.MasterMain;
import io.brine.protocol.testing.TestKeys;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Issue 30 item 8: {@code brine-master --check-config} refuses, exit 2, each cluster configuration the master refuses
 * to start with, saying what the start says; with a cluster it connects to the ensemble, for a bounded time.
 */
class CheckConfigClusterIT {

    @TempDir
    Path dir;

    private TestingServer zookeeper;
    private Path etc;

    @BeforeEach
    void setUp() throws Exception {
        zookeeper = new TestingServer();
        etc = Files.createDirectory(dir.resolve("etc"));
        Fleet.seedMasterKey(dir.resolve("pki"), TestKeys.COUNT - 1); // in cluster mode it is installed, not made
    }

    @AfterEach
    void tearDown() throws Exception {
        zookeeper.close();
    }

    private record Run(int exit, String out, String err) {}

    /** {@code brine-master -c etc --check-config}, through the real entry point. */
    private Run checkConfig() {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        System.setOut(new PrintStream(stdout, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        try {
            int exit = new CommandLine(new MasterMain()).execute("-c", etc.toString(), "--check-config");
            return new Run(exit, stdout.toString(StandardCharsets.UTF_8), stderr.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }

    /** Why the master, started on the same config, stops. */
    private String startRefusal() throws Exception {
        MasterConfig config = MasterConfig.loadChecked(etc);
        Throwable[] thrown = new Throwable[1];
        assertThatThrownBy(() -> MasterDaemon.start(config, Clock.systemUTC()).close())
                .satisfies(e -> thrown[0] = e);
        return thrown[0].getMessage();
    }

    private void masterYaml(String cluster) throws Exception {
        Files.writeString(
                etc.resolve("master.yaml"),
                "pki_dir: ../pki\ncachedir: ../cache\ninterface: 127.0.0.1\n"
                        + "ret_port: 0\npublish_port: 0\n"
                        // Caps that fit any file limit here: lowered defaults would add their WARN line to the output.
                        + "max_connections: 1000\n" + cluster);
    }

    private Path passwordFile(String mode) throws Exception {
        Path file = Files.writeString(etc.resolve("zk.password"), "s3cret\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    private String withAuth() {
        return "cluster:\n  connect: " + zookeeper.getConnectString() + "\n  root: /prod\n"
                + "  auth:\n    user: brine\n    password_file: zk.password\n";
    }

    private void assertCheckRefusesAsTheStart(String expected) throws Exception {
        String refusal = startRefusal();
        assertThat(refusal).contains(expected);
        Run run = checkConfig();
        assertThat(run.exit()).as(run.err()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("Master cannot start: " + refusal + System.lineSeparator());
        assertThat(run.out()).doesNotContain("configuration OK");
    }

    @Test
    void aPasswordFileOthersMayReadIsRefusedAsAtStart() throws Exception {
        masterYaml(withAuth());
        passwordFile("rw-r--r--");
        assertCheckRefusesAsTheStart("is open to group or others (rw-r--r--): chmod 600 it");

        passwordFile("rw-------");
        Run fixed = checkConfig();
        assertThat(fixed.exit()).as(fixed.err()).isZero();
        assertThat(fixed.out()).startsWith("configuration OK: ");
    }

    @Test
    void aClusterWithoutAuthOrTheOpenAclConsentIsRefusedAsAtStart() throws Exception {
        masterYaml("cluster:\n  connect: " + zookeeper.getConnectString() + "\n");
        assertCheckRefusesAsTheStart("cluster: no auth: every znode under /brine would be writable");
    }

    @Test
    void aRootOthersMayChangeIsRefusedAsAtStartByAskingTheEnsemble() throws Exception {
        try (CuratorFramework stranger =
                CuratorFrameworkFactory.newClient(zookeeper.getConnectString(), new RetryOneTime(100))) {
            stranger.start();
            stranger.blockUntilConnected();
            stranger.create()
                    .withACL(List.of(ZooDefs.Ids.OPEN_ACL_UNSAFE.get(0)))
                    .forPath("/prod", new byte[0]);
        }
        masterYaml(withAuth());
        passwordFile("rw-------");
        assertCheckRefusesAsTheStart("/prod must be readable and changeable by brine alone: /prod (world:anyone");
    }

    @Test
    void aClusterOfAnotherLayoutFormatIsRefusedAsAtStartAndLeftAsItWas() throws Exception {
        masterYaml("cluster:\n  connect: " + zookeeper.getConnectString() + "\n  root: /prod\n"
                + "  insecure_open_acl: true\n");
        Run fresh = checkConfig();
        assertThat(fresh.exit()).as(fresh.err()).isZero();
        try (CuratorFramework admin =
                CuratorFrameworkFactory.newClient(zookeeper.getConnectString(), new RetryOneTime(100))) {
            admin.start();
            admin.blockUntilConnected();
            assertThat(admin.checkExists().forPath("/prod/format"))
                    .as("the check writes no format")
                    .isNull();
            admin.create().creatingParentsIfNeeded().forPath("/prod/format", "2".getBytes(StandardCharsets.US_ASCII));
            assertCheckRefusesAsTheStart(
                    "cluster: /prod holds its keys in format '2', this brine reads and writes format 1");
            assertThat(admin.getData().forPath("/prod/format"))
                    .asString(StandardCharsets.US_ASCII)
                    .isEqualTo("2");
        }
    }

    @Test
    void anEnsembleNobodyAnswersOnIsRefusedWithinTheCheckBound() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort(); // free again once closed: nothing listens there
        }
        masterYaml("cluster:\n  connect: 127.0.0.1:" + closed + "\n  insecure_open_acl: true\n");
        Run run = checkConfig();
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err())
                .isEqualTo("Master cannot start: cannot reach the ZooKeeper ensemble 127.0.0.1:" + closed
                        + " within 5 s (no server reachable, or the ensemble has no quorum)" + System.lineSeparator());
    }
}

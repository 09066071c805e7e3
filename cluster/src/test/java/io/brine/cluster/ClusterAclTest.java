package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.daemon.config.ClusterConfig;
import io.brine.daemon.config.MasterConfig;
import io.brine.store.audit.AuditLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Whoever can write under the cluster's root can plant keys: a master opens only a root its user alone can change. */
class ClusterAclTest {

    private static final AtomicInteger ROOTS = new AtomicInteger();
    private static TestingServer server;

    @TempDir
    Path dir;

    private final String root = "/acl" + ROOTS.incrementAndGet();

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private ClusterConfig withAuth() throws IOException {
        Path password = Files.writeString(dir.resolve("zk.pass"), "s3cret\n");
        Files.setPosixFilePermissions(password, PosixFilePermissions.fromString("rw-------"));
        return ClusterConfig.of(server.getConnectString())
                .withRoot(root)
                .withAuth(new ClusterConfig.Auth("brine", password));
    }

    private ClusterStores open(ClusterConfig cluster) throws Exception {
        return ClusterStores.open(
                MasterConfig.builder(dir).cluster(cluster).build(), AuditLog.none(), Clock.systemUTC(), false);
    }

    /** A client with no credentials at all, rooted at the ensemble's top. */
    private static CuratorFramework stranger() throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
        client.start();
        client.blockUntilConnected();
        return client;
    }

    @Test
    void withoutAuthAMasterRefusesToStartUnlessTheOpenAclIsSaidAndWritesNothing() throws Exception {
        ClusterConfig open = ClusterConfig.of(server.getConnectString()).withRoot(root);

        assertThatThrownBy(() -> open(open))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("no auth")
                .hasMessageContaining("could plant accepted keys")
                .hasMessageContaining("cluster.insecure_open_acl: true");
        try (CuratorFramework stranger = stranger()) {
            assertThat(stranger.checkExists().forPath(root)).isNull();
        }

        try (ClusterStores stores = open(open.withInsecureOpenAcl())) {
            assertThat(stores.keyStore().acceptedIds()).isEmpty();
        }
    }

    @Test
    void withAuthTheClustersZnodesAreTheUsersAlone() throws Exception {
        try (ClusterStores stores = open(withAuth());
                CuratorFramework stranger = stranger()) {
            assertThat(stores.client().getACL().forPath("/")).singleElement().satisfies(acl -> {
                assertThat(acl.getId().getScheme()).isEqualTo("digest");
                assertThat(acl.getId().getId()).startsWith("brine:");
                assertThat(acl.getPerms()).isEqualTo(ZooDefs.Perms.ALL);
            });
            assertThat(stores.client().getACL().forPath("/keys"))
                    .extracting(acl -> acl.getId().getScheme())
                    .containsOnly("digest");
            assertThatThrownBy(() -> stranger.getData().forPath(root + "/keys"))
                    .isInstanceOf(KeeperException.NoAuthException.class);
            assertThatThrownBy(() -> stranger.create().forPath(root + "/keys/evil", new byte[0]))
                    .isInstanceOf(KeeperException.NoAuthException.class);
        }
        // Opened again: the root it made passes its own check.
        try (ClusterStores again = open(withAuth())) {
            assertThat(again.health().writable()).isTrue();
        }
    }

    @Test
    void aRootMadeWithoutAuthIsRefusedSayingHowToFixIt() throws Exception {
        try (ClusterStores first =
                open(ClusterConfig.of(server.getConnectString()).withRoot(root).withInsecureOpenAcl())) {
            assertThat(first.keyStore().acceptedIds()).isEmpty();
        }

        assertThatThrownBy(() -> open(withAuth()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(
                        root + " must be readable and changeable by brine alone: " + root + " (world:anyone cdrwa)")
                .hasMessageContaining("setAcl -R " + root + " auth::cdrwa");
    }

    private static ACL digest(String userAndPassword, int perms) throws Exception {
        return new ACL(perms, new Id("digest", DigestAuthenticationProvider.generateDigest(userAndPassword)));
    }

    private void rootWith(ACL... acls) throws Exception {
        try (CuratorFramework stranger = stranger()) {
            stranger.create().withACL(List.of(acls)).forPath(root, new byte[0]);
        }
    }

    @Test
    void aRootAlsoOpenToTheSameUserWithAnotherPasswordIsRefused() throws Exception {
        rootWith(digest("brine:s3cret", ZooDefs.Perms.ALL), digest("brine:guessed", ZooDefs.Perms.ALL));

        assertThatThrownBy(() -> open(withAuth()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(root + " (digest:brine:<hash> cdrwa)")
                .hasMessageContaining("setAcl -R " + root)
                .hasMessageNotContaining(DigestAuthenticationProvider.generateDigest("brine:guessed"));
    }

    @Test
    void aRootOthersMayReadIsRefused() throws Exception {
        rootWith(digest("brine:s3cret", ZooDefs.Perms.ALL), new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE));

        assertThatThrownBy(() -> open(withAuth()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("must be readable and changeable by brine alone: " + root + " (world:anyone r)");
    }

    @Test
    void aRootOfAnotherUserOrPasswordIsRefusedSayingHowToFixIt() throws Exception {
        rootWith(digest("brine:another", ZooDefs.Perms.ALL));

        assertThatThrownBy(() -> open(withAuth()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(root + " cannot be read by brine with the password in cluster.auth's"
                        + " password_file: it was made by another user or with another password")
                .hasMessageContaining("setAcl -R " + root + " digest:brine:DIGEST:cdrwa");
    }
}

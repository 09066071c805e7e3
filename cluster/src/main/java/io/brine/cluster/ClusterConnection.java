package io.brine.cluster;

import io.brine.daemon.config.ClusterConfig;
import io.brine.daemon.files.TrustedPath;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

/**
 * Opens the Curator client of one master (or one brine-key run) on the cluster's ensemble, rooted at the
 * configured root (Curator's namespace), with ZooKeeper's plain NIO client: no Netty on the class path is needed
 * ({@link PlainClientConfig}), so brine-key runs it too.
 */
public final class ClusterConnection {

    private ClusterConnection() {}

    /**
     * Starts a client and waits until it is connected.
     *
     * @throws ClusterUnavailableException when the ensemble cannot be reached within the config's
     *         {@code connect_timeout}
     * @throws IOException when the password file cannot be read
     */
    public static CuratorFramework open(ClusterConfig config) throws IOException {
        return open(config, config.connectTimeout());
    }

    /** As {@link #open(ClusterConfig)}, waiting at most {@code within} for the first connection. */
    public static CuratorFramework open(ClusterConfig config, Duration within) throws IOException {
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(config.connect())
                .namespace(config.root().substring(1))
                .sessionTimeoutMs((int) config.sessionTimeout().toMillis())
                .connectionTimeoutMs((int) Math.min(config.sessionTimeout().toMillis(), 10_000))
                .retryPolicy(new ExponentialBackoffRetry(100, 6, 2_000))
                // The servers in master.yaml are the ones used: Curator would otherwise switch to the addresses the
                // ensemble advertises in its own config, which the masters may not reach (NAT, internal names).
                .ensembleTracker(false)
                .zkClientConfig(new PlainClientConfig());
        if (config.auth().isPresent()) {
            ClusterConfig.Auth auth = config.auth().get();
            String password = readPassword(auth.passwordFile());
            builder.authorization("digest", (auth.user() + ":" + password).getBytes(StandardCharsets.UTF_8))
                    .aclProvider(new CreatorOnly());
        }
        CuratorFramework client = builder.build();
        client.start();
        try {
            if (!client.blockUntilConnected((int) within.toMillis(), TimeUnit.MILLISECONDS)) {
                client.close();
                throw new ClusterUnavailableException("cannot reach the ZooKeeper ensemble " + config.connect()
                        + " within " + within.toSeconds() + " s (no server reachable, or the ensemble has no quorum)");
            }
        } catch (InterruptedException e) {
            client.close();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while connecting to " + config.connect(), e);
        }
        return client;
    }

    /** With auth, every znode brine creates is readable and writable by the authenticated user alone. */
    private static final class CreatorOnly implements ACLProvider {
        @Override
        public List<ACL> getDefaultAcl() {
            return ZooDefs.Ids.CREATOR_ALL_ACL;
        }

        @Override
        public List<ACL> getAclForPath(String path) {
            return ZooDefs.Ids.CREATOR_ALL_ACL;
        }
    }

    /**
     * The ZooKeeper password, from a file only root or the master's user can write and nobody else can read (it
     * opens every key the cluster holds): otherwise refused, naming the file and the rule.
     */
    static String readPassword(Path file) throws IOException {
        Optional<String> untrusted = TrustedPath.forThisProcess().problem(file);
        if (untrusted.isPresent()) {
            throw new IOException("cluster.auth password_file not trusted: " + untrusted.get());
        }
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(file);
        if (mode.stream()
                .anyMatch(p -> p.name().startsWith("GROUP_") || p.name().startsWith("OTHERS_"))) {
            throw new IOException("cluster.auth password_file " + file + " is open to group or others ("
                    + PosixFilePermissions.toString(mode) + "): chmod 600 it");
        }
        String password = Files.readString(file, StandardCharsets.UTF_8).strip();
        if (password.isEmpty()) {
            throw new IOException(file + " is empty: cluster.auth needs a password");
        }
        return password;
    }
}

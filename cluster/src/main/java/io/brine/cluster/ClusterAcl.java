package io.brine.cluster;

import io.brine.daemon.config.ClusterConfig;
import java.io.IOException;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

/**
 * Who may read and change the cluster's znodes, checked when a master (or brine-key) opens the cluster: whoever can
 * write under the root can plant accepted keys. Without {@code cluster.auth} every znode is open to anyone who
 * reaches the ensemble, so that takes the admin's explicit {@code insecure_open_acl: true}; with it, the root and the
 * znodes right under it (deeper ones are made by the masters, with {@link ClusterConnection}'s creator-only ACL)
 * must be readable and changeable by that user with that password alone, and a root made without auth, or by
 * another user or password, is refused, saying how to fix it.
 */
final class ClusterAcl {

    private static final int NEEDED = Perms.READ | Perms.WRITE | Perms.CREATE | Perms.DELETE;

    private ClusterAcl() {}

    /** Before connecting: auth, or the admin's consent to an open ACL. */
    static void requireAuthOrConsent(ClusterConfig config) throws IOException {
        if (config.auth().isEmpty() && !config.insecureOpenAcl()) {
            throw new IOException("cluster: no auth: every znode under " + config.root() + " would be writable by"
                    + " anyone who reaches the ZooKeeper ensemble " + config.connect() + ", who could plant accepted"
                    + " keys. Set cluster.auth (user, password_file), or say cluster.insecure_open_acl: true if only"
                    + " the masters can reach the ensemble");
        }
    }

    /**
     * With auth: the root and the znodes right under it (where brine keeps everything) may be read and changed by
     * the configured user alone, with its password (the whole digest id is compared, not the user's name); a
     * znode others may read or change, or this user may not, is refused with the fix.
     */
    static void requireCreatorOnly(CuratorFramework client, ClusterConfig config) throws IOException {
        ClusterConfig.Auth auth = config.auth().orElseThrow();
        String user = auth.user();
        String ours;
        try {
            ours = DigestAuthenticationProvider.generateDigest(
                    user + ":" + ClusterConnection.readPassword(auth.passwordFile()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is missing from this JDK", e);
        }
        String fix = " Fix: in zkCli.sh, authenticated as whoever may change it (addauth digest USER:PASSWORD),"
                + " setAcl -R " + config.root() + " digest:" + user + ":DIGEST:cdrwa with DIGEST from the password"
                + " in cluster.auth's password_file (or use a new cluster.root and brine-key cluster import)";
        try {
            List<String> open = new ArrayList<>();
            List<String> paths = new ArrayList<>(List.of("/"));
            client.getChildren().forPath("/").forEach(child -> paths.add("/" + child));
            for (String path : paths) {
                int granted = 0;
                for (ACL acl : client.getACL().forPath(path)) {
                    boolean isOurs = acl.getId().getScheme().equals("digest")
                            && acl.getId().getId().equals(ours);
                    if (isOurs) {
                        granted |= acl.getPerms();
                    } else if (acl.getPerms() != 0) {
                        if (acl.getId().getScheme().equals("world")) {
                            granted |= acl.getPerms();
                        }
                        open.add(shown(config, path) + " (" + describe(acl) + " " + letters(acl.getPerms()) + ")");
                    }
                }
                if ((granted & NEEDED) != NEEDED) {
                    open.add(shown(config, path) + " (" + user + " with this password has only "
                            + (granted == 0 ? "nothing" : letters(granted)) + ")");
                }
            }
            if (!open.isEmpty()) {
                throw new IOException("cluster: " + config.root() + " must be readable and changeable by " + user
                        + " alone: "
                        + String.join(", ", open.subList(0, Math.min(open.size(), 5)))
                        + (open.size() > 5 ? " and " + (open.size() - 5) + " more" : "")
                        + "; anyone else who may change it could plant keys. If it was made without auth: in zkCli.sh,"
                        + " addauth digest " + user + ":PASSWORD then setAcl -R " + config.root() + " auth::cdrwa."
                        + fix);
            }
        } catch (IOException e) {
            throw e;
        } catch (KeeperException.NoAuthException e) {
            throw new IOException(
                    "cluster: " + config.root() + " cannot be read by " + user + " with the password"
                            + " in cluster.auth's password_file: it was made by another user or with another password."
                            + fix,
                    e);
        } catch (KeeperException e) {
            throw new IOException("cluster: cannot read the ACL of " + config.root() + ": " + e.getMessage(), e);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("cluster: cannot read the ACL of " + config.root() + ": " + e, e);
        }
    }

    private static String shown(ClusterConfig config, String path) {
        return config.root() + (path.equals("/") ? "" : path);
    }

    /** A digest id's hash is derived from a password: shown as its user alone. */
    private static String describe(ACL acl) {
        String id = acl.getId().getId();
        return acl.getId().getScheme().equals("digest") && id.contains(":")
                ? "digest:" + id.substring(0, id.indexOf(':')) + ":<hash>"
                : acl.getId().getScheme() + ":" + id;
    }

    private static String letters(int perms) {
        StringBuilder text = new StringBuilder();
        text.append((perms & Perms.CREATE) != 0 ? "c" : "")
                .append((perms & Perms.DELETE) != 0 ? "d" : "")
                .append((perms & Perms.READ) != 0 ? "r" : "")
                .append((perms & Perms.WRITE) != 0 ? "w" : "")
                .append((perms & Perms.ADMIN) != 0 ? "a" : "");
        return text.toString();
    }
}

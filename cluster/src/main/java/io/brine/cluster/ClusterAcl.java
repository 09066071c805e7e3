package io.brine.cluster;

import io.brine.daemon.config.ClusterConfig;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.data.ACL;

/**
 * Who may change the cluster's znodes, checked when a master (or brine-key) opens the cluster: whoever can write
 * under the root can plant accepted keys. Without {@code cluster.auth} every znode is open to anyone who reaches the
 * ensemble, so that takes the admin's explicit {@code insecure_open_acl: true}; with it, the root and its children
 * must be changeable by that user alone (they are when a master with auth made them, {@link ClusterConnection}'s
 * creator-only ACL), and a root made without auth is refused, saying how to fix it.
 */
final class ClusterAcl {

    private static final int CHANGES = Perms.WRITE | Perms.CREATE | Perms.DELETE | Perms.ADMIN;

    private ClusterAcl() {
    }

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
     * With auth: the root and the znodes right under it (where brine keeps everything) may be changed by the
     * configured user alone; a world-writable or foreign-writable one is refused with the fix.
     */
    static void requireCreatorOnly(CuratorFramework client, ClusterConfig config) throws IOException {
        String user = config.auth().orElseThrow().user();
        try {
            List<String> open = new ArrayList<>();
            List<String> paths = new ArrayList<>(List.of("/"));
            client.getChildren().forPath("/").forEach(child -> paths.add("/" + child));
            for (String path : paths) {
                for (ACL acl : client.getACL().forPath(path)) {
                    boolean ours = acl.getId().getScheme().equals("digest")
                            && acl.getId().getId().startsWith(user + ":");
                    if ((acl.getPerms() & CHANGES) != 0 && !ours) {
                        open.add(config.root() + (path.equals("/") ? "" : path) + " (" + acl.getId().getScheme()
                                + ":" + acl.getId().getId() + " " + letters(acl.getPerms()) + ")");
                    }
                }
            }
            if (!open.isEmpty()) {
                throw new IOException("cluster: " + config.root() + " may be changed by others than " + user + ": "
                        + String.join(", ", open.subList(0, Math.min(open.size(), 5)))
                        + (open.size() > 5 ? " and " + (open.size() - 5) + " more" : "")
                        + "; it was made without auth, and anyone who reaches the ensemble could plant keys. Fix:"
                        + " in zkCli.sh, addauth digest " + user + ":PASSWORD then setAcl -R " + config.root()
                        + " auth::cdrwa (or use a new cluster.root and brine-key cluster import)");
            }
        } catch (IOException e) {
            throw e;
        } catch (KeeperException e) {
            throw new IOException("cluster: cannot read the ACL of " + config.root() + ": " + e.getMessage(), e);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("cluster: cannot read the ACL of " + config.root() + ": " + e, e);
        }
    }

    private static String letters(int perms) {
        StringBuilder text = new StringBuilder();
        text.append((perms & Perms.CREATE) != 0 ? "c" : "").append((perms & Perms.DELETE) != 0 ? "d" : "")
                .append((perms & Perms.READ) != 0 ? "r" : "").append((perms & Perms.WRITE) != 0 ? "w" : "")
                .append((perms & Perms.ADMIN) != 0 ? "a" : "");
        return text.toString();
    }
}

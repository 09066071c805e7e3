package io.brine.cluster;

import java.io.IOException;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * A znode the masters replace with a versioned write, read back first: of masters writing at once one wins and the
 * others take what it wrote (the publish key generation, the ticket keys).
 */
final class ZkVersionedNode {

    private static final int MAX_ATTEMPTS = 50;

    /** What the znode holds: the value to take instead of writing, or empty to write over it. */
    @FunctionalInterface
    interface Stored<T> {
        Optional<T> instead(byte[] data) throws IOException;
    }

    private ZkVersionedNode() {}

    /**
     * Writes {@code candidate}, {@code encoded} (asked once, only if written), at {@code path} (made when missing)
     * unless what it holds is to be taken {@code instead}; {@code candidate} when this write wins.
     *
     * @param what the subject of the failure message
     */
    static <T> T replace(
            CuratorFramework client, String path, String what, Stored<T> stored, T candidate, Supplier<byte[]> encoded)
            throws IOException {
        byte[] bytes = null;
        try {
            for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
                Stat stat = new Stat();
                byte[] data;
                try {
                    data = client.getData().storingStatIn(stat).forPath(path);
                } catch (KeeperException.NoNodeException e) {
                    data = null;
                }
                if (data != null) {
                    Optional<T> instead = stored.instead(data);
                    if (instead.isPresent()) {
                        return instead.get();
                    }
                }
                if (bytes == null) {
                    bytes = encoded.get();
                }
                try {
                    if (data == null) {
                        client.create().forPath(path, bytes);
                    } else {
                        client.setData().withVersion(stat.getVersion()).forPath(path, bytes);
                    }
                    return candidate;
                } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException lost) {
                    // another master wrote first: read what it wrote
                }
            }
            throw new IOException("lost " + MAX_ATTEMPTS + " races for " + what);
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException(what + " cannot be read or written: " + e, e);
        }
    }
}

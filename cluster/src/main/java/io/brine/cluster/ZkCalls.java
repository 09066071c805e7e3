package io.brine.cluster;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * How {@link ZkPublications} and {@link ZkJobIndex} call Curator: a checked failure becomes an {@link IOException}
 * naming what could not be read or written, and a sweep removes the children of one parent created before a cutoff.
 */
final class ZkCalls {

    @FunctionalInterface
    interface Call<T> {
        T run() throws Exception;
    }

    private final CuratorFramework client;
    private final String what;
    private final boolean failFast;

    private ZkCalls(CuratorFramework client, String what, boolean failFast) {
        this.client = client;
        this.what = what;
        this.failFast = failFast;
    }

    /** Calls left to Curator's own retries. @param what the subject of the failure message */
    static ZkCalls retrying(CuratorFramework client, String what) {
        return new ZkCalls(client, what, false);
    }

    /**
     * Calls that fail within 2 s without a connection. Without one (no quorum, a partition) Curator would retry for
     * a minute while a publication waits: a job not shared is logged by the caller and the master goes on from what
     * it has.
     */
    static ZkCalls failingFast(CuratorFramework client, String what) {
        return new ZkCalls(client, what, true);
    }

    <T> T call(Call<T> call) throws IOException {
        try {
            if (failFast
                    && !client.getZookeeperClient().isConnected()
                    && !client.blockUntilConnected(2, TimeUnit.SECONDS)) {
                throw new IOException("not connected to ZooKeeper (no server reachable or no quorum)");
            }
            return call.run();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException(what + " cannot be read or written: " + e, e);
        }
    }

    /** Removes each {@code parent/child} (with its children) created before {@code cutoffMillis}; how many. */
    int sweep(String parent, List<String> children, long cutoffMillis) throws IOException {
        int removed = 0;
        for (String child : children) {
            String path = parent + "/" + child;
            Stat stat = call(() -> client.checkExists().forPath(path));
            if (stat != null && stat.getCtime() < cutoffMillis) {
                call(() -> {
                    try {
                        client.delete().deletingChildrenIfNeeded().forPath(path);
                    } catch (KeeperException.NoNodeException e) {
                        // another master swept it
                    }
                    return null;
                });
                removed++;
            }
        }
        return removed;
    }
}

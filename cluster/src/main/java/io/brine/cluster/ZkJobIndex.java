package io.brine.cluster;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;

/**
 * Job records and small returns shared by the cluster's masters, so {@code brine jobs show} answers the same on
 * each: {@code /jobs/<jid>} holds the job record, {@code /jobs/<jid>/<minion>} the minion's return when it is at
 * most {@link #MAX_RETURN_BYTES}, else a stub naming the master whose job cache holds it in full. ZooKeeper keeps its
 * whole tree in memory on every server and refuses znodes over 1 MiB, so it holds what is small and recent:
 * records and returns older than {@code keep_jobs_seconds} are removed by whichever master sweeps first.
 * The values are opaque JSON bytes here; the master's job cache makes and reads them.
 */
public final class ZkJobIndex {

    /** Returns up to this size are copied into ZooKeeper; larger ones stay on the master that received them. */
    public static final int MAX_RETURN_BYTES = 16 * 1024;
    /** A job record (its load included) up to this size is shared; a larger one is shared without its load. */
    public static final int MAX_JOB_BYTES = 64 * 1024;

    static final String JOBS = "/jobs";

    private final CuratorFramework client;
    private final Clock clock;
    private final ZkCalls calls;

    public ZkJobIndex(CuratorFramework client, Clock clock) {
        this.client = client;
        this.clock = clock;
        this.calls = ZkCalls.failingFast(client, "the cluster's job index");
    }

    private static String jobPath(String jid) {
        return JOBS + "/" + jid;
    }

    /** Records a job (before it is published, so a return through any master finds it). */
    public void putJob(String jid, byte[] json) throws IOException {
        if (json.length > MAX_JOB_BYTES) {
            throw new IllegalArgumentException("job record over " + MAX_JOB_BYTES + " bytes");
        }
        calls.call(() -> {
            try {
                client.create().creatingParentContainersIfNeeded().forPath(jobPath(jid), json);
            } catch (KeeperException.NodeExistsException e) {
                client.setData().forPath(jobPath(jid), json);
            }
            return null;
        });
    }

    /**
     * As {@link #putJob} for a new jid, without waiting for ZooKeeper (a publisher is waiting, and without quorum
     * Curator would retry for a minute): {@code failed} hears why it was not written, on Curator's thread.
     */
    public void putJobInBackground(String jid, byte[] json, Consumer<String> failed) throws IOException {
        if (json.length > MAX_JOB_BYTES) {
            throw new IllegalArgumentException("job record over " + MAX_JOB_BYTES + " bytes");
        }
        try {
            // Not through calls: queued at once, it waits for no connection.
            client.create()
                    .creatingParentContainersIfNeeded()
                    .inBackground((c, event) -> {
                        KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                        if (code == KeeperException.Code.NODEEXISTS) {
                            // Made meanwhile as the parent of a return: the record goes in it, as putJob does.
                            c.setData()
                                    .inBackground((c2, set) -> {
                                        if (set.getResultCode() != KeeperException.Code.OK.intValue()) {
                                            failed.accept(KeeperException.Code.get(set.getResultCode())
                                                    .toString());
                                        }
                                    })
                                    .forPath(jobPath(jid), json);
                        } else if (code != KeeperException.Code.OK) {
                            failed.accept(code.toString());
                        }
                    })
                    .forPath(jobPath(jid), json);
        } catch (Exception e) {
            throw new IOException("the cluster's job index cannot be written: " + e, e);
        }
    }

    /** Records a minion's return (or its stub); the first one recorded for the minion stays. */
    public void putReturn(String jid, String minion, byte[] json) throws IOException {
        if (json.length > MAX_RETURN_BYTES) {
            throw new IllegalArgumentException("return over " + MAX_RETURN_BYTES + " bytes: store a stub");
        }
        calls.call(() -> {
            try {
                client.create().creatingParentContainersIfNeeded().forPath(jobPath(jid) + "/" + minion, json);
            } catch (KeeperException.NodeExistsException e) {
                // a resent return: the first stays
            }
            return null;
        });
    }

    /**
     * As {@link #putReturn}, without waiting for ZooKeeper: many returns are in flight at once (ZooKeeper pipelines
     * them). {@code done} runs on Curator's thread once it is written (or was there already), with null, or with
     * what failed.
     */
    public void putReturnAsync(String jid, String minion, byte[] json, Consumer<Exception> done) throws IOException {
        if (json.length > MAX_RETURN_BYTES) {
            throw new IllegalArgumentException("return over " + MAX_RETURN_BYTES + " bytes: store a stub");
        }
        calls.call(() -> client.create()
                .creatingParentContainersIfNeeded()
                .inBackground((c, event) -> {
                    KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                    done.accept(
                            code == KeeperException.Code.OK || code == KeeperException.Code.NODEEXISTS
                                    ? null
                                    : KeeperException.create(code, event.getPath()));
                })
                .forPath(jobPath(jid) + "/" + minion, json));
    }

    public Optional<byte[]> job(String jid) throws IOException {
        return calls.call(() -> {
            try {
                return Optional.of(client.getData().forPath(jobPath(jid)));
            } catch (KeeperException.NoNodeException e) {
                return Optional.empty();
            }
        });
    }

    /** The returns of a job by minion id, in id order. */
    public Map<String, byte[]> returns(String jid) throws IOException {
        return calls.call(() -> {
            Map<String, byte[]> returns = new LinkedHashMap<>();
            List<String> minions;
            try {
                minions = new ArrayList<>(client.getChildren().forPath(jobPath(jid)));
            } catch (KeeperException.NoNodeException e) {
                return returns;
            }
            minions.sort(null);
            for (String minion : minions) {
                try {
                    returns.put(minion, client.getData().forPath(jobPath(jid) + "/" + minion));
                } catch (KeeperException.NoNodeException e) {
                    // swept meanwhile
                }
            }
            return returns;
        });
    }

    /**
     * Calls {@code heard} (on Curator's thread) with each return of {@code jid} recorded from now on, and those
     * already there, by minion id, until the returned handle is closed: how the master a job was published
     * through hears the returns other masters received.
     */
    public AutoCloseable watchReturns(String jid, BiConsumer<String, byte[]> heard) {
        String parent = jobPath(jid);
        CuratorCache cache = CuratorCache.build(client, parent);
        cache.listenable()
                .addListener(CuratorCacheListener.builder()
                        .forCreates(node -> {
                            if (node.getPath().startsWith(parent + "/") && node.getData() != null) {
                                heard.accept(node.getPath().substring(parent.length() + 1), node.getData());
                            }
                        })
                        .build());
        cache.start();
        return cache::close;
    }

    /** The jids recorded, in jid order (jids sort by time). */
    public List<String> jids() throws IOException {
        return calls.call(() -> {
            try {
                List<String> jids = new ArrayList<>(client.getChildren().forPath(JOBS));
                jids.sort(null);
                return jids;
            } catch (KeeperException.NoNodeException e) {
                return List.of();
            }
        });
    }

    /** Removes the jobs recorded more than {@code keep} ago, with their returns. */
    public int sweep(Duration keep) throws IOException {
        long cutoff = clock.millis() - keep.toMillis();
        return calls.sweep(JOBS, jids(), cutoff);
    }
}

package io.brine.cluster;

import io.brine.store.policy.SpentRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spent grants or tokens shared by the cluster's masters: {@code /spent/<name>/<digest>} holding the epoch second it
 * expires. Spending is one create, so of two masters spending the same grant at once exactly one wins; an expired
 * record is taken over with a version check. Records past their validity window are pruned ({@link #prune}), by the
 * master that spends something at least {@link #PRUNE_INTERVAL} after the last prune, in the background.
 */
public final class ZkSpentRecord implements SpentRecord {

    private static final Logger log = LoggerFactory.getLogger(ZkSpentRecord.class);
    private static final Pattern KEY = Pattern.compile("[0-9a-f]{16,128}");

    private final CuratorFramework client;
    private final String parent;
    private final Clock clock;
    private final AtomicLong nextPrune;
    private final AtomicBoolean pruning = new AtomicBoolean();

    /** How often (on the injected clock) a spend through this master starts pruning expired records. */
    public static final Duration PRUNE_INTERVAL = Duration.ofMinutes(10);

    /** The record {@code name} ({@code spent_grants}, {@code spent_tokens}); creates its znode if missing. */
    public static ZkSpentRecord open(CuratorFramework client, String name, Clock clock) throws IOException {
        if (!name.matches("[a-z_]{1,32}")) {
            throw new IllegalArgumentException("not a record name: " + name);
        }
        String parent = ZkRecords.SPENT + "/" + name;
        try {
            client.create().creatingParentContainersIfNeeded().forPath(parent, new byte[0]);
        } catch (KeeperException.NodeExistsException e) {
            // made by another master
        } catch (Exception e) {
            throw new IOException("cannot create " + parent + " in the cluster: " + e.getMessage(), e);
        }
        return new ZkSpentRecord(client, parent, clock);
    }

    private ZkSpentRecord(CuratorFramework client, String parent, Clock clock) {
        this.client = client;
        this.parent = parent;
        this.clock = clock;
        this.nextPrune = new AtomicLong(now() + PRUNE_INTERVAL.toSeconds());
    }

    @Override
    public boolean isSpent(String key) throws IOException {
        requireKey(key);
        requireConnected();
        Stat stat = new Stat();
        try {
            return expires(client.getData().storingStatIn(stat).forPath(path(key))) > now();
        } catch (KeeperException.NoNodeException e) {
            return false;
        } catch (Exception e) {
            throw io(e);
        }
    }

    @Override
    public boolean spend(String key, Instant expires) throws IOException {
        requireKey(key);
        requireConnected();
        byte[] data = Long.toString(expires.getEpochSecond()).getBytes(StandardCharsets.US_ASCII);
        try {
            client.create().forPath(path(key), data);
            pruneInBackgroundIfDue();
            return true;
        } catch (KeeperException.NodeExistsException e) {
            Stat stat = new Stat();
            try {
                if (expires(client.getData().storingStatIn(stat).forPath(path(key))) > now()) {
                    return false;
                }
                client.setData().withVersion(stat.getVersion()).forPath(path(key), data);
                return true;
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException lost) {
                return false; // another master took it over or gave it back meanwhile: refuse, never double-spend
            } catch (Exception other) {
                throw io(other);
            }
        } catch (Exception e) {
            throw io(e);
        }
    }

    @Override
    public void unspend(String key) {
        try {
            client.delete().forPath(path(key));
        } catch (KeeperException.NoNodeException e) {
            // not spent
        } catch (Exception e) {
            log.warn(
                    "Cannot record in the cluster that {} was not used after all: {}; it stays spent",
                    key,
                    e.getMessage());
        }
    }

    /**
     * Removes the records whose validity window has passed: a grant or token that expired is refused for its
     * expiry, so its record proves nothing any more. Each delete checks the version read, so a record another
     * master re-spent meanwhile stays; a damaged record stays too (it counts as spent forever: fail closed).
     *
     * @return how many records were removed
     */
    public int prune() throws IOException {
        List<String> children;
        try {
            children = client.getChildren().forPath(parent);
        } catch (Exception e) {
            throw io(e);
        }
        long now = now();
        int removed = 0;
        for (String child : children) {
            Stat stat = new Stat();
            try {
                if (expires(client.getData().storingStatIn(stat).forPath(path(child))) > now) {
                    continue;
                }
                client.delete().withVersion(stat.getVersion()).forPath(path(child));
                removed++;
            } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
                // gone, or re-spent by another master meanwhile: not ours to remove
            } catch (Exception e) {
                throw io(e);
            }
        }
        return removed;
    }

    private void pruneInBackgroundIfDue() {
        long now = now();
        long due = nextPrune.get();
        if (now < due
                || !nextPrune.compareAndSet(due, now + PRUNE_INTERVAL.toSeconds())
                || !pruning.compareAndSet(false, true)) {
            return;
        }
        Thread thread = new Thread(
                () -> {
                    try {
                        int removed = prune();
                        log.debug("{}: {} expired records pruned", parent, removed);
                    } catch (IOException | RuntimeException e) {
                        log.warn("Cannot prune the expired records of {} in the cluster: {}", parent, e.getMessage());
                    } finally {
                        pruning.set(false);
                    }
                },
                "brine-zk-prune");
        thread.setDaemon(true);
        thread.start();
    }

    /** Without a connection Curator would retry for a minute while an auth worker waits: fail (closed) at once. */
    private void requireConnected() throws IOException {
        try {
            if (!client.getZookeeperClient().isConnected() && !client.blockUntilConnected(1, TimeUnit.SECONDS)) {
                throw new IOException("not connected to ZooKeeper (no server reachable or no quorum)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private String path(String key) {
        return parent + "/" + key;
    }

    private long now() {
        return clock.instant().getEpochSecond();
    }

    private static long expires(byte[] data) {
        try {
            return Long.parseLong(new String(data, StandardCharsets.US_ASCII).strip());
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE; // damaged: stays spent, fail closed
        }
    }

    private static void requireKey(String key) {
        if (!KEY.matcher(key).matches()) {
            throw new IllegalArgumentException("not a hex digest");
        }
    }

    private static IOException io(Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        return e instanceof IOException io ? io : new IOException("the cluster cannot be read or written: " + e, e);
    }

    @Override
    public String toString() {
        return "ZkSpentRecord[" + parent + "]";
    }
}

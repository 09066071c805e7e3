package io.brine.cluster;

import io.brine.store.policy.SpentRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spent grants or tokens shared by the cluster's masters: {@code /spent/<name>/<digest>} holding the epoch second it
 * expires. Spending is one create, so of two masters spending the same grant at once exactly one wins; an expired
 * record is taken over with a version check. Expired records are not pruned yet: they are a few bytes each.
 */
public final class ZkSpentRecord implements SpentRecord {

    private static final Logger log = LoggerFactory.getLogger(ZkSpentRecord.class);
    private static final Pattern KEY = Pattern.compile("[0-9a-f]{16,128}");

    private final CuratorFramework client;
    private final String parent;
    private final Clock clock;

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
    }

    @Override
    public boolean isSpent(String key) throws IOException {
        requireKey(key);
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
        byte[] data = Long.toString(expires.getEpochSecond()).getBytes(StandardCharsets.US_ASCII);
        try {
            client.create().forPath(path(key), data);
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
            log.warn("Cannot record in the cluster that {} was not used after all: {}; it stays spent", key,
                    e.getMessage());
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

package io.brine.cluster;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * The cluster's audit trail: every key change through any master (or brine-key on any master host) is one
 * sequential znode under {@code /audit}, created in the transaction that made the change, so the trail is one
 * total order and never misses or invents a change. Each entry is the JSON of one {@code audit.log} line.
 */
public final class ZkAuditTrail {

    private ZkAuditTrail() {}

    /** Every entry, oldest first, each a JSON object as in {@code audit.log}. */
    public static List<String> read(CuratorFramework client) throws KeeperException {
        try {
            List<String> names = new ArrayList<>(client.getChildren().forPath(ZkRecords.AUDIT));
            // Sequence numbers are zero-padded to ten digits: the names sort in commit order.
            names.sort(null);
            List<String> lines = new ArrayList<>(names.size());
            for (String name : names) {
                try {
                    lines.add(
                            new String(client.getData().forPath(ZkRecords.AUDIT + "/" + name), StandardCharsets.UTF_8));
                } catch (KeeperException.NoNodeException e) {
                    // pruned meanwhile
                }
            }
            return lines;
        } catch (KeeperException e) {
            throw e;
        } catch (Exception e) {
            throw ZkWrites.asKeeper(e);
        }
    }
}

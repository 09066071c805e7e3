package io.brine.cluster;

import io.brine.protocol.crypto.KeyFormatException;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.StoredKey;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.jute.BinaryOutputArchive;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads of single znodes and the cluster's one way to change anything: a {@link Transaction} of versioned
 * operations, the change's audit event (a sequential znode) and a bump of {@code /seq}, whose new stat names the
 * transaction's zxid. Either all of it happens or none; a failed version or existence check is a lost race.
 */
final class ZkWrites {

    private static final Logger log = LoggerFactory.getLogger(ZkWrites.class);

    private final CuratorFramework client;
    private final Clock clock;
    private final AuditLog localAudit;

    ZkWrites(CuratorFramework client, Clock clock, AuditLog localAudit) {
        this.client = client;
        this.clock = clock;
        this.localAudit = localAudit;
    }

    /** One znode as read: absent ({@code version} -1), or its data, version and last-modifying zxid. */
    record Read(byte[] data, int version, long zxid) {
        boolean exists() {
            return version >= 0;
        }

        StoredKey key(String id) throws KeeperException {
            if (!exists()) {
                return null;
            }
            try {
                return ZkRecords.decodeKey(id, data);
            } catch (KeyFormatException e) {
                throw KeeperException.create(KeeperException.Code.DATAINCONSISTENCY, "/" + id + ": " + e.getMessage());
            }
        }

        long count() {
            String text = data == null ? "" : new String(data, StandardCharsets.US_ASCII).strip();
            return text.isEmpty() ? 0 : Long.parseLong(text);
        }
    }

    Read read(String path) throws KeeperException {
        Stat stat = new Stat();
        try {
            byte[] data = client.getData().storingStatIn(stat).forPath(path);
            return new Read(data, stat.getVersion(), stat.getMzxid());
        } catch (KeeperException.NoNodeException e) {
            return new Read(null, -1, -1);
        } catch (KeeperException e) {
            throw e;
        } catch (Exception e) {
            throw asKeeper(e);
        }
    }

    Transaction begin() {
        return new Transaction();
    }

    /** The operations of one change, committed with its audit event as one ZooKeeper transaction. */
    final class Transaction {
        private final List<CuratorOp> ops = new ArrayList<>();
        private final List<AuditEvent> events = new ArrayList<>();
        private int bytes;
        private int failedOp = -1;

        Transaction create(String path, byte[] data) {
            return add(() -> client.transactionOp().create().forPath(path, data));
        }

        Transaction setData(String path, int version, byte[] data) {
            return add(
                    () -> client.transactionOp().setData().withVersion(version).forPath(path, data));
        }

        Transaction delete(String path, int version) {
            return add(
                    () -> client.transactionOp().delete().withVersion(version).forPath(path));
        }

        Transaction check(String path, int version) {
            return add(() -> client.transactionOp().check().withVersion(version).forPath(path));
        }

        /** Appends an audit event to the change; a change may record several (a displaced key, then the new one). */
        Transaction audit(AuditEvent auditEvent) {
            events.add(auditEvent);
            byte[] data = ZkRecords.encodeAudit(auditEvent, clock.instant());
            return add(() -> client.transactionOp()
                    .create()
                    .withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                    .forPath(ZkRecords.AUDIT_PREFIX, data));
        }

        private Transaction add(OpMaker maker) {
            try {
                CuratorOp op = maker.make();
                ops.add(op);
                bytes += requestBytes(op.get());
            } catch (Exception e) {
                throw new IllegalStateException("cannot build a ZooKeeper operation", e);
            }
            return this;
        }

        /** How many operations it holds so far (the commit adds one, the bump of {@code /seq}). */
        int size() {
            return ops.size();
        }

        /** The bytes its operations take in the request that commits them, as ZooKeeper serialises it. */
        int bytes() {
            return bytes;
        }

        /**
         * After a {@link #commit} that returned empty: the index of the operation whose version or existence check
         * failed, as ZooKeeper's results name it; -1 when they name none.
         */
        int failedOp() {
            return failedOp;
        }

        /** The transaction's zxid; empty when a version or existence check failed (a lost race). */
        Optional<Long> commit() throws KeeperException {
            add(() -> client.transactionOp().setData().forPath(ZkRecords.SEQ, new byte[0]));
            try {
                List<CuratorTransactionResult> results = client.transaction().forOperations(ops);
                long zxid = results.get(results.size() - 1).getResultStat().getMzxid();
                for (AuditEvent event : events) {
                    try {
                        localAudit.record(event);
                    } catch (UncheckedIOException e) {
                        log.warn("Cannot append to the local audit log: {}", e.getMessage());
                    }
                }
                return Optional.of(zxid);
            } catch (KeeperException.BadVersionException
                    | KeeperException.NodeExistsException
                    | KeeperException.NoNodeException e) {
                failedOp = firstFailed(e.getResults());
                return Optional.empty();
            } catch (KeeperException e) {
                throw e;
            } catch (Exception e) {
                throw asKeeper(e);
            }
        }
    }

    /** The first operation a failed multi's results name as the one that failed; -1 when none does. */
    private static int firstFailed(List<OpResult> results) {
        if (results == null) {
            return -1;
        }
        for (int i = 0; i < results.size(); i++) {
            if (results.get(i) instanceof OpResult.ErrorResult error
                    && error.getErr() != KeeperException.Code.OK.intValue()
                    && error.getErr() != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue()) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The bytes {@code op} takes in a multi request: its record as jute serialises it, and the header ZooKeeper puts
     * before each operation (type, done, error: 9 bytes).
     */
    static int requestBytes(Op op) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            op.toRequestRecord().serialize(BinaryOutputArchive.getArchive(out), "op");
        } catch (IOException e) {
            throw new IllegalStateException("cannot serialise a ZooKeeper operation", e);
        }
        return out.size() + 9;
    }

    @FunctionalInterface
    private interface OpMaker {
        CuratorOp make() throws Exception;
    }

    static KeeperException asKeeper(Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        KeeperException k = KeeperException.create(KeeperException.Code.SYSTEMERROR);
        k.initCause(e);
        return k;
    }
}

package io.brine.cluster;

import io.brine.daemon.WarnInterval;
import io.brine.protocol.MinionIds;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.OutcomeUnknownException;
import io.brine.store.keys.RotationAsks;
import io.brine.store.keys.StoredKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The minion key rotations admins asked for in a cluster ({@code brine-key --rotate-keys}, PROTOCOL.md 6.3): one
 * znode {@code /asked/<id>} per id holding {@link RotationAsks}'s record, decided by {@link RotationAsks#decide} as
 * the file store decides it. An ask is written in one transaction with its audit event and a version bump of the id's
 * {@code /keys/<id>} (same bytes), so a delete or reject decided on the key before the ask fails its version check,
 * is decided again and deletes the ask in its own transaction ({@link #dropIn}): no ask outlives its key. A minion's
 * rotation spends the ask without touching it ({@link RotationAsks.Ask#outstandingFor}).
 *
 * <p>Every master knows the asks from a watch on {@code /asked} (and this process's own writes), ordered per id by
 * zxid as {@link ZkKeyView} orders keys. A znode that is not an ask (one byte past {@link
 * RotationAsks#MAX_RECORD_BYTES}, not a record, not a valid id: only someone holding the cluster's credentials writes
 * there) is no ask, logged escaped at most once a minute (a bad name and a bad record each).
 */
final class ZkRotationAsks implements AutoCloseable {

    private static final int MAX_ATTEMPTS = 50;
    private static final Logger log = LoggerFactory.getLogger(ZkRotationAsks.class);

    /** An id's ask as of {@code zxid}; a null ask: none (deleted, or not an ask). */
    private record Held(RotationAsks.Ask ask, long zxid) {}

    private final ZkKeyStore store;
    private final Clock clock;
    private final WarnInterval badNames;
    private final WarnInterval badRecords;
    /** Read at every heartbeat of every minion: lock-free; changed by {@code compute}, so per id in zxid order. */
    private final Map<String, Held> asks = new ConcurrentHashMap<>();

    private CuratorCache cache;

    ZkRotationAsks(ZkKeyStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
        this.badNames = new WarnInterval(clock, 60_000);
        this.badRecords = new WarnInterval(clock, 60_000);
    }

    /** Starts the watch on {@code /asked}; {@code ready} is counted down once every ask was read. */
    void watch(CountDownLatch ready) {
        cache = CuratorCache.build(store.client(), ZkRecords.ASKED);
        cache.listenable()
                .addListener(CuratorCacheListener.builder()
                        .forCreatesAndChanges((old, node) -> heard(node, false))
                        .forDeletes(old -> heard(old, true))
                        .forInitialized(ready::countDown)
                        .build());
        cache.start();
    }

    private void heard(ChildData node, boolean deleted) {
        if (node.getPath().length() <= ZkRecords.ASKED.length() + 1) {
            return;
        }
        String id = node.getPath().substring(ZkRecords.ASKED.length() + 1);
        if (MinionIds.problem(id).isPresent()) {
            if (!deleted) {
                badNames.warn(
                        log,
                        "Cluster key store: {}/{} is not a minion id; ignored",
                        ZkRecords.ASKED,
                        MinionIds.printable(id));
            }
            return;
        }
        long zxid = node.getStat().getMzxid();
        if (deleted) {
            apply(id, null, zxid);
            return;
        }
        byte[] data = node.getData();
        Optional<RotationAsks.Ask> ask = RotationAsks.decode(data);
        if (ask.isEmpty()) {
            badRecords.warn(
                    log,
                    "Cluster key store: {} is not a key rotation ask ({}); the minion is not asked",
                    ZkRecords.askedPath(id), // a valid id: nothing to escape
                    data == null || data.length > RotationAsks.MAX_RECORD_BYTES
                            ? "larger than " + RotationAsks.MAX_RECORD_BYTES + " bytes"
                            : "not a fingerprint and a time");
        }
        apply(id, ask.orElse(null), zxid);
    }

    /** The ask of {@code id} is {@code ask} (null: none) as of {@code zxid}; ignored when a newer one was applied. */
    private void apply(String id, RotationAsks.Ask ask, long zxid) {
        asks.compute(id, (key, last) -> last == null || zxid >= last.zxid() ? new Held(ask, zxid) : last);
    }

    /** The ask of {@code id}, as this master knows it. */
    Optional<RotationAsks.Ask> of(String id) {
        Held held = asks.get(id);
        return held == null ? Optional.empty() : Optional.ofNullable(held.ask());
    }

    /** Every ask, outstanding or spent, by id. */
    Map<String, RotationAsks.Ask> all() {
        Map<String, RotationAsks.Ask> all = new TreeMap<>();
        asks.forEach((id, held) -> {
            if (held.ask() != null) {
                all.put(id, held.ask());
            }
        });
        return all;
    }

    /**
     * Asks each of {@code ids} in a transaction of its own (as {@code brine-key -a} changes each key in one), after
     * the one before was committed.
     *
     * @throws UncheckedIOException without a writable cluster (nothing asked); with an {@link OutcomeUnknownException}
     *         when the connection was lost while an ask was sent (it may have been recorded), naming the id and how
     *         many were asked before it
     */
    List<AdminResult> ask(List<String> ids, String actor) {
        Objects.requireNonNull(actor, "actor");
        ids.forEach(MinionIds::requireValid);
        ClusterHealth health = store.awaitWritable();
        if (!health.writable()) {
            throw new UncheckedIOException(new IOException("cannot record the key rotation asks in the cluster: "
                    + health.describe() + "; nothing was asked, try again when it is back"));
        }
        List<AdminResult> results = new ArrayList<>(ids.size());
        for (String id : ids) {
            try {
                results.add(ask(id, actor));
            } catch (KeeperException e) {
                long asked = results.stream()
                        .filter(r -> r.status() == AdminResult.Status.DONE)
                        .count();
                String code = e.code().name().toLowerCase(Locale.ROOT).replace('_', ' ');
                String rest = asked + " asked before it, " + (ids.size() - results.size() - 1) + " not tried";
                if (ZkKeyStore.connectionProblem(e)) {
                    throw new UncheckedIOException(new OutcomeUnknownException(
                            id + ": the connection to ZooKeeper was lost while its ask was sent (" + code + "); "
                                    + rest,
                            e));
                }
                throw new UncheckedIOException(new IOException(
                        id + ": the cluster refused the ask (" + code + "), it was not asked; " + rest, e));
            }
        }
        return results;
    }

    private AdminResult ask(String id, String actor) throws KeeperException {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            ZkWrites.Read main = store.read(ZkRecords.keyPath(id));
            StoredKey key = null;
            String unreadable = null;
            try {
                key = main.key(id);
            } catch (KeeperException e) {
                if (e.code() != KeeperException.Code.DATAINCONSISTENCY) {
                    throw e;
                }
                unreadable = "keys/" + id + " is not a key record";
            }
            ZkWrites.Read asked = store.read(ZkRecords.askedPath(id));
            AdminResult result = RotationAsks.decide(
                    id,
                    Optional.ofNullable(key).map(StoredKey::state),
                    key,
                    unreadable,
                    key == null ? MinionKind.BRINE : key.kind(),
                    asked.exists() ? RotationAsks.decode(asked.data()) : Optional.empty());
            if (result.status() != AdminResult.Status.DONE) {
                return result;
            }
            RotationAsks.Ask ask = new RotationAsks.Ask(key.fingerprint(), Instant.ofEpochMilli(clock.millis()));
            byte[] record = RotationAsks.encode(ask);
            ZkWrites.Transaction tx = store.writes().begin();
            tx.setData(ZkRecords.keyPath(id), main.version(), main.data());
            if (asked.exists()) {
                tx.setData(ZkRecords.askedPath(id), asked.version(), record);
            } else {
                tx.create(ZkRecords.askedPath(id), record);
            }
            tx.audit(KeyStore.rotationAskedEvent(id, actor, key.fingerprint()));
            Optional<Long> zxid = tx.commit();
            if (zxid.isPresent()) {
                apply(id, ask, zxid.get());
                return result;
            }
        }
        return new AdminResult(
                id,
                AdminResult.Status.REFUSED,
                Optional.empty(),
                Optional.empty(),
                null,
                id + ": not asked: the id kept changing; try again");
    }

    /**
     * Adds the delete of {@code id}'s ask to {@code tx} (a delete or reject of its accepted key), when it has one; the
     * read's version, for {@link #dropped} once committed.
     */
    Optional<ZkWrites.Read> dropIn(ZkWrites.Transaction tx, String id) throws KeeperException {
        ZkWrites.Read asked = store.read(ZkRecords.askedPath(id));
        if (!asked.exists()) {
            return Optional.empty();
        }
        tx.delete(ZkRecords.askedPath(id), asked.version());
        return Optional.of(asked);
    }

    /** The ask of {@code id} was deleted by the transaction {@code zxid}. */
    void dropped(String id, long zxid) {
        apply(id, null, zxid);
    }

    @Override
    public void close() {
        if (cache != null) {
            cache.close();
        }
    }
}

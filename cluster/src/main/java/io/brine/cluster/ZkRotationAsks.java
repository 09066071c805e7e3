package io.brine.cluster;

import io.brine.daemon.WarnInterval;
import io.brine.protocol.MinionIds;
import io.brine.store.audit.AuditEvent;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.IncompleteBatchException;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.RotationAsks;
import io.brine.store.keys.StoredKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
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
 * {@code /keys/<id>} (same bytes; the asks of many ids share one, {@link #ask}), so a delete or reject decided on the key before the ask fails its version check,
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

    /**
     * A batch's bounds. ZooKeeper refuses a request larger than its {@code jute.maxbuffer} (1 MiB by default, on the
     * servers and on the client alike); a batch stays below half of it, counted as ZooKeeper serialises each
     * operation (an id is about 1.5 KiB: its key rewritten, its ask, its audit event), and below 1,500 operations.
     */
    static final int MAX_BATCH_BYTES = 512 * 1024;

    static final int MAX_BATCH_IDS = 500;
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
    private int maxBatchIds = MAX_BATCH_IDS;
    private int maxBatchBytes = MAX_BATCH_BYTES;
    private volatile Runnable beforeCommit = () -> {};

    ZkRotationAsks(ZkKeyStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
        this.badNames = new WarnInterval(clock, 60_000);
        this.badRecords = new WarnInterval(clock, 60_000);
    }

    /** Other bounds for a batch than the defaults (a test's, to cross them with a few ids). */
    void batchBounds(int ids, int bytes) {
        this.maxBatchIds = ids;
        this.maxBatchBytes = bytes;
    }

    /** Runs {@code hook} before each batch is committed, after its reads (a test's, to change a key in between). */
    void beforeCommit(Runnable hook) {
        this.beforeCommit = hook;
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
     * Asks {@code ids} in batches, each one ZooKeeper transaction (one {@code multi}) of at most {@link
     * #MAX_BATCH_IDS} ids and {@link #MAX_BATCH_BYTES} bytes of operations, committed after the one before: per id the
     * version bump of its key (the condition: the key read when the ask was decided), its ask and its audit event. An id
     * whose check fails (its key deleted, rejected or rotated meanwhile, or another ask made) is taken out and decided
     * again after a new read, and the batch is committed without it; the rest of the batch is never lost for it.
     *
     * @throws UncheckedIOException without a writable cluster (nothing asked); with an {@link
     *         IncompleteBatchException} when a batch's commit failed: the ids of the batches before it asked, the ids of
     *         that batch unknown (the connection was lost while it was sent: it may have been recorded) or not asked
     *         (the cluster refused it), the rest not asked
     */
    List<AdminResult> ask(List<String> ids, String actor) {
        Objects.requireNonNull(actor, "actor");
        ids.forEach(MinionIds::requireValid);
        ClusterHealth health = store.awaitWritable();
        if (!health.writable()) {
            throw new UncheckedIOException(new IOException("cannot record the key rotation asks in the cluster: "
                    + health.describe() + "; nothing was asked, try again when it is back"));
        }
        Map<String, AdminResult> decided = new HashMap<>();
        Map<String, Integer> attempts = new HashMap<>();
        Deque<String> todo = new ArrayDeque<>(new LinkedHashSet<>(ids));
        List<Planned> batch = new ArrayList<>();
        int batchBytes = 0;
        try {
            while (!todo.isEmpty() || !batch.isEmpty()) {
                // Fill the batch up to its bounds; an id that would pass them waits for the next.
                while (!todo.isEmpty() && batch.size() < maxBatchIds) {
                    String id = todo.peekFirst();
                    Planned planned = plan(id, actor, decided);
                    if (planned == null) {
                        todo.pollFirst();
                        continue;
                    }
                    if (!batch.isEmpty() && batchBytes + planned.bytes() > maxBatchBytes) {
                        break;
                    }
                    todo.pollFirst();
                    batch.add(planned);
                    batchBytes += planned.bytes();
                }
                if (batch.isEmpty()) {
                    continue;
                }
                beforeCommit.run();
                ZkWrites.Transaction tx = store.writes().begin();
                batch.forEach(planned -> planned.addTo(tx));
                Optional<Long> zxid;
                try {
                    zxid = tx.commit();
                } catch (KeeperException e) {
                    throw stopped(e, ids, decided, names(batch), new ArrayList<>(todo));
                }
                if (zxid.isPresent()) {
                    for (Planned planned : batch) {
                        apply(planned.id(), planned.ask(), zxid.get());
                        decided.put(planned.id(), planned.result());
                    }
                    batch.clear();
                    batchBytes = 0;
                    continue;
                }
                // A lost race: the id whose check failed is read and decided again; the others go again as they are.
                int failed = tx.failedOp() < 0 ? -1 : tx.failedOp() / Planned.OPS;
                List<Planned> again =
                        failed >= 0 && failed < batch.size() ? List.of(batch.get(failed)) : List.copyOf(batch);
                for (int i = again.size() - 1; i >= 0; i--) {
                    Planned planned = again.get(i);
                    batch.remove(planned);
                    batchBytes -= planned.bytes();
                    if (attempts.merge(planned.id(), 1, Integer::sum) >= MAX_ATTEMPTS) {
                        decided.put(
                                planned.id(),
                                new AdminResult(
                                        planned.id(),
                                        AdminResult.Status.REFUSED,
                                        Optional.empty(),
                                        Optional.empty(),
                                        null,
                                        planned.id() + ": not asked: the id kept changing; try again"));
                    } else {
                        todo.addFirst(planned.id());
                    }
                }
            }
        } catch (KeeperException e) {
            // A read failed: the batch being filled was not sent.
            List<String> notSent = names(batch);
            notSent.addAll(todo);
            throw stopped(e, ids, decided, List.of(), notSent);
        }
        return ids.stream().distinct().map(decided::get).toList();
    }

    private static List<String> names(List<Planned> batch) {
        return batch.stream().map(Planned::id).collect(Collectors.toCollection(ArrayList::new));
    }

    /** An ask decided DONE for {@code id} and not yet committed: its reads, its ask and what it adds to a batch. */
    private record Planned(
            String id,
            ZkWrites.Read main,
            ZkWrites.Read asked,
            RotationAsks.Ask ask,
            AuditEvent event,
            AdminResult result,
            int bytes) {

        /** The operations each id adds to a batch, in this order (a failed check's index over this is its id's). */
        static final int OPS = 3;

        void addTo(ZkWrites.Transaction tx) {
            byte[] record = RotationAsks.encode(ask);
            tx.setData(ZkRecords.keyPath(id), main.version(), main.data());
            if (asked.exists()) {
                tx.setData(ZkRecords.askedPath(id), asked.version(), record);
            } else {
                tx.create(ZkRecords.askedPath(id), record);
            }
            tx.audit(event);
        }
    }

    /**
     * Reads and decides {@code id}: its ask to commit, or null when there is none to make (the result then in {@code
     * decided}).
     */
    private Planned plan(String id, String actor, Map<String, AdminResult> decided) throws KeeperException {
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
            decided.put(id, result);
            return null;
        }
        RotationAsks.Ask ask = new RotationAsks.Ask(key.fingerprint(), Instant.ofEpochMilli(clock.millis()));
        Planned planned =
                new Planned(id, main, asked, ask, KeyStore.rotationAskedEvent(id, actor, key.fingerprint()), result, 0);
        ZkWrites.Transaction alone = store.writes().begin();
        planned.addTo(alone);
        return new Planned(id, main, asked, ask, planned.event(), result, alone.bytes());
    }

    /**
     * What a failed commit of the batch {@code sent} (empty: a read failed before anything was sent) leaves, said per
     * id: those decided before it as decided, {@code sent} unknown when the connection was lost (it may have been
     * recorded) or not asked when the cluster refused it, {@code notSent} not asked.
     */
    private static UncheckedIOException stopped(
            KeeperException e,
            List<String> ids,
            Map<String, AdminResult> decided,
            List<String> sent,
            List<String> notSent) {
        String code = e.code().name().toLowerCase(Locale.ROOT).replace('_', ' ');
        List<AdminResult> known = ids.stream()
                .distinct()
                .map(decided::get)
                .filter(Objects::nonNull)
                .toList();
        boolean lost = ZkKeyStore.connectionProblem(e);
        List<String> notAsked = new ArrayList<>(lost ? List.of() : sent);
        notAsked.addAll(notSent);
        String why;
        if (sent.isEmpty()) {
            why = "the cluster could not be read (" + code + ")";
        } else if (lost) {
            why = "the connection to ZooKeeper was lost (" + code + ") while the asks of " + sent.size()
                    + (sent.size() == 1 ? " id were" : " ids were") + " sent: they may or may not have been recorded";
        } else {
            why = "the cluster refused the asks of " + sent.size() + (sent.size() == 1 ? " id" : " ids") + " (" + code
                    + "): not asked";
        }
        return new UncheckedIOException(new IncompleteBatchException(
                why + "; " + count(known, AdminResult.Status.DONE) + " asked before, " + notSent.size() + " not tried",
                e,
                known,
                lost ? sent : List.of(),
                notAsked));
    }

    private static long count(List<AdminResult> results, AdminResult.Status status) {
        return results.stream().filter(r -> r.status() == status).count();
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

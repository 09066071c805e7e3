// Over 400 lines: the KeyStore interface is wide (reads, the offer with its quorum-loss answers, five admin operations,
// import, rotation); its parts live in ZkWrites, ZkKeyView, ZkAdminOperations and ZkConnectionWatch.
package io.brine.cluster;

import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.store.audit.AuditEvent;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.AdminResult.Status;
import io.brine.store.keys.CheckedKeys;
import io.brine.store.keys.KeyChangeListener;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyProblem;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.KeyTransitions;
import io.brine.store.keys.KeyTransitions.Current;
import io.brine.store.keys.KeyTransitions.Limits;
import io.brine.store.keys.KeyTransitions.Outcome;
import io.brine.store.keys.KeyTransitions.Plan;
import io.brine.store.keys.MasterKeyRotation;
import io.brine.store.keys.MasterKeys;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.Offer;
import io.brine.store.keys.OfflineMasterSigning;
import io.brine.store.keys.OutcomeUnknownException;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.RetiredKeys;
import io.brine.store.keys.RotationAsks;
import io.brine.store.keys.RotationDecision;
import io.brine.store.keys.StoredKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The key store of a cluster of masters, in ZooKeeper ({@link ZkRecords} has the layout). Reads answer from this
 * master's {@link ZkKeyView}, kept current by watches (a change through any master is heard within a ZooKeeper
 * round trip). Every change is one ZooKeeper transaction that checks the version of the znode it was decided on
 * and appends its audit event, so two masters racing on one id end in one state with one audit entry each for
 * what really happened; a loser re-reads and decides again. Who gets in is {@link KeyTransitions#plan}, the same
 * function the filesystem store calls: this class reads the id's znodes and commits the plan.
 *
 * <p>The master key pair stays on each master's disk (the admin installs the same pair on every master).
 */
public final class ZkKeyStore implements KeyStore {

    /** Attempts at one change that keeps losing races before the caller is told to try later. */
    private static final int MAX_ATTEMPTS = 50;

    private static final Logger log = LoggerFactory.getLogger(ZkKeyStore.class);

    private final CuratorFramework client;
    private final Path pkiDir;
    private final KeyPair masterKeyPair;
    private final ZkWrites writes;
    private final int maxPending;
    private final int maxMinions;
    private final int maxRejected;
    private final ZkKeyView view;
    private final AtomicLong rotationKeyReads = new AtomicLong();
    private final List<CuratorCache> caches = new ArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile AutoCloseable alsoClose;
    private final ZkConnectionWatch connection;
    /** The keys this master checked before (its pki dir's), whose small-factor check reading the view skips. */
    private final CheckedKeys checked;

    private final ZkRotationAsks asks;

    private ZkKeyStore(CuratorFramework client, ZkKeyStoreOptions options) {
        this.client = client;
        this.pkiDir = options.pkiDir();
        this.masterKeyPair = options.masterKeyPair();
        this.writes = new ZkWrites(client, options.clock(), options.auditLog());
        this.maxPending = options.maxPending();
        this.maxMinions = options.maxMinions();
        this.maxRejected = options.maxRejected();
        this.view = new ZkKeyView("brine-zk-keys");
        this.connection = ZkConnectionWatch.start(client, options.clock(), options.reconnectGrace());
        this.checked = masterKeyPair != null && pkiDir != null ? CheckedKeys.open(pkiDir) : CheckedKeys.none();
        this.asks = new ZkRotationAsks(this, options.clock());
    }

    /**
     * The cluster's layout format, as {@link #open} requires it: refused, with the message a start stops with, when
     * another version of brine wrote it. With {@code write}, a cluster without one gets ours; without, nothing is
     * written (for {@code brine-master --check-config}).
     */
    static void requireFormat(CuratorFramework client, boolean write) throws IOException {
        try {
            ZkRecords.requireFormat(client, write);
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("cannot open the cluster's key store: " + e, e);
        }
    }

    /**
     * Creates the cluster's znodes if missing and reads every key. {@code client} is the caller's (started,
     * connected); closing the store does not close it.
     *
     * @throws IOException when the ensemble cannot be read within {@code timeout}
     */
    public static ZkKeyStore open(CuratorFramework client, ZkKeyStoreOptions options, Duration timeout)
            throws IOException {
        ZkKeyStore store = new ZkKeyStore(client, options);
        try {
            requireFormat(client, true);
            for (String path : List.of(
                    ZkRecords.KEYS,
                    ZkRecords.DENIED,
                    ZkFingerprints.ROOT,
                    ZkRecords.AUDIT,
                    ZkRecords.SPENT,
                    ZkRecords.SEQ,
                    ZkRecords.ROTATE,
                    ZkRecords.RETIRED,
                    ZkRecords.ASKED)) {
                try {
                    client.create().creatingParentContainersIfNeeded().forPath(path, new byte[0]);
                } catch (KeeperException.NodeExistsException e) {
                    // made by another master
                }
            }
            CountDownLatch ready = new CountDownLatch(3);
            store.watch(ZkRecords.KEYS, false, ready);
            store.watch(ZkRecords.DENIED, true, ready);
            store.asks.watch(ready);
            if (!ready.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException("the cluster's keys could not be read within " + timeout.toSeconds() + " s");
            }
            store.checked.saveChecked();
            return store;
        } catch (IOException e) {
            store.close();
            throw e;
        } catch (Exception e) {
            store.close();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("cannot open the cluster's key store: " + e, e);
        }
    }

    /**
     * Whether this master can write to the cluster now. While it cannot, reads answer from the last view, new keys
     * are answered "pending, try later" without a write, and admin changes and rotation requests are refused.
     */
    public ClusterHealth health() {
        return connection.health();
    }

    ClusterHealth awaitWritable() {
        return connection.awaitWritable();
    }

    private void watch(String parent, boolean denied, CountDownLatch ready) {
        CuratorCache cache = CuratorCache.build(client, parent);
        cache.listenable()
                .addListener(CuratorCacheListener.builder()
                        .forCreatesAndChanges((old, node) -> heard(parent, denied, node, false))
                        .forDeletes(old -> heard(parent, denied, old, true))
                        .forInitialized(ready::countDown)
                        .build());
        caches.add(cache);
        cache.start();
    }

    private void heard(String parent, boolean denied, ChildData node, boolean deleted) {
        if (node.getPath().length() <= parent.length() + 1) {
            return;
        }
        String id = node.getPath().substring(parent.length() + 1);
        if (MinionIds.problem(id).isPresent()) {
            view.problem(id, new KeyProblem(node.getPath(), "not a valid minion id; ignored"));
            return;
        }
        if (deleted) {
            view.apply(denied, id, null, -1, node.getStat().getMzxid());
            view.problem(id, null);
            return;
        }
        try {
            StoredKey key = ZkRecords.decodeKey(id, node.getData(), checked);
            if (denied != (key.state() == KeyState.DENIED)) {
                throw new KeyFormatException("a " + key.state().label() + " key under " + parent);
            }
            view.apply(
                    denied, id, key, node.getStat().getVersion(), node.getStat().getMzxid());
            view.problem(id, null);
        } catch (KeyFormatException e) {
            view.problem(id, new KeyProblem(node.getPath(), e.getMessage()));
        }
    }

    @Override
    public Path pkiDir() {
        return pkiDir;
    }

    /** The keys whose small-factor check reading the view skips (a test's view). */
    CheckedKeys checkedKeys() {
        return checked;
    }

    @Override
    public KeyPair masterKeyPair() {
        if (masterKeyPair == null) {
            throw new IllegalStateException("the key store was opened without the master key");
        }
        return masterKeyPair;
    }

    /**
     * The master's public key minions are shown: from the pair, or read from {@code master.pub} in the pki dir
     * (brine-key); after a rotation of the cluster's key, the newest key of {@code /master_key}, reached by verifying
     * its chain from that one (a chain that does not lead from it is refused, not shown).
     */
    @Override
    public Optional<RSAPublicKey> masterPublicKey() throws IOException, KeyStoreException {
        Optional<RSAPublicKey> installed = masterKeyPair != null
                ? Optional.of((RSAPublicKey) masterKeyPair.getPublic())
                : MasterKeys.readPublicIn(pkiDir);
        if (installed.isEmpty()) {
            return installed;
        }
        return Optional.of(new ZkMasterKeys(client).newestPublic(installed.get()));
    }

    /** What {@link #importKey} did with one key. */
    public enum Imported {
        /** Stored in the cluster. */
        ADDED,
        /** The cluster already held that key in that state. */
        UNCHANGED,
        /** The cluster holds another key or another state for the id: nothing changed. */
        CONFLICT
    }

    /**
     * Stores {@code key} for {@code id} in {@code state} as a filesystem pki dir held it (brine-key cluster import):
     * added when the id has no such znode, unchanged when it holds the same key in the same state, a conflict
     * otherwise (nothing is ever replaced). A pending, accepted or rejected key is filed for {@code kind} (a Salt
     * minion's as its pki dir marked it). Audited as the state change, with {@code reason}.
     *
     * @throws IOException when the cluster cannot be written now
     */
    public Imported importKey(String id, KeyState state, RSAPublicKey key, MinionKind kind, String actor, String reason)
            throws IOException {
        return admin().importKey(id, state, key, kind, actor, reason);
    }

    /** Closes {@code resource} (the connection a store was opened on alone, by brine-key) after the store. */
    void closeWith(AutoCloseable resource) {
        this.alsoClose = resource;
    }

    // ---------------------------------------------------------------- reads (this master's view)

    @Override
    public KeyLookup lookup(String id, RSAPublicKey offered) {
        MinionIds.requireValid(id);
        Objects.requireNonNull(offered, "offered");
        ZkKeyView.Entry entry = view.entry(id);
        return entry == null ? KeyLookup.UNKNOWN : lookupOf(entry.key(), offered);
    }

    @Override
    public Optional<RSAPublicKey> acceptedKey(String id) {
        MinionIds.requireValid(id);
        ZkKeyView.Entry entry = view.entry(id);
        return entry != null && entry.key().state() == KeyState.ACCEPTED
                ? Optional.of(entry.key().key())
                : Optional.empty();
    }

    @Override
    public MinionKind kind(String id) {
        MinionIds.requireValid(id);
        ZkKeyView.Entry entry = view.entry(id);
        return entry == null ? MinionKind.BRINE : entry.key().kind();
    }

    @Override
    public Set<String> acceptedIds() {
        return view.acceptedIds();
    }

    @Override
    public KeyListing list() {
        return new KeyListing(view.all(), view.problems());
    }

    /** The watches keep the view current; a rescan has nothing to add. */
    @Override
    public void refresh() {
        ensureOpen();
    }

    // ---------------------------------------------------------------- the master's offer

    /**
     * The filesystem store's rules on ZooKeeper: steady states answered from this master's view, every write one
     * versioned transaction; one key, one id (a key stored under another id, in any state, is never accepted by a
     * policy and is marked "same key as"); a grant or token asked about a pending key displaces it (the squatter's
     * key moves to denied, audited), never an accepted key.
     */
    @Override
    public Offer offer(String id, RSAPublicKey offered, MinionKind kind, Policies policies) {
        KeyStore.checkOffer(id, offered, policies);
        Objects.requireNonNull(kind, "kind");
        ensureOpen();
        ZkKeyView.Entry entry = view.entry(id);
        // An id this view does not hold yet is decided again in the transaction: the kind is in the key's znode.
        Current viewed = currentOf(entry == null ? null : entry.key(), offered);
        if (KeyTransitions.checksFactors(viewed, kind)) {
            KeyStore.checkFactors(id, offered);
        }
        // Without the cluster nothing the policies say could be recorded: they are not asked (a single-use grant is
        // not spent, a policy executable not run, and no auth worker waits on ZooKeeper for a spent record).
        PolicyVerdict verdict =
                KeyTransitions.asksPolicies(viewed, kind) && awaitWritable().writable()
                        ? Objects.requireNonNull(policies.decide(viewed.lookup()), "verdict")
                        : PolicyVerdict.NONE;
        ZkKeyView.Entry denied = view.deniedEntry(id);
        Plan fast = KeyTransitions.fromView(viewed, kind, verdict, denied == null ? null : denied.key(), offered);
        if (fast.write() == KeyTransitions.Write.NONE) {
            // Named by a stored copy's fingerprint when it is the offered key: no hash on a steady state's answer.
            return offerOf(
                    fast.decision(
                            id, offered, entry == null ? null : entry.key(), denied == null ? null : denied.key()),
                    entry,
                    fast.offeredKeyHeld());
        }
        ClusterHealth now = awaitWritable();
        if (!now.writable()) {
            return unrecorded(id, offered, fast.outcome(), entry, now.describe());
        }
        try {
            for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
                Optional<Offer> done = tryOffer(id, offered, kind, verdict, viewed.lookup(), attempt == 0);
                if (done.isPresent()) {
                    return done.get();
                }
            }
            throw new UncheckedIOException(new IOException(id + ": lost " + MAX_ATTEMPTS + " races in a row"));
        } catch (KeeperException e) {
            if (connectionProblem(e)) {
                return unrecorded(
                        id,
                        offered,
                        fast.outcome(),
                        view.entry(id),
                        "ZooKeeper cannot be written ("
                                + e.code().name().toLowerCase(Locale.ROOT).replace('_', ' ') + ")");
            }
            throw new UncheckedIOException(
                    "cluster key store: cannot record the key of " + id + ": " + e.getMessage(), new IOException(e));
        }
    }

    /**
     * The answer to an offer that needed a write the cluster cannot take now: nothing is written; a key that would
     * have been stored (pending or accepted) is answered "pending, try later", a refusal stays a refusal.
     */
    private static Offer unrecorded(
            String id, RSAPublicKey offered, Outcome wanted, ZkKeyView.Entry entry, String why) {
        String fingerprint = Fingerprints.of(offered);
        String note = "not recorded: " + why;
        KeyDecision decision = switch (wanted.answer()) {
            case ACCEPTED, PENDING -> new KeyDecision.Pending(id, fingerprint, note + "; try later");
            case FULL -> wanted.decision(id, fingerprint);
            case REJECTED, DENIED ->
                new Outcome(wanted.answer(), wanted.write(), wanted.reason() + " (" + note + ")")
                        .decision(id, fingerprint);
        };
        return offerOf(decision, entry, false);
    }

    /** A failure of the connection or the ensemble, not of the request: the same request may pass later. */
    static boolean connectionProblem(KeeperException e) {
        return switch (e.code()) {
            case CONNECTIONLOSS,
                    SESSIONEXPIRED,
                    SESSIONMOVED,
                    OPERATIONTIMEOUT,
                    NOTREADONLY,
                    REQUESTTIMEOUT,
                    THROTTLEDOP -> true;
            default -> false;
        };
    }

    /** One optimistic attempt; empty when another master changed the id meanwhile. */
    private Optional<Offer> tryOffer(
            String id, RSAPublicKey offered, MinionKind kind, PolicyVerdict asked, KeyLookup askedAbout, boolean first)
            throws KeeperException {
        ZkWrites.Read main = read(ZkRecords.keyPath(id));
        // A znode that does not decode fails the offer here (data inconsistency), as before: never Current.unreadable.
        StoredKey current = main.key(id);
        // The kind as the znode holds it: every write below creates the znode (failing if another master filed it
        // meanwhile, for either kind) or checks its version, so the kind read here is the one that stands.
        Current now = currentOf(current, offered);
        Limits limits = new Limits(
                view.count(KeyState.PENDING),
                maxPending,
                view.count(KeyState.ACCEPTED),
                maxMinions,
                view.count(KeyState.REJECTED),
                maxRejected);
        String fingerprint = Fingerprints.of(offered);
        // One key, one id is decided on the fingerprint's znode as read, and checked by the transaction: another
        // master's view is not enough.
        ZkFingerprints.Changes owners = new ZkFingerprints.Changes(this, id, first);
        List<String> sharing = KeyTransitions.readsSharing(now, kind) ? owners.sameKeyAs(fingerprint) : List.of();
        boolean retired = KeyTransitions.readsRetired(now, kind)
                && RetiredKeys.decode(read(ZkRecords.retiredPath(id)).data()).contains(fingerprint);
        Plan plan = KeyTransitions.plan(now, kind, asked, askedAbout, sharing, limits, retired);
        Outcome outcome = plan.outcome();
        if (outcome.write() == KeyTransitions.Write.NONE) {
            if (current != null) {
                view.apply(false, id, current, main.version(), main.zxid());
            }
            return Optional.of(offerOf(plan.decision(id, fingerprint), view.entry(id), plan.offeredKeyHeld()));
        }
        KeyDecision decision = plan.decision(id, fingerprint);
        String reason = outcome.reason();
        ZkWrites.Transaction tx = writes.begin();
        KeyState to = switch (outcome.write()) {
            case NONE, DENIED -> null;
            case NEW_PENDING, NEW_ACCEPTED, NEW_REJECTED -> {
                KeyState state = outcome.write() == KeyTransitions.Write.NEW_PENDING
                        ? KeyState.PENDING
                        : outcome.write() == KeyTransitions.Write.NEW_ACCEPTED ? KeyState.ACCEPTED : KeyState.REJECTED;
                tx.create(ZkRecords.keyPath(id), ZkRecords.encodeKey(state, offered, kind));
                yield state;
            }
            case PENDING_TO_ACCEPTED, PENDING_TO_REJECTED, REPLACE_PENDING -> {
                KeyState state = outcome.write() == KeyTransitions.Write.PENDING_TO_REJECTED
                        ? KeyState.REJECTED
                        : KeyState.ACCEPTED;
                tx.setData(ZkRecords.keyPath(id), main.version(), ZkRecords.encodeKey(state, offered, kind));
                yield state;
            }
        };
        // The key that goes to /denied: the offered one, or the pending squatter's that a grant or token displaces.
        RSAPublicKey deniedKey = outcome.write() == KeyTransitions.Write.DENIED
                ? offered
                : outcome.write() == KeyTransitions.Write.REPLACE_PENDING ? current.key() : null;
        ZkWrites.Read denied = null;
        if (to != null) {
            if (current == null) {
                owners.add(fingerprint, ZkFingerprints.keySlot(id));
            } else if (outcome.write() == KeyTransitions.Write.REPLACE_PENDING) {
                owners.remove(current.fingerprint(), ZkFingerprints.keySlot(id))
                        .add(fingerprint, ZkFingerprints.keySlot(id));
            } else {
                owners.touch(fingerprint); // a promotion stands on "no other id holds the key"
            }
        }
        if (!owners.fits()) {
            // One key under more ids than a fingerprint znode holds: an attack or a mistake, never written.
            return Optional.of(unrecorded(
                    id,
                    offered,
                    outcome,
                    view.entry(id),
                    "the same key is held by " + sharing.size() + " ids, the most one fingerprint znode records"));
        }
        if (deniedKey != null) {
            // A denied key holds no id: not recorded under /fingerprints (ZkFingerprints).
            denied = read(ZkRecords.deniedPath(id));
            // A retired key is denied whatever the id holds by the commit; any other denial rests on the id's key.
            if (outcome.write() == KeyTransitions.Write.DENIED && main.exists()) {
                tx.check(ZkRecords.keyPath(id), main.version());
            }
            byte[] data = ZkRecords.encodeKey(KeyState.DENIED, deniedKey);
            if (denied.exists()) {
                tx.setData(ZkRecords.deniedPath(id), denied.version(), data);
            } else {
                tx.create(ZkRecords.deniedPath(id), data);
            }
            tx.audit(AuditEvent.builder("key-denied", MASTER_ACTOR)
                    .id(id)
                    .to(KeyState.DENIED.label())
                    .fingerprint(Fingerprints.of(deniedKey))
                    .reason(to == null ? reason : "pending key displaced: " + reason)
                    .build());
        }
        owners.writeTo(tx);
        if (to != null) {
            tx.audit(AuditEvent.builder(AuditEvent.keyChange(to.label()), MASTER_ACTOR)
                    .id(id)
                    .from(current == null ? null : current.state().label())
                    .to(to.label())
                    .fingerprint(fingerprint)
                    .reason(reason)
                    .build());
        }
        Optional<Long> zxid = tx.commit();
        if (zxid.isEmpty()) {
            return Optional.empty();
        }
        if (deniedKey != null) {
            view.apply(
                    true,
                    id,
                    storedKey(id, KeyState.DENIED, deniedKey),
                    denied.exists() ? denied.version() + 1 : 0,
                    zxid.get());
        }
        if (to == null) {
            return Optional.of(offerOf(decision, view.entry(id), false));
        }
        view.apply(
                false, id, storedKey(id, to, offered).as(kind), current == null ? 0 : main.version() + 1, zxid.get());
        return Optional.of(offerOf(decision, view.entry(id), true));
    }

    private static Offer offerOf(KeyDecision decision, ZkKeyView.Entry entry, boolean same) {
        return entry == null
                ? Offer.of(decision, null, false, () -> false)
                : Offer.of(decision, entry.key(), same, entry::current);
    }

    // ---------------------------------------------------------------- a minion's key rotation

    /**
     * One versioned transaction: the id's znode to the new key, the fingerprint records moved from the old key to the
     * new one, the old key added to {@code /retired/<id>}, the audit event. Without a writable cluster nothing is
     * written and the rotation is refused "try later" (the minion keeps its old key).
     */
    @Override
    public RotationDecision rotate(
            String id, RSAPublicKey oldKey, RSAPublicKey newKey, KeyRotationPolicy policy, String actor) {
        KeyStore.checkRotation(id, oldKey, newKey, policy, actor);
        ensureOpen();
        String newFingerprint = Fingerprints.of(newKey);
        if (policy == KeyRotationPolicy.PENDING) {
            // master.yaml refuses pending with cluster; never rotate without the admin it asks for.
            return new RotationDecision.Refused(
                    id, newFingerprint, "key_rotation: pending is not available with a" + " cluster");
        }
        ClusterHealth now = awaitWritable();
        if (!now.writable()) {
            return new RotationDecision.Refused(id, newFingerprint, "not recorded: " + now.describe() + "; try later");
        }
        try {
            for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
                Optional<RotationDecision> done = tryRotate(id, oldKey, newKey, policy, actor, attempt == 0);
                if (done.isPresent()) {
                    return done.get();
                }
            }
            throw new UncheckedIOException(new IOException(id + ": lost " + MAX_ATTEMPTS + " races in a row"));
        } catch (KeeperException e) {
            // A connection lost while the transaction was sent may have committed it: no refusal (the minion would
            // drop a key the cluster may hold now); the caller leaves the request unanswered and the minion asks
            // again, answered from what the cluster holds then.
            throw new UncheckedIOException(
                    "cluster key store: "
                            + (connectionProblem(e)
                                    ? "whether the rotation of "
                                            + id + " was recorded is not known ("
                                            + e.code()
                                                    .name()
                                                    .toLowerCase(Locale.ROOT)
                                                    .replace('_', ' ')
                                            + ")"
                                    : "cannot rotate the key of " + id + ": " + e.getMessage()),
                    new IOException(e));
        }
    }

    /**
     * The key of {@code main}, the id's znode as read: this master's view's when the view holds that very version of
     * the znode (the same last-modifying zxid and version), which was decoded and checked when the view read it, else
     * decoded and checked now (a znode the view has not heard yet, or one it refused).
     */
    private StoredKey keyOf(String id, ZkWrites.Read main) throws KeeperException {
        ZkKeyView.Entry known = view.entry(id);
        if (known != null
                && known.key() != null
                && main.exists()
                && known.zxid() == main.zxid()
                && known.version() == main.version()) {
            return known.key();
        }
        rotationKeyReads.incrementAndGet();
        return main.key(id);
    }

    /** How many rotations read and checked the id's key from its znode, not from the view (a test's view). */
    long rotationKeyReads() {
        return rotationKeyReads.get();
    }

    /** One optimistic attempt; empty when another master changed the id or a fingerprint record meanwhile. */
    private Optional<RotationDecision> tryRotate(
            String id, RSAPublicKey oldKey, RSAPublicKey newKey, KeyRotationPolicy policy, String actor, boolean first)
            throws KeeperException {
        ZkWrites.Read main = read(ZkRecords.keyPath(id));
        StoredKey current = keyOf(id, main);
        ZkWrites.Read retired = read(ZkRecords.retiredPath(id));
        List<String> retiredKeys = RetiredKeys.decode(retired.data());
        String newFingerprint = Fingerprints.of(newKey);
        ZkFingerprints.Changes owners = new ZkFingerprints.Changes(this, id, first);
        KeyTransitions.RotationPlan plan = KeyTransitions.planRotation(
                currentOf(current, oldKey),
                currentOf(current, newKey),
                policy,
                owners.sameKeyAs(newFingerprint),
                retiredKeys.contains(newFingerprint));
        RotationDecision decision = plan.decision(id, Fingerprints.of(oldKey), newFingerprint);
        if (!plan.rotates()) {
            return Optional.of(decision);
        }
        ZkWrites.Transaction tx = writes.begin();
        tx.setData(ZkRecords.keyPath(id), main.version(), ZkRecords.encodeKey(KeyState.ACCEPTED, newKey));
        owners.remove(current.fingerprint(), ZkFingerprints.keySlot(id))
                .add(newFingerprint, ZkFingerprints.keySlot(id));
        owners.writeTo(tx);
        byte[] record = RetiredKeys.adding(retiredKeys, current.fingerprint());
        if (retired.exists()) {
            tx.setData(ZkRecords.retiredPath(id), retired.version(), record);
        } else {
            tx.create(ZkRecords.retiredPath(id), record);
        }
        tx.audit(KeyStore.rotationEvent(id, actor, (RotationDecision.Rotated) decision));
        Optional<Long> zxid = tx.commit();
        if (zxid.isEmpty()) {
            return Optional.empty();
        }
        view.apply(false, id, storedKey(id, KeyState.ACCEPTED, newKey), main.version() + 1, zxid.get());
        return Optional.of(decision);
    }

    // ---------------------------------------------------------------- rotations admins ask for

    /** In {@code /asked}, a transaction per batch of ids ({@link ZkRotationAsks}), decided as the file store does. */
    @Override
    public List<AdminResult> askRotation(List<String> ids, String actor) {
        ensureOpen();
        return asks.ask(ids, actor);
    }

    @Override
    public Map<String, RotationAsks.Ask> rotationAsks() {
        ensureOpen();
        return asks.all();
    }

    /** From memory: the asks as this master's watch has them, against its view's accepted key. */
    @Override
    public Optional<String> rotationAsked(String id) {
        ZkKeyView.Entry entry = view.entry(id);
        if (entry == null || entry.key().state() != KeyState.ACCEPTED) {
            return Optional.empty();
        }
        return asks.of(id)
                .filter(ask -> ask.outstandingFor(entry.key().fingerprint()))
                .map(RotationAsks.Ask::fingerprint);
    }

    // ---------------------------------------------------------------- the master key

    /**
     * {@code brine-key --rotate-master-key} on a master host of the cluster: rotates the masters' one key in {@code
     * /master_key} ({@link ZkMasterKeys}), starting from {@code installed} (this host's {@code master.pem}); every
     * master takes it at its watch. Refused, with nothing changed, without a writable cluster.
     */
    public MasterKeyRotation.Rotated rotateMasterKey(
            KeyPair installed,
            int keysize,
            Duration grace,
            int keep,
            Optional<PrivateKey> signingKey,
            String actor,
            Clock clock)
            throws IOException, KeyStoreException {
        return masterKeyChange(
                () -> ZkMasterKeys.rotate(writes, installed, keysize, grace, keep, signingKey, actor, clock));
    }

    /**
     * The first step of a cluster's rotation signed offline ({@link ZkMasterKeys#prepare}): the new key pending in
     * {@code /master_key}, signed by the key in force, which {@code installed} (a master host's) leads to.
     *
     * @throws OutcomeUnknownException when the connection was lost while the transaction was sent
     */
    public OfflineMasterSigning.Request prepareMasterKeyRotation(
            KeyPair installed, int keysize, Duration grace, String actor, Clock clock)
            throws IOException, KeyStoreException {
        return masterKeyChange(() -> ZkMasterKeys.prepare(writes, installed, keysize, grace, actor, clock));
    }

    /**
     * The last step ({@link ZkMasterKeys#completePrepared}): checks {@code signature} and puts the prepared key in
     * force on every master, with Salt's {@code pub_sig} of it.
     *
     * @throws OutcomeUnknownException when the connection was lost while the transaction was sent
     */
    public MasterKeyRotation.Rotated completeMasterKeyRotation(
            KeyPair installed,
            OfflineMasterSigning.Signature signature,
            RSAPublicKey signingPub,
            int keep,
            String actor,
            Clock clock)
            throws IOException, KeyStoreException {
        return masterKeyChange(
                () -> ZkMasterKeys.completePrepared(writes, installed, signature, signingPub, keep, actor, clock));
    }

    /** Drops the prepared rotation ({@link ZkMasterKeys#cancel}). */
    public Optional<OfflineMasterSigning.Request> cancelPreparedMasterKeyRotation(String actor)
            throws IOException, KeyStoreException {
        return masterKeyChange(() -> ZkMasterKeys.cancel(writes, actor));
    }

    /**
     * Keeps Salt's {@code pub_sig} of the cluster's key in force ({@link ZkMasterKeys#installSaltSignature}); every
     * master sends it once it verifies against its own {@code master_sign.pub}. Returns the key in force.
     */
    public RSAPublicKey installMasterKeySignature(
            RSAPublicKey installed, OfflineMasterSigning.Signature signature, RSAPublicKey signingPub, String actor)
            throws IOException, KeyStoreException {
        return masterKeyChange(
                () -> ZkMasterKeys.installSaltSignature(writes, installed, signature, signingPub, actor));
    }

    @FunctionalInterface
    private interface MasterKeyWrite<T> {
        T write() throws KeeperException, KeyStoreException;
    }

    /**
     * One change of {@code /master_key}, on a writable cluster: a connection lost while its transaction was sent may
     * have committed it, which the caller must say ({@link OutcomeUnknownException}); any other failure changed
     * nothing.
     */
    private <T> T masterKeyChange(MasterKeyWrite<T> change) throws IOException, KeyStoreException {
        ensureOpen();
        ClusterHealth now = awaitWritable();
        if (!now.writable()) {
            throw new IOException("the cluster cannot be written: " + now.describe());
        }
        try {
            return change.write();
        } catch (KeeperException e) {
            if (connectionProblem(e)) {
                throw new OutcomeUnknownException(
                        "the connection to ZooKeeper was lost while the change was sent ("
                                + e.code().name().toLowerCase(Locale.ROOT).replace('_', ' ') + ")",
                        e);
            }
            throw new IOException("ZooKeeper: " + e.getMessage(), e);
        }
    }

    // ---------------------------------------------------------------- admin operations

    @Override
    public AdminResult accept(String id, KeyState from, String expectedFingerprint, String actor) {
        requireOneOf(from, KeyState.PENDING, KeyState.REJECTED, KeyState.DENIED);
        return admin().operation(id, from, KeyState.ACCEPTED, expectedFingerprint, actor);
    }

    @Override
    public AdminResult reject(String id, KeyState from, String expectedFingerprint, String actor) {
        requireOneOf(from, KeyState.PENDING, KeyState.ACCEPTED, KeyState.DENIED);
        return admin().operation(id, from, KeyState.REJECTED, expectedFingerprint, actor);
    }

    @Override
    public AdminResult reject(String id, String expectedFingerprint, String actor) {
        MinionIds.requireValid(id);
        ZkKeyView.Entry entry = view.entry(id);
        KeyState from =
                entry != null && entry.key().state() == KeyState.ACCEPTED ? KeyState.ACCEPTED : KeyState.PENDING;
        AdminResult result = reject(id, from, expectedFingerprint, actor);
        if (result.status() == Status.NOT_FOUND) {
            result = reject(
                    id, from == KeyState.ACCEPTED ? KeyState.PENDING : KeyState.ACCEPTED, expectedFingerprint, actor);
        }
        return result;
    }

    @Override
    public AdminResult delete(String id, String actor) {
        MinionIds.requireValid(id);
        AdminResult main =
                new AdminResult(id, Status.NOT_FOUND, Optional.empty(), Optional.empty(), null, id + ": no key");
        for (KeyState state : List.of(KeyState.REJECTED, KeyState.ACCEPTED, KeyState.PENDING)) {
            AdminResult result = delete(id, state, null, actor);
            if (result.status() != Status.NOT_FOUND) {
                main = result;
                break;
            }
        }
        AdminResult denied = delete(id, KeyState.DENIED, null, actor);
        return main.status() == Status.NOT_FOUND && denied.status() != Status.NOT_FOUND ? denied : main;
    }

    @Override
    public AdminResult delete(String id, KeyState from, String expectedFingerprint, String actor) {
        Objects.requireNonNull(from, "from");
        return admin().operation(id, from, null, expectedFingerprint, actor);
    }

    private ZkAdminOperations admin() {
        ensureOpen();
        return new ZkAdminOperations(this, maxMinions);
    }

    // ---------------------------------------------------------------- rotation requests, listeners

    @Override
    public long requestRotation(String actor) {
        ensureOpen();
        ClusterHealth now = awaitWritable();
        if (!now.writable()) {
            throw new UncheckedIOException(new IOException("cannot record the rotation request in the cluster: "
                    + now.describe() + "; nothing changed, try again when it is back"));
        }
        try {
            for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
                ZkWrites.Read read = read(ZkRecords.ROTATE);
                long count = read.count() + 1;
                ZkWrites.Transaction tx = writes.begin();
                tx.setData(
                        ZkRecords.ROTATE, read.version(), Long.toString(count).getBytes(StandardCharsets.US_ASCII));
                tx.audit(AuditEvent.builder("rotation-requested", actor)
                        .reason("request " + count)
                        .build());
                if (tx.commit().isPresent()) {
                    return count;
                }
            }
            throw new IOException("lost " + MAX_ATTEMPTS + " races in a row");
        } catch (IOException | KeeperException e) {
            throw new UncheckedIOException(
                    "cannot record the rotation request in the cluster: " + e.getMessage(),
                    e instanceof IOException io ? io : new IOException(e));
        }
    }

    @Override
    public long rotationRequests() {
        if (!health().writable()) {
            return -1; // polled: never wait on a connection that is not there
        }
        try {
            return read(ZkRecords.ROTATE).count();
        } catch (KeeperException | RuntimeException e) {
            return -1;
        }
    }

    @Override
    public AutoCloseable addListener(KeyChangeListener listener) {
        return view.addListener(listener);
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        connection.close();
        caches.forEach(CuratorCache::close);
        // The keys accepted since the start are not checked again at the next one (the one after a crash checks them).
        checked.save(view.all().values().stream()
                .flatMap(List::stream)
                .map(StoredKey::key)
                .toList());
        asks.close();
        view.close();
        if (alsoClose != null) {
            try {
                alsoClose.close();
            } catch (Exception e) {
                log.debug("Closing the cluster connection: {}", e.toString());
            }
        }
    }

    @Override
    public String toString() {
        return "ZkKeyStore[" + client.getZookeeperClient().getCurrentConnectionString() + "/" + client.getNamespace()
                + "]";
    }

    // ---------------------------------------------------------------- shared with ZkAdminOperations

    ZkKeyView view() {
        return view;
    }

    CuratorFramework client() {
        return client;
    }

    void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the key store is closed");
        }
    }

    ZkWrites.Read read(String path) throws KeeperException {
        return writes.read(path);
    }

    ZkWrites writes() {
        return writes;
    }

    ZkRotationAsks asks() {
        return asks;
    }

    static StoredKey storedKey(String id, KeyState state, RSAPublicKey key) {
        return new StoredKey(id, state, key, Fingerprints.of(key));
    }

    /** What the id holds for {@link KeyTransitions#plan}, from its key's znode (null: none). */
    private static Current currentOf(StoredKey stored, RSAPublicKey offered) {
        return stored == null ? Current.NONE : Current.of(lookupOf(stored, offered), stored.kind());
    }

    /** The store's lookup; a "denied" record where /keys belongs (never written so) counts as rejected. */
    private static KeyLookup lookupOf(StoredKey stored, RSAPublicKey offered) {
        return stored.state() == KeyState.DENIED
                ? KeyLookup.REJECTED
                : KeyLookup.of(stored.state(), stored.key(), offered);
    }

    private static void requireOneOf(KeyState state, KeyState... allowed) {
        if (!Arrays.asList(allowed).contains(state)) {
            throw new IllegalArgumentException("cannot start from " + state + "; allowed: " + Arrays.toString(allowed));
        }
    }
}

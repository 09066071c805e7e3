// Over 400 lines: the master's offer and its locked write path belong together (scan, writes, admin operations are
// split out).
package io.brine.store.keys;

import io.brine.daemon.CrashPoints;
import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.store.audit.AuditEvent;
import io.brine.store.keys.KeyDirectory.DiskEntry;
import io.brine.store.keys.KeyTransitions.Current;
import io.brine.store.keys.KeyTransitions.Limits;
import io.brine.store.keys.KeyTransitions.Outcome;
import io.brine.store.keys.KeyTransitions.Plan;
import io.brine.store.keys.Snapshot.Entry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The key store in Salt's pki dir layout, safe against crashes and against other processes (brine-key) writing at
 * the same time. This class answers reads from memory and decides offers; its parts do the rest:
 * {@link KeyDirectory} reads the files (scan, parse, diff), {@link StoreLock} is the lock every writer shares,
 * {@link KeyWrites} keeps the snapshot and makes every change, {@link AdminOperations} judges admins' moves,
 * {@link KeyWatcher} polls for other writers' changes and tells listeners, {@link RotationRequests} is the
 * {@code .rotate} counter, {@link MasterKeys} the master's key pair.
 *
 * <ul>
 * <li>Every write holds the advisory lock {@code pki_dir/.lock} and first catches up with what other processes
 * changed; it then writes with {@link AtomicFiles}. Moving a key between states is one rename(2), so at every
 * instant an id is in exactly one of {@code minions_pre/}, {@code minions/} and {@code minions_rejected/}.</li>
 * <li>Reads use an in-memory {@link Snapshot} that a poll refreshes when the lock file's change counter or a state
 * directory changes, and rescans in full every {@code rescanInterval} (on the injected ticker), reading only the
 * files whose {@link Snapshot.FileStamp} changed: a file edited by hand in place is heard then.</li>
 * <li>Files whose name is not a valid id, whose content is not a valid public key, and links are reported in
 * {@link #list()} and never acted on.</li>
 * </ul>
 */
@SuppressWarnings("try") // try (StoreLock.Held held = lock.acquire()) holds the lock for the block; held is unused
public final class FileKeyStore implements KeyStore {

    /** The file of {@link #requestRotation}'s counter, in the pki dir. */
    public static final String ROTATE_FILE = RotationRequests.FILE_NAME;

    private static final Logger log = LoggerFactory.getLogger(FileKeyStore.class);

    private final KeyStoreOptions options;
    private final KeyDirectory directory;
    private final StoreLock lock;
    /** Empty when the store was opened without the master key (brine-key). */
    private final Optional<KeyPair> masterKeyPair;

    private final KeyWatcher watcher;
    private final KeyWrites writes;
    private final AdminOperations admin;
    private final RotationRequests rotations;
    private final RetiredKeys retired;
    private final PendingRotations waiting;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Queue<Queued> queued = new ConcurrentLinkedQueue<>();
    private final RotationCommits rotating;

    private FileKeyStore(
            KeyStoreOptions options,
            KeyDirectory directory,
            StoreLock lock,
            Optional<KeyPair> masterKeyPair,
            Snapshot initial,
            KeyWrites.DirectorySync directorySync) {
        this.options = options;
        this.directory = directory;
        this.lock = lock;
        this.masterKeyPair = masterKeyPair;
        this.watcher = new KeyWatcher("brine-keys-" + directory.pkiDir().getFileName());
        this.writes =
                new KeyWrites(directory, lock, options.auditLog(), watcher, options.ticker(), initial, directorySync);
        this.admin = new AdminOperations(directory, lock, writes, options.maxMinions());
        this.rotations = new RotationRequests(directory.pkiDir(), lock, options.auditLog());
        this.retired = new RetiredKeys(directory.pkiDir());
        this.waiting = new PendingRotations(directory.pkiDir());
        this.rotating = new RotationCommits(directory, lock, writes, retired, waiting);
    }

    /**
     * Opens the store: creates missing state directories (0700), removes temp files left by a crash, loads or
     * creates the master key pair (when {@link KeyStoreOptions#masterKey()}), and reads every key.
     *
     * @throws KeyStoreException for an unsafe or unusable pki dir (the message names the path and the fix)
     */
    public static FileKeyStore open(KeyStoreOptions options) throws IOException, KeyStoreException {
        return open(options, AtomicFiles::forceDirectory);
    }

    /** {@link #open(KeyStoreOptions)} with the group commit's directory force replaced (a test's hook). */
    static FileKeyStore open(KeyStoreOptions options, KeyWrites.DirectorySync directorySync)
            throws IOException, KeyStoreException {
        KeyDirectory directory = KeyDirectory.of(options.pkiDir(), options.createPkiDir());
        Path lockFile = directory.pkiDir().resolve(StoreLock.FILE_NAME);
        Optional<PosixFileAttributes> lockAttributes = AtomicFiles.attributes(lockFile);
        if (lockAttributes.isPresent() && !lockAttributes.get().isRegularFile()) {
            throw new KeyStoreException(lockFile + " is not a regular file"
                    + (lockAttributes.get().isSymbolicLink() ? " (a symbolic link)" : ""));
        }
        StoreLock lock = StoreLock.open(directory.pkiDir());
        try (StoreLock.Held held = lock.acquire()) {
            directory.prepareStateDirectories();
            Optional<KeyPair> pair = options.masterKey()
                    ? Optional.of(MasterKeys.loadOrCreate(directory.pkiDir(), options.keysize()))
                    : Optional.empty();
            if (pair.isPresent()) {
                directory.useChecked(CheckedKeys.open(directory.pkiDir()));
            }
            Snapshot initial = directory.scan(
                    lock.generation(),
                    directory.stamps(),
                    Snapshot.EMPTY,
                    options.ticker().read());
            FileKeyStore store = new FileKeyStore(options, directory, lock, pair, initial, directorySync);
            directory.checked().saveChecked();
            directory.asks().reloadIfChanged();
            store.watcher.pollEvery(options.pollInterval(), store::poll);
            return store;
        } catch (IOException | KeyStoreException | RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    /** Every valid key the snapshot holds, denied keys too: each passed every check when it entered the store. */
    private static List<RSAPublicKey> storedKeys(Snapshot snapshot) {
        List<RSAPublicKey> keys = new ArrayList<>(snapshot.keys.size() + snapshot.denied.size());
        snapshot.keys.values().forEach(entry -> keys.add(entry.key().key()));
        snapshot.denied.values().forEach(entry -> keys.add(entry.key().key()));
        return keys;
    }

    @Override
    public Path pkiDir() {
        return directory.pkiDir();
    }

    /** How many key files this store read and parsed (a test's view). */
    long filesRead() {
        return directory.filesRead();
    }

    /** The keys whose small-factor check this store's scans skip (a test's view). */
    CheckedKeys checkedKeys() {
        return directory.checked();
    }

    @Override
    public KeyPair masterKeyPair() {
        return masterKeyPair.orElseThrow(
                () -> new IllegalStateException("the key store was opened without the master key"));
    }

    /** The master's public key, read from {@code master.pub} when the store was opened without the key pair. */
    @Override
    public Optional<RSAPublicKey> masterPublicKey() throws IOException, KeyStoreException {
        if (masterKeyPair.isPresent()) {
            return Optional.of((RSAPublicKey) masterKeyPair.get().getPublic());
        }
        return MasterKeys.readPublicIn(pkiDir());
    }

    /**
     * Rotates the master key pair under the store lock (PROTOCOL.md 6.4; {@link MasterKeyRotation#rotate}) and
     * writes the audit line {@code master-key-rotated} with both fingerprints.
     */
    public MasterKeyRotation.Rotated rotateMasterKey(
            int keysize, Duration grace, int keep, Optional<PrivateKey> signingKey, Clock clock)
            throws IOException, KeyStoreException {
        MasterKeyRotation.Rotated rotated;
        try (StoreLock.Held held = lock.acquire()) {
            rotated = MasterKeyRotation.rotate(pkiDir(), keysize, grace, keep, signingKey, clock);
        }
        options.auditLog().record(rotated.auditEvent("brine-key"));
        return rotated;
    }

    /** {@link OfflineMasterSigning#prepare} under the store lock, audited. */
    public OfflineMasterSigning.Request prepareMasterKeyRotation(int keysize, Duration grace, Clock clock)
            throws IOException, KeyStoreException {
        OfflineMasterSigning.Request request;
        try (StoreLock.Held held = lock.acquire()) {
            request = OfflineMasterSigning.prepare(pkiDir(), keysize, grace, clock);
        }
        options.auditLog().record(OfflineMasterSigning.prepared(request, "brine-key"));
        return request;
    }

    /** {@link OfflineMasterSigning#complete} under the store lock, audited as a rotation. */
    public MasterKeyRotation.Rotated completeMasterKeyRotation(
            OfflineMasterSigning.Signature signature, RSAPublicKey signingPub, int keep, Clock clock)
            throws IOException, KeyStoreException {
        MasterKeyRotation.Rotated rotated;
        try (StoreLock.Held held = lock.acquire()) {
            rotated = OfflineMasterSigning.complete(pkiDir(), signature, signingPub, keep, clock);
        }
        options.auditLog()
                .record(AuditEvent.builder("master-key-rotated", "brine-key")
                        .from(Fingerprints.of(rotated.previous()))
                        .to(Fingerprints.of(rotated.next()))
                        .reason("signed offline by the master signing key; the previous key signs publications until "
                                + Instant.ofEpochMilli(rotated.record().graceUntilMs()))
                        .build());
        return rotated;
    }

    /** {@link OfflineMasterSigning#prepareKeySignature} under the store lock. */
    public OfflineMasterSigning.KeyRequest prepareMasterKeySignature(Clock clock)
            throws IOException, KeyStoreException {
        try (StoreLock.Held held = lock.acquire()) {
            return OfflineMasterSigning.prepareKeySignature(pkiDir(), clock);
        }
    }

    /** {@link OfflineMasterSigning#installKeySignature} under the store lock, audited. */
    public RSAPublicKey installMasterKeySignature(OfflineMasterSigning.Signature signature, RSAPublicKey signingPub)
            throws IOException, KeyStoreException {
        RSAPublicKey inForce;
        try (StoreLock.Held held = lock.acquire()) {
            inForce = OfflineMasterSigning.installKeySignature(pkiDir(), signature, signingPub);
        }
        options.auditLog().record(OfflineMasterSigning.keySignatureInstalled(inForce, signingPub, "brine-key"));
        return inForce;
    }

    /** {@link OfflineMasterSigning#cancel} under the store lock, audited. */
    public Optional<OfflineMasterSigning.Request> cancelPreparedMasterKeyRotation()
            throws IOException, KeyStoreException {
        Optional<OfflineMasterSigning.Request> request;
        try (StoreLock.Held held = lock.acquire()) {
            request = OfflineMasterSigning.cancel(pkiDir());
        }
        options.auditLog().record(OfflineMasterSigning.cancelled(request, "brine-key"));
        return request;
    }

    // ---------------------------------------------------------------- reads (in memory)

    /** In memory, no disk I/O. */
    @Override
    public KeyLookup lookup(String id, RSAPublicKey offered) {
        MinionIds.requireValid(id);
        Objects.requireNonNull(offered, "offered");
        Entry entry = writes.snapshot().keys.get(id);
        return entry == null
                ? KeyLookup.UNKNOWN
                : KeyLookup.of(entry.key().state(), entry.key().key(), offered);
    }

    /** In memory. */
    @Override
    public Optional<RSAPublicKey> acceptedKey(String id) {
        MinionIds.requireValid(id);
        Entry entry = writes.snapshot().entry(KeyState.ACCEPTED, id);
        return entry == null ? Optional.empty() : Optional.of(entry.key().key());
    }

    /** In memory. */
    @Override
    public MinionKind kind(String id) {
        MinionIds.requireValid(id);
        Entry entry = writes.snapshot().keys.get(id);
        return entry == null ? MinionKind.BRINE : entry.key().kind();
    }

    /** In memory. */
    @Override
    public Set<String> acceptedIds() {
        return writes.snapshot().acceptedIds();
    }

    /**
     * Catches up first if another process changed the store since the last poll (eight bytes read and four
     * directories stat'ed; a rescan only after a change).
     */
    @Override
    public KeyListing list() {
        ensureOpen();
        try {
            if (writes.changedOutside(writes.snapshot())) {
                try (StoreLock.Held held = lock.acquire()) {
                    writes.syncLocked();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + pkiDir() + ": " + e.getMessage(), e);
        }
        Snapshot s = writes.snapshot();
        Map<KeyState, List<StoredKey>> keys = new EnumMap<>(KeyState.class);
        for (Entry entry : s.keys.values()) {
            keys.computeIfAbsent(entry.key().state(), k -> new ArrayList<>()).add(entry.key());
        }
        keys.put(KeyState.DENIED, s.denied.values().stream().map(Entry::key).toList());
        return new KeyListing(keys, s.problems);
    }

    @Override
    public void refresh() throws IOException {
        ensureOpen();
        try (StoreLock.Held held = lock.acquire()) {
            writes.rescanLocked();
        }
    }

    // ---------------------------------------------------------------- the master's offer

    /**
     * Steady states (accepted same key, rejected id, pending same key without a verdict, the same denied key again)
     * are answered from memory; every write happens under the lock after re-reading the id's files. The policies are
     * asked before the lock is taken. What to answer and write is {@link KeyTransitions#plan}'s, here and under the
     * lock; this class reads and commits.
     */
    @Override
    public Offer offer(String id, RSAPublicKey offered, MinionKind kind, Policies policies) {
        KeyStore.checkOffer(id, offered, policies);
        Objects.requireNonNull(kind, "kind");
        ensureOpen();
        Snapshot s = writes.snapshot();
        Entry entry = s.keys.get(id);
        // An id this snapshot does not hold yet is decided again under the lock: the kind is written with the key.
        Current viewed = entry == null
                ? Current.NONE
                : Current.of(
                        KeyLookup.of(entry.key().state(), entry.key().key(), offered),
                        entry.key().kind());
        if (KeyTransitions.checksFactors(viewed, kind)) {
            KeyStore.checkFactors(id, offered);
        }
        PolicyVerdict verdict = KeyTransitions.asksPolicies(viewed, kind)
                ? Objects.requireNonNull(policies.decide(viewed.lookup()), "verdict")
                : PolicyVerdict.NONE;
        Entry denied = s.denied.get(id);
        Plan fast = KeyTransitions.fromView(viewed, kind, verdict, denied == null ? null : denied.key(), offered);
        if (fast.write() == KeyTransitions.Write.NONE) {
            // Named by a stored copy's fingerprint when it is the offered key: no hash on a steady state's answer.
            return Offer.of(
                    fast.decision(
                            id, offered, entry == null ? null : entry.key(), denied == null ? null : denied.key()),
                    entry,
                    fast.offeredKeyHeld());
        }
        Queued mine = new Queued(new Asked(id, offered, kind, verdict, viewed.lookup()));
        GroupCommit.join(queued, mine, lock, this::commitQueuedLocked, e -> failure(id, e));
        return mine.offer;
    }

    private UncheckedIOException failure(String id, IOException e) {
        return new UncheckedIOException(
                "key store " + pkiDir() + ": cannot record the key of " + id + ": " + e.getMessage(), e);
    }

    /**
     * Group commit of concurrent offers that write: whoever takes the lock decides and writes every offer queued by
     * then, makes them durable with one force of each directory, the counter and the audit log
     * ({@link KeyWrites#flushLocked}), and only then marks them done; the others, when they get the lock, find
     * their answer. While one batch waits on the disk, the next one queues.
     */
    private void commitQueuedLocked() {
        List<Queued> batch = new ArrayList<>();
        for (Queued next = queued.poll(); next != null; next = queued.poll()) {
            batch.add(next);
        }
        writes.beginBatchLocked();
        try {
            for (Queued one : batch) {
                try {
                    Asked asked = one.asked;
                    one.offer =
                            offerLocked(asked.id(), asked.offered(), asked.kind(), asked.verdict(), asked.askedAbout());
                } catch (IOException | RuntimeException e) {
                    one.failure = e;
                }
            }
            writes.flushLocked();
        } catch (IOException | RuntimeException | Error e) {
            // Not durable, or not known to be: nobody of the batch is answered as if it were.
            for (Queued one : batch) {
                one.offer = null;
                one.failure = one.failure != null ? one.failure : e;
            }
            if (e instanceof Error error) {
                throw error;
            }
        } finally {
            writes.endBatchLocked();
            for (Queued one : batch) {
                one.done = true;
            }
        }
    }

    /** The offers waiting for a group commit to take them (tests). */
    int queuedOffers() {
        return queued.size();
    }

    /** An offer that writes, as decided before the lock: the verdict asked about {@code askedAbout}. */
    private record Asked(
            String id, RSAPublicKey offered, MinionKind kind, PolicyVerdict verdict, KeyLookup askedAbout) {}

    /** An offer waiting for the lock; its answer is written and read under the lock. */
    private static final class Queued extends GroupCommit.Request {
        final Asked asked;
        Offer offer;

        Queued(Asked asked) {
            this.asked = asked;
        }
    }

    /** Reads the id's files under the lock and commits {@link KeyTransitions#plan}'s writes. */
    private Offer offerLocked(
            String id, RSAPublicKey offered, MinionKind kind, PolicyVerdict asked, KeyLookup askedAbout)
            throws IOException {
        writes.syncLocked();
        Optional<DiskEntry> current = directory.readMain(id);
        // The kind as the disk holds it, under the lock every writer takes: a brine offer and a Salt offer of one new
        // key cannot both file it, and a key filed by one is never re-marked by the other.
        Current now = current.isEmpty()
                ? Current.NONE
                : current.get().key() == null
                        ? Current.unreadable(current.get().state(), directory.kindOf(id))
                        : Current.of(
                                KeyLookup.of(
                                        current.get().state(),
                                        current.get().key().key(),
                                        offered),
                                directory.kindOf(id));
        // The batch's keys count: a limit or the one-key-one-id rule holds across the offers of one group commit.
        Snapshot s = writes.workingLocked();
        Limits limits = new Limits(
                s.count(KeyState.PENDING),
                options.maxPending(),
                s.count(KeyState.ACCEPTED),
                options.maxMinions(),
                s.count(KeyState.REJECTED),
                options.maxRejected());
        String fingerprint = Fingerprints.of(offered);
        List<String> sharing = KeyTransitions.readsSharing(now, kind) ? s.otherIds(fingerprint, id) : List.of();
        boolean retired =
                KeyTransitions.readsRetired(now, kind) && this.retired.of(id).contains(fingerprint);
        Plan plan = KeyTransitions.plan(now, kind, asked, askedAbout, sharing, limits, retired);
        if (plan.heldBy() != null) {
            return Offer.untracked(plan.decision(id, fingerprint), current.get().key(), false);
        }
        Outcome outcome = plan.outcome();
        KeyDecision decision = plan.decision(id, fingerprint);
        String reason = outcome.reason();
        Entry written = switch (outcome.write()) {
            case NONE -> null;
            case NEW_PENDING -> writes.createLocked(id, KeyState.PENDING, offered, kind, MASTER_ACTOR, reason);
            case NEW_ACCEPTED -> writes.createLocked(id, KeyState.ACCEPTED, offered, kind, MASTER_ACTOR, reason);
            case NEW_REJECTED -> writes.createLocked(id, KeyState.REJECTED, offered, kind, MASTER_ACTOR, reason);
            case PENDING_TO_ACCEPTED ->
                writes.moveLocked(current.orElseThrow(), KeyState.ACCEPTED, MASTER_ACTOR, reason);
            case PENDING_TO_REJECTED ->
                writes.moveLocked(current.orElseThrow(), KeyState.REJECTED, MASTER_ACTOR, reason);
            case DENIED -> {
                writes.denyLocked(id, offered, MASTER_ACTOR, reason);
                yield null;
            }
            case REPLACE_PENDING -> {
                DiskEntry squatter = current.orElseThrow();
                writes.denyLocked(id, squatter.key().key(), MASTER_ACTOR, "pending key displaced: " + reason);
                writes.deleteLocked(squatter, MASTER_ACTOR, "pending key displaced: " + reason);
                yield writes.createLocked(id, KeyState.ACCEPTED, offered, kind, MASTER_ACTOR, reason);
            }
        };
        if (written != null) {
            return Offer.of(decision, written, true);
        }
        boolean same = plan.offeredKeyHeld();
        if (current.isEmpty()) {
            return Offer.of(decision, null, false);
        }
        StoredKey onDisk = current.get().key();
        if (onDisk == null) {
            return Offer.untracked(decision, null, false);
        }
        // The decision rests on the disk; the offer's tenure on the snapshot's entry, which a hand edit in place
        // can leave behind until a rescan.
        Entry entry = writes.workingLocked().keys.get(id);
        if (!holds(entry, onDisk)) {
            writes.rescanLocked();
            entry = writes.snapshot().keys.get(id);
        }
        return holds(entry, onDisk) ? Offer.of(decision, entry, same) : Offer.untracked(decision, onDisk, same);
    }

    private static boolean holds(Entry entry, StoredKey onDisk) {
        return entry != null
                && entry.key().state() == onDisk.state()
                && KeyLookup.sameKey(entry.key().key(), onDisk.key());
    }

    // ---------------------------------------------------------------- a minion's key rotation

    /** Decided and written under the lock as a group commit of the rotations asked meanwhile ({@link RotationCommits}). */
    @Override
    public RotationDecision rotate(
            String id, RSAPublicKey oldKey, RSAPublicKey newKey, KeyRotationPolicy policy, String actor) {
        KeyStore.checkRotation(id, oldKey, newKey, policy, actor);
        ensureOpen();
        return rotating.rotate(id, oldKey, newKey, policy, actor);
    }

    /** The rotations waiting for a group commit to take them (tests). */
    int queuedRotations() {
        return rotating.queued();
    }

    /** From memory: the snapshot's stamps, as of its last write, poll or sync. */
    @Override
    public Optional<Instant> oldestAcceptedSince() {
        Instant oldest = null;
        for (Entry entry : writes.snapshot().keys.values()) {
            if (entry.key().state() == KeyState.ACCEPTED) {
                Instant since = entry.stamp().modified().toInstant();
                oldest = oldest == null || since.isBefore(oldest) ? since : oldest;
            }
        }
        return Optional.ofNullable(oldest);
    }

    @Override
    public Map<String, String> pendingRotations() {
        try {
            Map<String, String> accepted = new HashMap<>();
            for (StoredKey key : list().keys(KeyState.ACCEPTED)) {
                accepted.put(key.id(), key.fingerprint());
            }
            return waiting.list(accepted);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "key store " + pkiDir() + ": cannot list the waiting key rotations: " + e.getMessage(), e);
        }
    }

    /** Decided and written under the lock: the rotation's checks again, on the id's files as read there. */
    @Override
    public AdminResult acceptRotation(String id, String expectedFingerprint, String actor) {
        return onWaitingRotation(id, expectedFingerprint, actor, true);
    }

    @Override
    public AdminResult rejectRotation(String id, String expectedFingerprint, String actor) {
        return onWaitingRotation(id, expectedFingerprint, actor, false);
    }

    private AdminResult onWaitingRotation(String id, String expectedFingerprint, String actor, boolean accept) {
        MinionIds.requireValid(id);
        Objects.requireNonNull(actor, "actor");
        String expected = Fingerprints.normalize(expectedFingerprint);
        if (expected == null) {
            throw new IllegalArgumentException(id + ": a key rotation is accepted or rejected only with the new key's"
                    + " fingerprint (32 hex bytes), as brine-key -L --long shows it");
        }
        ensureOpen();
        try (StoreLock.Held held = lock.acquire()) {
            writes.syncLocked();
            Optional<PendingRotations.Waiting> asked = waiting.of(id);
            if (asked.isEmpty()) {
                return AdminResult.of(id, AdminResult.Status.NOT_FOUND, id + ": no key rotation waits for an admin");
            }
            RSAPublicKey newKey = asked.get().newKey();
            String newFingerprint = Fingerprints.of(newKey);
            if (!newFingerprint.equals(expected)) {
                return AdminResult.of(
                        id,
                        AdminResult.Status.REFUSED,
                        id + ": the key rotation waits with the new key " + newFingerprint + ", not " + expected
                                + "; nothing changed");
            }
            Optional<DiskEntry> current = directory.readMain(id);
            StoredKey onDisk = current.map(DiskEntry::key).orElse(null);
            if (onDisk == null
                    || onDisk.state() != KeyState.ACCEPTED
                    || !onDisk.fingerprint().equals(asked.get().oldFingerprint())) {
                waiting.removeLocked(id);
                return AdminResult.of(
                        id,
                        AdminResult.Status.REFUSED,
                        id + ": the id no longer holds the accepted key"
                                + " that asked for the rotation (rejected, deleted or replaced meanwhile); the waiting rotation"
                                + " is dropped");
            }
            if (!accept) {
                retired.retireLocked(id, newFingerprint);
                waiting.removeLocked(id);
                writes.auditLocked(AuditEvent.builder("key-rotation-rejected", actor)
                        .id(id)
                        .from(KeyState.PENDING.label())
                        .to(KeyState.REJECTED.label())
                        .fingerprint(newFingerprint)
                        .reason("key rotation rejected by an admin; accepted key " + onDisk.fingerprint()
                                + " unchanged")
                        .build());
                return new AdminResult(
                        id,
                        AdminResult.Status.DONE,
                        Optional.of(KeyState.PENDING),
                        Optional.of(KeyState.REJECTED),
                        newFingerprint,
                        id + ": key rotation to " + newFingerprint + " rejected; the accepted key "
                                + onDisk.fingerprint() + " stays");
            }
            KeyTransitions.RotationPlan plan = KeyTransitions.planRotation(
                    Current.of(KeyLookup.ACCEPTED_SAME, directory.kindOf(id)),
                    Current.of(KeyLookup.of(onDisk.state(), onDisk.key(), newKey), directory.kindOf(id)),
                    KeyRotationPolicy.ALLOW,
                    writes.snapshot().otherIds(newFingerprint, id),
                    retired.of(id).contains(newFingerprint));
            if (!plan.rotates()) {
                if (!plan.already()) {
                    return AdminResult.of(
                            id,
                            AdminResult.Status.REFUSED,
                            id + ": key rotation to " + newFingerprint + " refused: " + plan.reason()
                                    + "; nothing changed");
                }
                waiting.removeLocked(id);
                return new AdminResult(
                        id,
                        AdminResult.Status.UNCHANGED,
                        Optional.of(KeyState.PENDING),
                        Optional.of(KeyState.ACCEPTED),
                        newFingerprint,
                        id + ": " + plan.reason());
            }
            RotationDecision.Rotated rotated = new RotationDecision.Rotated(
                    id, onDisk.fingerprint(), newFingerprint, "key rotation accepted by an admin");
            // The rename over minions/ID is the rotation; the waiting file after it (a crash between leaves a
            // waiting key that is the accepted one, which the next rotation or accept drops as done).
            retired.retireLocked(id, onDisk.fingerprint());
            CrashPoints.reach("master-rotation-retired");
            writes.rotateLocked(current.get(), newKey, actor, rotated);
            waiting.removeLocked(id);
            return new AdminResult(
                    id,
                    AdminResult.Status.DONE,
                    Optional.of(KeyState.PENDING),
                    Optional.of(KeyState.ACCEPTED),
                    newFingerprint,
                    id + ": key rotation to " + newFingerprint + " accepted; " + onDisk.fingerprint() + " retired");
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "key store " + pkiDir() + ": cannot change the key rotation of " + id + ": " + e.getMessage(), e);
        }
    }

    // ---------------------------------------------------------------- rotations admins ask for

    /**
     * Decided and written under the lock, on each id's files as read there; one force of the asks' directory and one of
     * the audit log. An id that cannot be read or whose ask cannot be written stops the batch: the asks written before
     * it are forced, counted and audited as a whole batch's are, and {@link IncompleteBatchException} names them asked
     * and it and the rest not asked. Keeping them, not removing them, is what can be made whole: each is a complete
     * file already renamed in place (possibly over an earlier ask, which a removal could not bring back), and their
     * removal would need the same force of the same directory.
     */
    @Override
    public List<AdminResult> askRotation(List<String> ids, String actor) {
        Objects.requireNonNull(actor, "actor");
        ids.forEach(MinionIds::requireValid);
        ensureOpen();
        RotationAsks asks = directory.asks();
        List<AdminResult> results = new ArrayList<>(ids.size());
        IOException stopped = null;
        try (StoreLock.Held held = lock.acquire()) {
            writes.syncLocked();
            Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
            List<AuditEvent> events = new ArrayList<>();
            for (String id : ids) {
                try {
                    AdminResult result = askLocked(asks, id, now);
                    if (result.status() == AdminResult.Status.DONE) {
                        events.add(KeyStore.rotationAskedEvent(id, actor, result.fingerprint()));
                    }
                    results.add(result);
                } catch (IOException e) {
                    stopped = e;
                    break;
                }
            }
            List<String> notAsked = ids.subList(results.size(), ids.size());
            if (!events.isEmpty()) {
                try {
                    // One force for the batch: a crash before it leaves each ask whole or absent, none answered asked.
                    writes.forceLocked(asks.dir());
                } catch (IOException e) {
                    List<String> written = events.stream().map(AuditEvent::id).toList();
                    throw new UncheckedIOException(new IncompleteBatchException(
                            "key store " + pkiDir() + ": the asks written cannot be made durable ("
                                    + RotationAsks.DIRECTORY
                                    + " not synced: " + e.getMessage() + ")"
                                    + (stopped == null ? "" : "; and " + stoppedAt(ids, results, stopped)),
                            e,
                            results.stream().filter(r -> !r.done()).toList(),
                            written,
                            notAsked));
                }
                try {
                    asks.bumpLocked();
                } catch (IOException e) {
                    // The asks are durable: never report them as not made. A running master rereads them at its next
                    // full rescan (rescanInterval) instead of within a second.
                    log.warn(
                            "Key store {}: {} key rotation asks made, but the counter {} could not be bumped ({}): a"
                                    + " running master reads them at its next full rescan",
                            pkiDir(),
                            events.size(),
                            RotationAsks.COUNTER,
                            e.getMessage());
                }
                writes.auditAllLocked(events);
            }
            if (stopped != null) {
                throw new UncheckedIOException(new IncompleteBatchException(
                        "key store " + pkiDir() + ": " + stoppedAt(ids, results, stopped),
                        stopped,
                        results,
                        List.of(),
                        notAsked));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "key store " + pkiDir() + ": cannot record the key rotation asks: " + e.getMessage(), e);
        } finally {
            asks.reloadIfChanged();
        }
        return results;
    }

    /** What an id's failure did to the batch: it and the ids after it were not asked. */
    private static String stoppedAt(List<String> ids, List<AdminResult> results, IOException e) {
        String id = ids.get(results.size());
        int rest = ids.size() - results.size() - 1;
        return "stopped at " + id + ", which cannot be asked (" + e.getMessage() + ")"
                + (rest == 0 ? "" : "; the " + rest + " after it were not tried");
    }

    /** Decides {@code id}'s ask on its files as read under the lock and, when DONE, writes it (not yet forced). */
    private AdminResult askLocked(RotationAsks asks, String id, Instant now) throws IOException {
        Optional<DiskEntry> current =
                directory.readMain(id, writes.workingLocked().entry(KeyState.ACCEPTED, id));
        StoredKey key = current.map(DiskEntry::key).orElse(null);
        AdminResult result = RotationAsks.decide(
                id,
                current.map(DiskEntry::state),
                key,
                key == null && current.isPresent() && current.get().state() == KeyState.ACCEPTED
                        ? KeyDirectory.relative(KeyState.ACCEPTED, id) + " "
                                + current.get().problem()
                        : null,
                directory.kindOf(id),
                key != null && key.state() == KeyState.ACCEPTED ? asks.of(id) : Optional.empty());
        if (result.status() == AdminResult.Status.DONE) {
            asks.putUnforcedLocked(id, new RotationAsks.Ask(key.fingerprint(), now));
        }
        return result;
    }

    @Override
    public Map<String, RotationAsks.Ask> rotationAsks() {
        ensureOpen();
        try {
            return directory.asks().read();
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "key store " + pkiDir() + ": cannot list the key rotation asks: " + e.getMessage(), e);
        }
    }

    /** From memory: the asks as of the last poll, against the snapshot's accepted key. */
    @Override
    public Optional<String> rotationAsked(String id) {
        Optional<RotationAsks.Ask> ask = directory.asks().cached(id);
        if (ask.isEmpty()) {
            return Optional.empty();
        }
        Entry entry = writes.snapshot().entry(KeyState.ACCEPTED, id);
        return entry != null && ask.get().outstandingFor(entry.key().fingerprint())
                ? Optional.of(ask.get().fingerprint())
                : Optional.empty();
    }

    // ---------------------------------------------------------------- admin operations

    @Override
    public AdminResult accept(String id, KeyState from, String expectedFingerprint, String actor) {
        ensureOpen();
        return admin.accept(id, from, expectedFingerprint, actor);
    }

    @Override
    public AdminResult reject(String id, KeyState from, String expectedFingerprint, String actor) {
        ensureOpen();
        return admin.reject(id, from, expectedFingerprint, actor);
    }

    @Override
    public AdminResult reject(String id, String expectedFingerprint, String actor) {
        ensureOpen();
        return admin.reject(id, expectedFingerprint, actor);
    }

    @Override
    public AdminResult delete(String id, String actor) {
        ensureOpen();
        return admin.delete(id, actor);
    }

    @Override
    public AdminResult delete(String id, KeyState from, String expectedFingerprint, String actor) {
        ensureOpen();
        return admin.delete(id, from, expectedFingerprint, actor);
    }

    // ---------------------------------------------------------------- rotation requests, listeners

    /** Bumps the counter in {@value #ROTATE_FILE}; a running master notices within a second. */
    @Override
    public long requestRotation(String actor) {
        ensureOpen();
        return rotations.request(actor);
    }

    @Override
    public long rotationRequests() {
        return rotations.count();
    }

    /**
     * Changes by other processes are heard at the next {@link #poll} (every {@code pollInterval}), or at the next
     * full rescan (every {@code rescanInterval}) for files edited by hand in place.
     */
    @Override
    public List<String> unauditedChanges() {
        return writes.drainUnaudited();
    }

    @Override
    public AutoCloseable addListener(KeyChangeListener listener) {
        return watcher.addListener(listener);
    }

    /**
     * Looks for changes made by other processes now: the watcher's thread calls this every {@code pollInterval}.
     * Costs eight bytes read and four directories stat'ed when nothing changed; when a full rescan is due on the
     * ticker, the state directories are listed, every file stat'ed, and only those whose stamp changed read.
     */
    public void poll() {
        if (closed.get()) {
            return;
        }
        directory.asks().reloadIfChanged();
        try {
            Snapshot current = writes.snapshot();
            boolean due = options.ticker().read() - current.scannedAtNanos
                    >= options.rescanInterval().toNanos();
            if (!due && !writes.changedOutside(current)) {
                return;
            }
            try (StoreLock.Held held = lock.acquire()) {
                if (due) {
                    directory.asks().reloadIfChangedOrStale();
                    writes.rescanLocked();
                } else {
                    writes.syncLocked();
                }
            }
        } catch (IOException | RuntimeException e) {
            log.warn("Key store {}: cannot look for changes: {}", pkiDir(), e.toString());
        }
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the key store is closed");
        }
    }

    /** Stops the watcher and releases the lock; the audit log is the caller's. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        watcher.close();
        // The keys accepted since the start are not checked again at the next one (the one after a crash checks them).
        try (StoreLock.Held held = lock.acquire()) {
            directory.checked().save(storedKeys(writes.snapshot()));
        } catch (IOException | RuntimeException e) {
            log.debug("Key store {}: not recording its checked keys: {}", pkiDir(), e.toString());
        }
        try {
            lock.close();
        } catch (IOException e) {
            log.debug("Closing the lock of {}: {}", pkiDir(), e.toString());
        }
    }

    @Override
    public String toString() {
        return "FileKeyStore[" + pkiDir() + "]";
    }
}

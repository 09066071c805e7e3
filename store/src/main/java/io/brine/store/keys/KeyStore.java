package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.AdminResult.Status;
import io.brine.store.keys.KeyTransitions.Limits;
import io.brine.store.keys.KeyTransitions.Outcome;
import io.brine.store.keys.Snapshot.Entry;
import io.brine.store.keys.Snapshot.FileStamp;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's key store: Salt's pki dir layout and DESIGN.md §2's transitions, safe against crashes and against
 * other processes (brine-key) writing at the same time.
 *
 * <ul>
 * <li>Every write holds the advisory lock {@code pki_dir/.lock} and first catches up with what other processes
 * changed; it then writes a temp file, forces it, and renames it into place. Moving a key between states is one
 * rename(2), so at every instant an id is in exactly one of {@code minions_pre/}, {@code minions/} and
 * {@code minions_rejected/}.</li>
 * <li>Reads ({@link #lookup}, {@link #acceptedKey}, the fast paths of {@link #offer}) use an in-memory snapshot
 * that a store-owned thread refreshes when the lock file's change counter or a state directory changes (every
 * {@code pollInterval}), and rereads in full every {@code rescanInterval}.</li>
 * <li>Files whose name is not a valid id, whose content is not a valid public key, and links are reported in
 * {@link #list()} and never acted on.</li>
 * </ul>
 */
@SuppressWarnings("try") // try (StoreLock.Held held = lock.acquire()) holds the lock for the block; held is unused
public final class KeyStore implements AutoCloseable {

    public static final String MASTER_ACTOR = "master";

    private static final Logger log = LoggerFactory.getLogger(KeyStore.class);
    /** Precedence when a hand-made copy leaves an id in two exclusive states: the most restrictive wins. */
    private static final List<KeyState> PRECEDENCE = List.of(KeyState.REJECTED, KeyState.ACCEPTED,
            KeyState.PENDING);
    private static final int MAX_KEY_BYTES = Pem.MAX_PEM_CHARS;

    private final KeyStoreOptions options;
    private final Path pkiDir;
    private final Map<KeyState, Path> dirs;
    private final StoreLock lock;
    private final KeyPair masterKeyPair;
    private final AuditLog audit;
    private final boolean ownsAudit;
    private final List<KeyChangeListener> listeners = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService executor;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Snapshot snapshot;

    private KeyStore(KeyStoreOptions options, Path pkiDir, Map<KeyState, Path> dirs, StoreLock lock,
            KeyPair masterKeyPair, AuditLog audit, boolean ownsAudit, Snapshot initial) {
        this.options = options;
        this.pkiDir = pkiDir;
        this.dirs = dirs;
        this.lock = lock;
        this.masterKeyPair = masterKeyPair;
        this.audit = audit;
        this.ownsAudit = ownsAudit;
        this.snapshot = initial;
        String name = "brine-keys-" + pkiDir.getFileName();
        this.executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        });
        if (!options.pollInterval().isZero()) {
            long millis = Math.max(1, options.pollInterval().toMillis());
            executor.scheduleWithFixedDelay(this::poll, millis, millis, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Opens the store: creates missing state directories (0700), removes temp files left by a crash, loads or
     * creates the master key pair (when {@link KeyStoreOptions#masterKey()}), and reads every key.
     *
     * @throws KeyStoreException for an unsafe or unusable pki dir (the message names the path and the fix)
     */
    public static KeyStore open(KeyStoreOptions options) throws IOException, KeyStoreException {
        Path pkiDir = preparePkiDir(options);
        Map<KeyState, Path> dirs = new EnumMap<>(KeyState.class);
        for (KeyState state : KeyState.values()) {
            dirs.put(state, pkiDir.resolve(state.dirName()));
        }
        Optional<PosixFileAttributes> lockAttributes = AtomicFiles.attributes(pkiDir.resolve(StoreLock.FILE_NAME));
        if (lockAttributes.isPresent() && !lockAttributes.get().isRegularFile()) {
            throw new KeyStoreException(pkiDir.resolve(StoreLock.FILE_NAME) + " is not a regular file"
                    + (lockAttributes.get().isSymbolicLink() ? " (a symbolic link)" : ""));
        }
        StoreLock lock = StoreLock.open(pkiDir);
        AuditLog audit = null;
        boolean ownsAudit = false;
        try {
            KeyPair pair;
            Snapshot initial;
            try (StoreLock.Held held = lock.acquire()) {
                // Writers make temp files only while holding the lock, which we hold: these are a crash's leftovers.
                for (Path dir : dirs.values()) {
                    PkiPermissions.ensurePrivateDirectory(dir);
                    AtomicFiles.removeLeftovers(dir);
                }
                AtomicFiles.removeLeftovers(pkiDir);
                pair = options.masterKey() ? MasterKeys.loadOrCreate(pkiDir, options.keysize()) : null;
                initial = scan(dirs, lock.generation(), statDirs(dirs), Snapshot.EMPTY);
            }
            if (options.auditLog() != null) {
                audit = options.auditLog();
            } else if (options.cachedir() != null) {
                audit = AuditLog.open(options.cachedir(), options.clock());
                ownsAudit = true;
            }
            return new KeyStore(options, pkiDir, dirs, lock, pair, audit, ownsAudit, initial);
        } catch (IOException | KeyStoreException | RuntimeException e) {
            if (ownsAudit) {
                audit.close();
            }
            lock.close();
            throw e;
        }
    }

    private static Path preparePkiDir(KeyStoreOptions options) throws IOException, KeyStoreException {
        Path dir = options.pkiDir().toAbsolutePath().normalize();
        if (AtomicFiles.attributes(dir).isEmpty()) {
            if (!options.createPkiDir()) {
                throw new KeyStoreException("pki dir " + dir + " does not exist");
            }
            if (dir.getParent() != null) {
                Files.createDirectories(dir.getParent());
            }
            PkiPermissions.ensurePrivateDirectory(dir);
        }
        // The pki dir itself may be a link (/etc/brine/pki -> /srv/...); nothing inside it may.
        Path real = dir.toRealPath();
        PosixFileAttributes attributes = AtomicFiles.attributes(real).orElseThrow();
        if (!attributes.isDirectory()) {
            throw new KeyStoreException("pki dir " + dir + " is not a directory");
        }
        if (PkiPermissions.groupOrOtherWrite(attributes)) {
            throw new KeyStoreException("pki dir " + real + " is writable by group or others; run: chmod 700 "
                    + real);
        }
        return real;
    }

    public Path pkiDir() {
        return pkiDir;
    }

    /** The master's key pair. */
    public KeyPair masterKeyPair() {
        if (masterKeyPair == null) {
            throw new IllegalStateException("the key store was opened without the master key");
        }
        return masterKeyPair;
    }

    /** The master's public key, read from {@code master.pub} when the store was opened without the key pair. */
    public Optional<RSAPublicKey> masterPublicKey() throws IOException, KeyStoreException {
        if (masterKeyPair != null) {
            return Optional.of((RSAPublicKey) masterKeyPair.getPublic());
        }
        return MasterKeys.readPublic(pkiDir.resolve(MasterKeys.PUBLIC_FILE));
    }

    // ---------------------------------------------------------------- reads (in memory)

    /** What the store holds for {@code id} relative to {@code offered}; in memory, no disk I/O. */
    public KeyLookup lookup(String id, RSAPublicKey offered) {
        MinionIds.requireValid(id);
        Objects.requireNonNull(offered, "offered");
        Entry entry = snapshot.keys.get(id);
        return entry == null ? KeyLookup.UNKNOWN : lookupOf(entry.key().state(), entry.key().key(), offered);
    }

    /** The accepted key of {@code id}; in memory. */
    public Optional<RSAPublicKey> acceptedKey(String id) {
        MinionIds.requireValid(id);
        Entry entry = snapshot.entry(KeyState.ACCEPTED, id);
        return entry == null ? Optional.empty() : Optional.of(entry.key().key());
    }

    /** The ids with an accepted key, sorted; in memory. */
    public Set<String> acceptedIds() {
        return snapshot.acceptedIds();
    }

    /**
     * Every valid key and every problem. Catches up first if another process changed the store since the last
     * poll (eight bytes read and four directories stat'ed; a rescan only after a change).
     */
    public KeyListing list() {
        ensureOpen();
        try {
            Snapshot current = snapshot;
            if (lock.generation() != current.generation || !statDirs(dirs).equals(current.dirStamps)) {
                try (StoreLock.Held held = lock.acquire()) {
                    syncLocked();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + pkiDir + ": " + e.getMessage(), e);
        }
        return listing(snapshot);
    }

    /** Rereads every file now. */
    public void refresh() throws IOException {
        ensureOpen();
        try (StoreLock.Held held = lock.acquire()) {
            rescanLocked(lock.generation(), statDirs(dirs));
        }
    }

    private static KeyListing listing(Snapshot s) {
        Map<KeyState, List<StoredKey>> keys = new EnumMap<>(KeyState.class);
        for (Entry entry : s.keys.values()) {
            keys.computeIfAbsent(entry.key().state(), k -> new ArrayList<>()).add(entry.key());
        }
        keys.put(KeyState.DENIED, s.denied.values().stream().map(Entry::key).toList());
        return new KeyListing(keys, s.problems);
    }

    // ---------------------------------------------------------------- the master's offer

    /**
     * Applies DESIGN.md §2's table to a key offered by a minion and answers. Steady states (accepted same key,
     * rejected id, pending same key without a verdict, the same denied key again) are answered from memory; every
     * write happens under the lock after re-reading the id's files. State changes are audited as actor
     * {@value #MASTER_ACTOR}.
     *
     * @throws UncheckedIOException when the store cannot be read or written (the caller must refuse the minion)
     * @throws IllegalArgumentException for a key brine does not accept (under 2048 bits, ...)
     */
    public KeyDecision offer(String id, RSAPublicKey offered, PolicyVerdict verdict) {
        MinionIds.requireValid(id);
        Objects.requireNonNull(offered, "offered");
        Objects.requireNonNull(verdict, "verdict");
        try {
            // A key the store could not read back must never be written.
            RsaKeys.checkSize(offered);
        } catch (KeyFormatException e) {
            throw new IllegalArgumentException(id + ": " + e.getMessage(), e);
        }
        ensureOpen();
        Snapshot s = snapshot;
        Entry entry = s.keys.get(id);
        KeyLookup fast = entry == null ? KeyLookup.UNKNOWN : lookupOf(entry.key().state(), entry.key().key(),
                offered);
        Outcome fastOutcome = KeyTransitions.decide(fast, verdict, Limits.UNLIMITED);
        if (fastOutcome.write() == KeyTransitions.Write.NONE) {
            // Decisions always carry the offered key's fingerprint (the stored one's when they are the same key).
            boolean same = fast == KeyLookup.ACCEPTED_SAME || fast == KeyLookup.PENDING_SAME;
            return decision(id, fastOutcome, same ? entry.key().fingerprint() : Fingerprints.of(offered));
        }
        if (fastOutcome.write() == KeyTransitions.Write.DENIED) {
            Entry denied = s.denied.get(id);
            if (denied != null && sameKey(denied.key().key(), offered)) {
                return decision(id, fastOutcome, denied.key().fingerprint());
            }
        }
        try (StoreLock.Held held = lock.acquire()) {
            return offerLocked(id, offered, verdict);
        } catch (IOException e) {
            throw new UncheckedIOException("key store " + pkiDir + ": cannot record the key of " + id + ": "
                    + e.getMessage(), e);
        }
    }

    private KeyDecision offerLocked(String id, RSAPublicKey offered, PolicyVerdict verdict) throws IOException {
        syncLocked();
        Optional<DiskEntry> current = readMain(id);
        KeyLookup lookup = current.map(c -> c.key() == null
                ? (c.state() == KeyState.PENDING ? KeyLookup.PENDING_OTHER
                        : c.state() == KeyState.ACCEPTED ? KeyLookup.ACCEPTED_OTHER : KeyLookup.REJECTED)
                : lookupOf(c.state(), c.key().key(), offered)).orElse(KeyLookup.UNKNOWN);
        Snapshot s = snapshot;
        Limits limits = new Limits(s.count(KeyState.PENDING), options.maxPending(), s.count(KeyState.ACCEPTED),
                options.maxMinions(), s.count(KeyState.REJECTED), options.maxRejected());
        Outcome outcome = KeyTransitions.decide(lookup, verdict, limits);
        String fingerprint = Fingerprints.of(offered);
        byte[] pem = Pem.bytes(Pem.publicKeySpki(offered));
        switch (outcome.write()) {
            case NONE -> {
            }
            case NEW_PENDING -> writeNewKey(id, KeyState.PENDING, offered, fingerprint, pem, outcome.reason());
            case NEW_ACCEPTED -> writeNewKey(id, KeyState.ACCEPTED, offered, fingerprint, pem, outcome.reason());
            case NEW_REJECTED -> writeNewKey(id, KeyState.REJECTED, offered, fingerprint, pem, outcome.reason());
            case PENDING_TO_ACCEPTED -> moveLocked(current.orElseThrow(), KeyState.ACCEPTED, MASTER_ACTOR,
                    outcome.reason());
            case PENDING_TO_REJECTED -> moveLocked(current.orElseThrow(), KeyState.REJECTED, MASTER_ACTOR,
                    outcome.reason());
            case DENIED -> writeDenied(id, offered, fingerprint, pem, outcome.reason());
        }
        return decision(id, outcome, fingerprint);
    }

    private static KeyDecision decision(String id, Outcome outcome, String fingerprint) {
        return switch (outcome.answer()) {
            case ACCEPTED -> new KeyDecision.Accepted(id, fingerprint, outcome.reason());
            case PENDING -> new KeyDecision.Pending(id, fingerprint, outcome.reason());
            case REJECTED -> new KeyDecision.Rejected(id, fingerprint, outcome.reason());
            case DENIED -> new KeyDecision.Denied(id, fingerprint, outcome.reason());
            case FULL -> new KeyDecision.Full(id, outcome.reason());
        };
    }

    private void writeNewKey(String id, KeyState state, RSAPublicKey key, String fingerprint, byte[] pem,
            String reason) throws IOException {
        Path dir = dirs.get(state);
        AtomicFiles.create(dir.resolve(id), pem, AtomicFiles.OWNER_RW);
        StoredKey stored = new StoredKey(id, state, key, fingerprint);
        commitLocked(snapshot.with(new Entry(stored, stamp(dir.resolve(id)))),
                new KeyChange(id, Optional.empty(), Optional.of(state), fingerprint), MASTER_ACTOR, reason);
    }

    private void writeDenied(String id, RSAPublicKey key, String fingerprint, byte[] pem, String reason)
            throws IOException {
        Optional<DiskEntry> existing = readOne(KeyState.DENIED, id);
        if (existing.isPresent() && existing.get().key() != null && sameKey(existing.get().key().key(), key)) {
            return;
        }
        Path dir = dirs.get(KeyState.DENIED);
        AtomicFiles.write(dir.resolve(id), pem, AtomicFiles.OWNER_RW);
        StoredKey stored = new StoredKey(id, KeyState.DENIED, key, fingerprint);
        commitLocked(snapshot.with(new Entry(stored, stamp(dir.resolve(id)))),
                new KeyChange(id, Optional.empty(), Optional.of(KeyState.DENIED), fingerprint), MASTER_ACTOR, reason);
    }

    // ---------------------------------------------------------------- admin operations

    /** Accepts the pending key of {@code id}; see {@link #accept(String, KeyState, String, String)}. */
    public AdminResult accept(String id, String expectedFingerprint, String actor) {
        return accept(id, KeyState.PENDING, expectedFingerprint, actor);
    }

    /**
     * Moves the key of {@code id} in state {@code from} (pending, rejected or denied) to {@code minions/}.
     * When {@code expectedFingerprint} is given (any case, colons optional), the key must have it. A denied key is
     * accepted only when the id holds no other key: a stored key is never replaced.
     *
     * @throws IllegalArgumentException for an invalid id, state or fingerprint
     */
    public AdminResult accept(String id, KeyState from, String expectedFingerprint, String actor) {
        requireOneOf(from, KeyState.PENDING, KeyState.REJECTED, KeyState.DENIED);
        return adminOperation(id, from, KeyState.ACCEPTED, expectedFingerprint, actor);
    }

    /** Moves the key of {@code id} in state {@code from} (pending, accepted or denied) to {@code minions_rejected/}. */
    public AdminResult reject(String id, KeyState from, String expectedFingerprint, String actor) {
        requireOneOf(from, KeyState.PENDING, KeyState.ACCEPTED, KeyState.DENIED);
        return adminOperation(id, from, KeyState.REJECTED, expectedFingerprint, actor);
    }

    /**
     * Rejects the key of {@code id} wherever it is, pending or accepted (the master's "revoke"); a rejected id is
     * left as it is.
     */
    public AdminResult reject(String id, String expectedFingerprint, String actor) {
        MinionIds.requireValid(id);
        Entry entry = snapshot.keys.get(id);
        KeyState from = entry != null && entry.key().state() == KeyState.ACCEPTED ? KeyState.ACCEPTED
                : KeyState.PENDING;
        AdminResult result = reject(id, from, expectedFingerprint, actor);
        if (result.status() == Status.NOT_FOUND) {
            // The snapshot was stale: try the other state once (each attempt re-reads the disk under the lock).
            result = reject(id, from == KeyState.ACCEPTED ? KeyState.PENDING : KeyState.ACCEPTED,
                    expectedFingerprint, actor);
        }
        return result;
    }

    /**
     * Deletes every key of {@code id}: its pending, accepted or rejected key, and its denied key. Returns the result
     * for the former, or for the denied key when that was the only one.
     */
    public AdminResult delete(String id, String actor) {
        MinionIds.requireValid(id);
        AdminResult main = AdminResult.of(id, Status.NOT_FOUND, id + ": no key");
        for (KeyState state : PRECEDENCE) {
            AdminResult result = delete(id, state, null, actor);
            if (result.status() != Status.NOT_FOUND) {
                main = result;
                break;
            }
        }
        AdminResult denied = delete(id, KeyState.DENIED, null, actor);
        return main.status() == Status.NOT_FOUND && denied.status() != Status.NOT_FOUND ? denied : main;
    }

    /** Deletes the key of {@code id} in state {@code from}. */
    public AdminResult delete(String id, KeyState from, String expectedFingerprint, String actor) {
        Objects.requireNonNull(from, "from");
        return adminOperation(id, from, null, expectedFingerprint, actor);
    }

    private AdminResult adminOperation(String id, KeyState from, KeyState to, String expectedFingerprint,
            String actor) {
        MinionIds.requireValid(id);
        Objects.requireNonNull(actor, "actor");
        String expected = null;
        if (expectedFingerprint != null) {
            expected = Fingerprints.normalize(expectedFingerprint);
            if (expected == null) {
                throw new IllegalArgumentException(MinionIds.printable(expectedFingerprint)
                        + " is not a fingerprint (expected 32 hex bytes, e.g. ab:cd:...)");
            }
        }
        ensureOpen();
        try (StoreLock.Held held = lock.acquire()) {
            syncLocked();
            return adminLocked(id, from, to, expected, actor);
        } catch (IOException e) {
            return AdminResult.of(id, Status.REFUSED, id + ": " + verb(to) + " failed: " + e.getMessage());
        }
    }

    private AdminResult adminLocked(String id, KeyState from, KeyState to, String expected, String actor)
            throws IOException {
        Optional<DiskEntry> main = readMain(id);
        DiskEntry source;
        if (from.exclusive()) {
            if (main.isEmpty() || main.get().state() != from) {
                if (main.isPresent() && main.get().state() == to) {
                    return AdminResult.of(id, Status.UNCHANGED, id + ": already " + to.label());
                }
                return AdminResult.of(id, Status.NOT_FOUND, id + ": no " + from.label() + " key"
                        + main.map(m -> " (the id is " + m.state().label() + ")").orElse(""));
            }
            source = main.get();
        } else {
            Optional<DiskEntry> denied = readOne(KeyState.DENIED, id);
            if (denied.isEmpty()) {
                return AdminResult.of(id, Status.NOT_FOUND, id + ": no denied key");
            }
            if (to != null && main.isPresent()) {
                DiskEntry other = main.get();
                if (other.state() == KeyState.REJECTED && to == KeyState.REJECTED) {
                    return AdminResult.of(id, Status.UNCHANGED, id + ": already rejected; its denied key is left"
                            + " in place");
                }
                return AdminResult.of(id, Status.REFUSED, id + ": already has " + (other.state() == KeyState.ACCEPTED
                        ? "an " : "a ") + other.state().label() + " key" + (other.key() == null ? "" : " (" + other.key().fingerprint() + ")")
                        + "; a denied key never replaces a stored key. Delete the id's keys and let the minion"
                        + " offer its key again");
            }
            source = denied.get();
        }
        if (source.key() == null) {
            return AdminResult.of(id, Status.REFUSED, id + ": " + relative(source.state(), id) + " "
                    + source.problem() + "; not acted on: fix or remove it by hand");
        }
        if (expected != null && !expected.equals(source.key().fingerprint())) {
            return AdminResult.of(id, Status.REFUSED, id + ": the " + source.state().label() + " key has fingerprint "
                    + source.key().fingerprint() + ", not " + expected + "; nothing changed");
        }
        if (to == KeyState.ACCEPTED && options.maxMinions() > 0
                && snapshot.count(KeyState.ACCEPTED) >= options.maxMinions()) {
            return AdminResult.of(id, Status.REFUSED, id + ": max minions (" + options.maxMinions() + ") reached");
        }
        String fingerprint = source.key().fingerprint();
        if (to == null) {
            AtomicFiles.delete(source.path());
            commitLocked(snapshot.without(from, id), new KeyChange(id, Optional.of(from), Optional.empty(),
                    fingerprint), actor, "deleted by admin");
            return AdminResult.done(id, from, Optional.empty(), fingerprint, id + ": deleted");
        }
        moveLocked(source, to, actor, to.label() + " by admin");
        return AdminResult.done(id, from, Optional.of(to), fingerprint, id + ": " + to.label());
    }

    private void moveLocked(DiskEntry source, KeyState to, String actor, String reason) throws IOException {
        String id = source.key().id();
        Path target = dirs.get(to).resolve(id);
        if (AtomicFiles.attributes(target).isPresent()) {
            // Only a hand-made file can be here (the caller checked the id's state under the lock): never replace.
            throw new IOException(relative(to, id) + " already exists");
        }
        AtomicFiles.setMode(source.path(), AtomicFiles.OWNER_RW);
        AtomicFiles.move(source.path(), target);
        StoredKey moved = new StoredKey(id, to, source.key().key(), source.key().fingerprint());
        commitLocked(snapshot.without(source.state(), id).with(new Entry(moved, stamp(target))),
                new KeyChange(id, Optional.of(source.state()), Optional.of(to), moved.fingerprint()), actor, reason);
    }

    private static String verb(KeyState to) {
        return to == null ? "delete" : to == KeyState.ACCEPTED ? "accept" : to == KeyState.REJECTED ? "reject"
                : to.label();
    }

    private static void requireOneOf(KeyState state, KeyState... allowed) {
        if (!Arrays.asList(allowed).contains(state)) {
            throw new IllegalArgumentException("cannot start from " + state + "; allowed: " + Arrays.toString(allowed));
        }
    }

    // ---------------------------------------------------------------- rotation requests

    /**
     * The file through which an admin asks the master, in this process or another, to rotate the publish key: a
     * decimal counter that {@link #requestRotation} bumps and the master watches.
     */
    public static final String ROTATE_FILE = ".rotate";
    private static final int MAX_ROTATE_FILE_BYTES = 32;

    /**
     * Asks the master to rotate the publish key now: bumps the counter in {@value #ROTATE_FILE} (under the store
     * lock, temp file + rename) and audits the request. A running master notices within a second.
     *
     * @return the counter after this request
     * @throws UncheckedIOException when the file cannot be written
     */
    public long requestRotation(String actor) {
        Objects.requireNonNull(actor, "actor");
        ensureOpen();
        long count;
        try (StoreLock.Held held = lock.acquire()) {
            count = Math.max(0, rotationRequests()) + 1;
            AtomicFiles.write(pkiDir.resolve(ROTATE_FILE), (count + "\n").getBytes(StandardCharsets.US_ASCII),
                    AtomicFiles.OWNER_RW);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + pkiDir.resolve(ROTATE_FILE) + ": " + e.getMessage(), e);
        }
        log.info("Key store {}: publish key rotation requested by {} (request {})", pkiDir, actor, count);
        if (audit != null) {
            audit.record(AuditEvent.builder("rotation-requested", actor).reason("request " + count).build());
            audit.sync();
        }
        return count;
    }

    /**
     * How many rotations admins have asked for ({@link #requestRotation}): 0 when never, -1 when the file cannot
     * be read. Reads one small file without the lock (it is only ever replaced whole), so a master can poll it.
     */
    public long rotationRequests() {
        Path file = pkiDir.resolve(ROTATE_FILE);
        try {
            if (AtomicFiles.attributes(file).filter(PosixFileAttributes::isRegularFile).isEmpty()) {
                return 0;
            }
            return Long.parseLong(new String(AtomicFiles.readSmall(file, MAX_ROTATE_FILE_BYTES),
                    StandardCharsets.US_ASCII).strip());
        } catch (IOException | NumberFormatException e) {
            log.debug("Key store {}: cannot read {}: {}", pkiDir, ROTATE_FILE, e.toString());
            return -1;
        }
    }

    // ---------------------------------------------------------------- change notification

    /**
     * Calls {@code listener} on the store's thread for every change, including those made by other processes
     * (noticed within {@code pollInterval}, or within {@code rescanInterval} for files edited by hand). Closing
     * the returned handle removes the listener.
     */
    public AutoCloseable addListener(KeyChangeListener listener) {
        Objects.requireNonNull(listener, "listener");
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    private void publish(List<KeyChange> changes) {
        if (changes.isEmpty()) {
            return;
        }
        try {
            executor.execute(() -> {
                for (KeyChange change : changes) {
                    for (KeyChangeListener listener : listeners) {
                        try {
                            listener.onChange(change);
                        } catch (RuntimeException e) {
                            log.error("Key store listener failed on {}", change, e);
                        }
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    private void poll() {
        try {
            Snapshot current = snapshot;
            boolean due = System.nanoTime() - current.scannedAtNanos >= options.rescanInterval().toNanos();
            if (!due && lock.generation() == current.generation && statDirs(dirs).equals(current.dirStamps)) {
                return;
            }
            try (StoreLock.Held held = lock.acquire()) {
                if (due) {
                    rescanLocked(lock.generation(), statDirs(dirs));
                } else {
                    syncLocked();
                }
            }
        } catch (IOException | RuntimeException e) {
            log.warn("Key store {}: cannot look for changes: {}", pkiDir, e.toString());
        }
    }

    // ---------------------------------------------------------------- under the lock

    /** Makes the snapshot exact: rescans if another process (or a hand) changed anything since. */
    private void syncLocked() throws IOException {
        long generation = lock.generation();
        List<Object> stamps = statDirs(dirs);
        Snapshot current = snapshot;
        if (generation != current.generation || !stamps.equals(current.dirStamps)) {
            rescanLocked(generation, stamps);
        }
    }

    private void rescanLocked(long generation, List<Object> stamps) throws IOException {
        Snapshot old = snapshot;
        Snapshot fresh = scan(dirs, generation, stamps, old);
        snapshot = fresh;
        List<KeyChange> changes = diff(old, fresh);
        for (KeyChange change : changes) {
            log.info("Key store {}: {} (changed by another writer)", pkiDir, change);
        }
        publish(changes);
    }

    /** Records one change made by this process: audit line, snapshot, change counter, listeners. */
    private void commitLocked(Snapshot edited, KeyChange change, String actor, String reason) throws IOException {
        long generation = lock.bumpGeneration();
        snapshot = edited.synced(generation, statDirs(dirs));
        log.info("Key store {}: {} by {} ({})", pkiDir, change, actor, reason);
        if (audit != null) {
            String event = change.to().map(to -> "key." + to.label()).orElse("key.deleted");
            try {
                audit.record(AuditEvent.builder(event, actor).id(change.id())
                        .from(change.from().map(KeyState::label).orElse(null))
                        .to(change.to().map(KeyState::label).orElse(null))
                        .fingerprint(change.fingerprint()).reason(reason).build());
                audit.sync();
            } catch (UncheckedIOException e) {
                // The change is made and cannot be undone; make the missing audit line loud.
                log.error("Key store {}: {} was not written to the audit log: {}", pkiDir, change, e.getMessage());
            }
        }
        publish(List.of(change));
    }

    private record DiskEntry(KeyState state, Path path, StoredKey key, String problem) {
    }

    /** The id's file in its strongest exclusive state, read from disk. */
    private Optional<DiskEntry> readMain(String id) throws IOException {
        for (KeyState state : PRECEDENCE) {
            Optional<DiskEntry> entry = readOne(state, id);
            if (entry.isPresent()) {
                return entry;
            }
        }
        return Optional.empty();
    }

    private Optional<DiskEntry> readOne(KeyState state, String id) throws IOException {
        Path path = MinionIds.resolveInside(dirs.get(state), id);
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(path);
        if (attributes.isEmpty()) {
            return Optional.empty();
        }
        ParsedFile parsed = parse(state, id, path, attributes.get());
        return Optional.of(new DiskEntry(state, path, parsed.key(), parsed.problem()));
    }

    private record ParsedFile(StoredKey key, String problem) {
        ParsedFile {
            // Parser messages may quote the file; keep terminal escapes out of what admins read.
            problem = problem == null ? null : problem.replaceAll("[\\p{Cntrl}]", "?");
        }
    }

    private static ParsedFile parse(KeyState state, String id, Path path, BasicFileAttributes attributes) {
        if (attributes.isSymbolicLink()) {
            return new ParsedFile(null, "is a symbolic link (links are never followed)");
        }
        if (!attributes.isRegularFile()) {
            return new ParsedFile(null, "is not a regular file");
        }
        if (attributes.size() > MAX_KEY_BYTES) {
            return new ParsedFile(null, "is larger than " + MAX_KEY_BYTES + " bytes: not a public key");
        }
        try {
            String pem = new String(AtomicFiles.readSmall(path, MAX_KEY_BYTES), StandardCharsets.US_ASCII);
            RSAPublicKey key = Pem.readPublicKey(pem);
            return new ParsedFile(new StoredKey(id, state, key, Fingerprints.of(key)), null);
        } catch (KeyFormatException e) {
            return new ParsedFile(null, "is not a valid public key: " + e.getMessage());
        } catch (IOException e) {
            return new ParsedFile(null, "cannot be read: " + e.getMessage());
        }
    }

    private static Snapshot scan(Map<KeyState, Path> dirs, long generation, List<Object> stamps, Snapshot previous)
            throws IOException {
        long started = System.nanoTime();
        Map<String, Entry> keys = new HashMap<>();
        Map<String, Entry> denied = new HashMap<>();
        List<KeyProblem> problems = new ArrayList<>();
        for (KeyState state : List.of(KeyState.REJECTED, KeyState.ACCEPTED, KeyState.PENDING, KeyState.DENIED)) {
            Path dir = dirs.get(state);
            List<Path> entries = new ArrayList<>();
            try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
                stream.forEach(entries::add);
            }
            entries.sort(Comparator.comparing(Path::toString));
            for (Path path : entries) {
                String name = path.getFileName().toString();
                if (AtomicFiles.isTemp(name)) {
                    continue;
                }
                Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(path);
                if (attributes.isEmpty()) {
                    continue;
                }
                String file = MinionIds.printable(state.dirName() + "/" + name);
                Optional<String> badName = MinionIds.problem(name);
                if (badName.isPresent()) {
                    problems.add(new KeyProblem(file, "name is not a valid id (" + badName.get() + ")"));
                    continue;
                }
                FileStamp stamp = FileStamp.of(attributes.get());
                Entry old = previous.entry(state, name);
                Entry entry;
                if (old != null && old.stamp().equals(stamp) && attributes.get().isRegularFile()) {
                    entry = old;
                } else {
                    ParsedFile parsed = parse(state, name, path, attributes.get());
                    if (parsed.key() == null) {
                        problems.add(new KeyProblem(file, parsed.problem()));
                        continue;
                    }
                    entry = new Entry(parsed.key(), stamp);
                }
                if (state == KeyState.DENIED) {
                    denied.put(name, entry);
                } else if (keys.containsKey(name)) {
                    problems.add(new KeyProblem(file, "the id is also in " + keys.get(name).key().state().dirName()
                            + "/, which takes precedence; remove one copy by hand"));
                } else {
                    keys.put(name, entry);
                }
            }
        }
        problems.sort(Comparator.comparing(KeyProblem::file));
        log.debug("Scanned {} keys in {} ms", keys.size() + denied.size(), (System.nanoTime() - started) / 1_000_000);
        return new Snapshot(generation, stamps, keys, denied, problems, started);
    }

    private static List<KeyChange> diff(Snapshot old, Snapshot fresh) {
        List<KeyChange> changes = new ArrayList<>();
        diff(old.keys, fresh.keys, false, changes);
        diff(old.denied, fresh.denied, true, changes);
        return changes;
    }

    private static void diff(Map<String, Entry> old, Map<String, Entry> fresh, boolean denied,
            List<KeyChange> changes) {
        Set<String> ids = new TreeSet<>(old.keySet());
        ids.addAll(fresh.keySet());
        for (String id : ids) {
            StoredKey before = old.containsKey(id) ? old.get(id).key() : null;
            StoredKey after = fresh.containsKey(id) ? fresh.get(id).key() : null;
            if (before != null && after != null && before.state() == after.state()
                    && before.fingerprint().equals(after.fingerprint())) {
                continue;
            }
            if (before == null && after == null) {
                continue;
            }
            if (denied && before != null && after != null) {
                changes.add(new KeyChange(id, Optional.empty(), Optional.of(KeyState.DENIED), after.fingerprint()));
                continue;
            }
            changes.add(new KeyChange(id, Optional.ofNullable(before).map(StoredKey::state),
                    Optional.ofNullable(after).map(StoredKey::state),
                    after != null ? after.fingerprint() : before.fingerprint()));
        }
    }

    /** Identity and modification time of each state directory: a cheap sign that something changed. */
    private static List<Object> statDirs(Map<KeyState, Path> dirs) {
        List<Object> stamps = new ArrayList<>(dirs.size());
        for (Path dir : dirs.values()) {
            try {
                BasicFileAttributes attributes = Files.readAttributes(dir, BasicFileAttributes.class,
                        java.nio.file.LinkOption.NOFOLLOW_LINKS);
                stamps.add(List.of(String.valueOf(attributes.fileKey()), attributes.lastModifiedTime()));
            } catch (IOException e) {
                stamps.add(e.toString());
            }
        }
        return stamps;
    }

    private static FileStamp stamp(Path file) throws IOException {
        return FileStamp.of(Files.readAttributes(file, BasicFileAttributes.class,
                java.nio.file.LinkOption.NOFOLLOW_LINKS));
    }

    private static KeyLookup lookupOf(KeyState state, RSAPublicKey stored, RSAPublicKey offered) {
        boolean same = sameKey(stored, offered);
        return switch (state) {
            case PENDING -> same ? KeyLookup.PENDING_SAME : KeyLookup.PENDING_OTHER;
            case ACCEPTED -> same ? KeyLookup.ACCEPTED_SAME : KeyLookup.ACCEPTED_OTHER;
            case REJECTED -> KeyLookup.REJECTED;
            case DENIED -> throw new IllegalArgumentException("denied is not an exclusive state");
        };
    }

    static boolean sameKey(RSAPublicKey a, RSAPublicKey b) {
        return a.getModulus().equals(b.getModulus()) && a.getPublicExponent().equals(b.getPublicExponent());
    }

    private static String relative(KeyState state, String id) {
        return state.dirName() + "/" + id;
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the key store is closed");
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        executor.shutdown();
        try {
            if (!executor.awaitTermination(2, TimeUnit.SECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            lock.close();
        } catch (IOException e) {
            log.debug("Closing the lock of {}: {}", pkiDir, e.toString());
        }
        if (ownsAudit) {
            audit.close();
        }
    }

    @Override
    public String toString() {
        return "KeyStore[" + pkiDir + "]";
    }
}

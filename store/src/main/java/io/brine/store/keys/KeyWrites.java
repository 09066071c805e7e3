package io.brine.store.keys;

import com.github.benmanes.caffeine.cache.Ticker;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyDirectory.DiskEntry;
import io.brine.store.keys.Snapshot.Entry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-memory snapshot of a pki dir and every change to its files. Methods named {@code ...Locked} need the
 * caller to hold the store lock; {@link #snapshot()} needs nothing. Each change, in this order: the file is written
 * ({@link AtomicFiles}), the lock file's change counter is bumped (so other processes notice), the tenure of the
 * entry it replaces ends, the new snapshot is published, the audit line is written and forced, and the watcher tells
 * the listeners.
 *
 * <p>Between {@link #beginBatchLocked} and {@link #endBatchLocked} new keys are a group commit: each file is written
 * and linked, but its directory is forced, the counter bumped, the snapshot published and the audit forced once for
 * all of them, at {@link #flushLocked}. Until then the batch's keys are seen only under the lock
 * ({@link #workingLocked}), so nothing answers from them before they are durable.
 */
final class KeyWrites {

    /** Forces a state directory's new names to disk: {@link AtomicFiles#forceDirectory}, or a test's hook. */
    @FunctionalInterface
    interface DirectorySync {
        void force(Path dir) throws IOException;
    }

    /** A change made and not yet published: its audit line is {@code event}, or a state change's when null. */
    private record Made(KeyChange change, String actor, String reason, AuditEvent event) {}

    private static final Logger log = LoggerFactory.getLogger(KeyWrites.class);

    private final KeyDirectory directory;
    private final StoreLock lock;
    private final AuditLog audit;
    private final KeyWatcher watcher;
    private final Ticker ticker;
    private final DirectorySync directorySync;
    private final List<String> unaudited = new ArrayList<>();
    private volatile Snapshot snapshot;
    // The batch's state, under the store lock: keys linked but not yet durable, and the snapshot that holds them.
    private boolean batching;
    private Snapshot staged;
    private final List<Made> unforced = new ArrayList<>();
    private final Set<Path> unforcedDirs = new LinkedHashSet<>();
    private final Set<Path> unforcedLeft = new LinkedHashSet<>();

    KeyWrites(
            KeyDirectory directory,
            StoreLock lock,
            AuditLog audit,
            KeyWatcher watcher,
            Ticker ticker,
            Snapshot initial,
            DirectorySync directorySync) {
        this.directory = directory;
        this.lock = lock;
        this.audit = audit;
        this.watcher = watcher;
        this.ticker = ticker;
        this.snapshot = initial;
        this.directorySync = directorySync;
    }

    /** What the store holds as of the last write, poll or sync; read without the lock. Never a batch's keys. */
    Snapshot snapshot() {
        return snapshot;
    }

    /** What the store holds under the lock: {@link #snapshot()} and the keys of the batch not yet flushed. */
    Snapshot workingLocked() {
        return staged != null ? staged : snapshot;
    }

    /**
     * Starts a group commit: {@link #createLocked} and {@link #rotateLocked} defer what makes their key durable until
     * {@link #flushLocked}.
     */
    void beginBatchLocked() {
        batching = true;
    }

    /**
     * Makes the batch's keys durable and seen: each directory they were linked in is forced once, then the counter
     * is bumped, the snapshot published, the audit lines written and forced once, and the listeners told. Nobody
     * may be answered about a batch's key before this returns. Every other write flushes first, so the changes
     * reach the disk, the snapshot and the audit in the order they were made.
     */
    void flushLocked() throws IOException {
        if (unforced.isEmpty()) {
            return;
        }
        for (Path dir : unforcedDirs) {
            directorySync.force(dir);
        }
        unforcedLeft.removeAll(unforcedDirs);
        List<Made> made = List.copyOf(unforced);
        Snapshot edited = staged;
        discardBatch();
        publishLocked(edited, made);
    }

    /**
     * Ends the batch. What was not flushed (a failure in {@link #flushLocked}) stays on disk unannounced, as a
     * crash would leave it: the next rescan finds it by the directories' stamps, and forces those directories
     * before it publishes anything it found there.
     */
    void endBatchLocked() {
        batching = false;
        unforcedLeft.addAll(unforcedDirs);
        discardBatch();
    }

    private void discardBatch() {
        staged = null;
        unforced.clear();
        unforcedDirs.clear();
    }

    /** Whether another process (or a hand) may have changed the pki dir since {@code current}: cheap, no lock. */
    boolean changedOutside(Snapshot current) {
        return lock.generation() != current.generation || !directory.stamps().equals(current.dirStamps);
    }

    /** Forces {@code dir}'s new names to disk, once for the files a caller wrote there unforced. */
    void forceLocked(Path dir) throws IOException {
        directorySync.force(dir);
    }

    /** Makes the snapshot exact: rescans if another process (or a hand) changed anything since. */
    void syncLocked() throws IOException {
        if (changedOutside(workingLocked())) {
            rescanLocked();
        }
    }

    /** Rereads every file (only those that changed are parsed again) and tells listeners what changed. */
    void rescanLocked() throws IOException {
        flushLocked();
        for (Path dir : List.copyOf(unforcedLeft)) {
            directorySync.force(dir);
            unforcedLeft.remove(dir);
        }
        Snapshot old = snapshot;
        Snapshot fresh = directory.scan(lock.generation(), directory.stamps(), old, ticker.read());
        List<KeyChange> changes = KeyDirectory.diff(old, fresh);
        for (KeyChange change : changes) {
            endTenure(old, fresh, change.id());
        }
        snapshot = fresh;
        for (KeyChange change : changes) {
            log.info("Key store {}: {} (changed by another writer)", directory.pkiDir(), change);
        }
        watcher.publish(changes);
    }

    /**
     * Writes {@code key} as the id's new file in {@code state}, filed for {@code kind}; fails if a file of that name
     * exists. The kind is recorded first (a Salt mark made, or a mark a crash or a hand left removed), so a key is
     * never on disk with another kind than the one it was filed for.
     */
    Entry createLocked(String id, KeyState state, RSAPublicKey key, MinionKind kind, String actor, String reason)
            throws IOException {
        recordKindLocked(id, kind);
        Path file = directory.dir(state).resolve(id);
        byte[] pem = Pem.bytes(Pem.publicKeySpki(key));
        if (!batching) {
            AtomicFiles.create(file, pem, AtomicFiles.OWNER_RW);
        } else {
            AtomicFiles.createUnforced(file, pem, AtomicFiles.OWNER_RW);
        }
        Entry entry = Entry.of(new StoredKey(id, state, key, Fingerprints.of(key), kind), KeyDirectory.stamp(file));
        KeyChange change = new KeyChange(
                id, Optional.empty(), Optional.of(state), entry.key().fingerprint());
        if (!batching) {
            commitLocked(snapshot.with(entry), change, actor, reason);
            return entry;
        }
        Snapshot working = workingLocked();
        // Synced to the stamps our own link changed, so the next offer of the batch does not rescan for it.
        staged = working.with(entry).synced(working.generation, directory.stamps());
        unforced.add(new Made(change, actor, reason, null));
        unforcedDirs.add(file.getParent());
        return entry;
    }

    /** Writes {@code key} as the id's denied key, replacing another denied key; nothing when it is already there. */
    void denyLocked(String id, RSAPublicKey key, String actor, String reason) throws IOException {
        flushLocked();
        Optional<DiskEntry> existing = directory.readOne(KeyState.DENIED, id);
        if (existing.isPresent()
                && existing.get().key() != null
                && KeyLookup.sameKey(existing.get().key().key(), key)) {
            return;
        }
        Path file = directory.dir(KeyState.DENIED).resolve(id);
        AtomicFiles.write(file, Pem.bytes(Pem.publicKeySpki(key)), AtomicFiles.OWNER_RW);
        Entry entry = Entry.of(new StoredKey(id, KeyState.DENIED, key, Fingerprints.of(key)), KeyDirectory.stamp(file));
        commitLocked(
                snapshot.with(entry),
                new KeyChange(
                        id,
                        Optional.empty(),
                        Optional.of(KeyState.DENIED),
                        entry.key().fingerprint()),
                actor,
                reason);
    }

    /**
     * Moves the valid key {@code source} to {@code to} with one rename(2). The caller checked the id's state under
     * the lock, so a file already at the target is hand-made: it is never replaced.
     */
    Entry moveLocked(DiskEntry source, KeyState to, String actor, String reason) throws IOException {
        flushLocked();
        String id = source.key().id();
        Path target = directory.dir(to).resolve(id);
        if (AtomicFiles.attributes(target).isPresent()) {
            throw new IOException(KeyDirectory.relative(to, id) + " already exists");
        }
        // A key keeps its kind from state to state; a denied key (recorded for no kind) is accepted as a brine
        // minion's, whatever mark an earlier key of the id left.
        MinionKind kind = source.state() == KeyState.DENIED
                ? MinionKind.BRINE
                : source.key().kind();
        if (source.state() == KeyState.DENIED) {
            recordKindLocked(id, kind);
        }
        AtomicFiles.setMode(source.path(), AtomicFiles.OWNER_RW);
        AtomicFiles.move(source.path(), target);
        if (source.state() == KeyState.ACCEPTED) {
            directory.asks().dropLocked(id); // rejected: an admin's ask to rotate the key goes with it
        }
        StoredKey moved = new StoredKey(
                id,
                to,
                source.key().key(),
                source.key().fingerprint(),
                to == KeyState.DENIED ? MinionKind.BRINE : kind);
        Entry entry = Entry.of(moved, KeyDirectory.stamp(target));
        commitLocked(
                snapshot.without(source.state(), id).with(entry),
                new KeyChange(id, Optional.of(source.state()), Optional.of(to), moved.fingerprint()),
                actor,
                reason);
        return entry;
    }

    /** Deletes the valid key {@code source}. */
    void deleteLocked(DiskEntry source, String actor, String reason) throws IOException {
        flushLocked();
        String id = source.key().id();
        AtomicFiles.delete(source.path());
        if (source.state() != KeyState.DENIED) {
            directory.marks().unmark(id); // the id holds no key: its kind goes with it
        }
        if (source.state() == KeyState.ACCEPTED) {
            directory.asks().dropLocked(id);
        }
        commitLocked(
                snapshot.without(source.state(), id),
                new KeyChange(
                        id,
                        Optional.of(source.state()),
                        Optional.empty(),
                        source.key().fingerprint()),
                actor,
                reason);
    }

    /**
     * Replaces the accepted key {@code source} by {@code newKey} with one rename(2) over {@code minions/ID}, which is
     * the rotation. The caller has made the id's retired record durable first (harmless alone: an accepted key is
     * never judged by it). A crash leaves the old key accepted or the new one, whole. In a batch
     * ({@link #beginBatchLocked}) the directory's force, the counter, the snapshot and the audit wait for
     * {@link #flushLocked}, as a new key's do.
     */
    Entry rotateLocked(DiskEntry source, RSAPublicKey newKey, String actor, RotationDecision.Rotated rotated)
            throws IOException {
        if (!batching) {
            flushLocked();
        }
        String id = source.key().id();
        Path file = directory.dir(KeyState.ACCEPTED).resolve(id);
        byte[] pem = Pem.bytes(Pem.publicKeySpki(newKey));
        if (!batching) {
            AtomicFiles.write(file, pem, AtomicFiles.OWNER_RW);
        } else {
            AtomicFiles.writeUnforced(file, pem, AtomicFiles.OWNER_RW);
        }
        Entry entry = Entry.of(
                new StoredKey(id, KeyState.ACCEPTED, newKey, rotated.newFingerprint(), MinionKind.BRINE),
                KeyDirectory.stamp(file));
        KeyChange change = new KeyChange(
                id, Optional.of(KeyState.ACCEPTED), Optional.of(KeyState.ACCEPTED), rotated.newFingerprint());
        AuditEvent event = KeyStore.rotationEvent(id, actor, rotated);
        // Replaced in place: the accepted ids stay the same set, so their listing (each publication's targets) is kept.
        if (!batching) {
            commitLocked(snapshot.with(entry), change, actor, rotated.reason(), event);
            return entry;
        }
        Snapshot working = workingLocked();
        staged = working.with(entry).synced(working.generation, directory.stamps());
        unforced.add(new Made(change, actor, rotated.reason(), event));
        unforcedDirs.add(file.getParent());
        return entry;
    }

    private void recordKindLocked(String id, MinionKind kind) throws IOException {
        if (kind == MinionKind.SALT) {
            directory.marks().mark(id);
        } else {
            directory.marks().unmark(id);
        }
    }

    private void commitLocked(Snapshot edited, KeyChange change, String actor, String reason) throws IOException {
        commitLocked(edited, change, actor, reason, null);
    }

    /** Publishes {@code edited} and audits {@code change} as {@code event}, or as a move when that is null. */
    private void commitLocked(Snapshot edited, KeyChange change, String actor, String reason, AuditEvent event)
            throws IOException {
        publishLocked(edited, List.of(new Made(change, actor, reason, event)));
    }

    /** Bumps the counter once, publishes {@code edited}, audits each change (one force for all) and tells them. */
    private void publishLocked(Snapshot edited, List<Made> made) {
        long generation;
        try {
            generation = lock.bumpGeneration();
        } catch (IOException e) {
            // The change is on disk: never report it as failed. Other processes still see it by the directories'
            // stamps; the counter catches up at the next change.
            log.warn(
                    "Key store {}: {} made, but the change counter in {} could not be bumped: {}",
                    directory.pkiDir(),
                    made.get(0).change(),
                    StoreLock.FILE_NAME,
                    e.getMessage());
            generation = snapshot.generation;
        }
        for (Made one : made) {
            endTenure(snapshot, edited, one.change().id());
        }
        snapshot = edited.synced(generation, directory.stamps());
        List<Made> recorded = new ArrayList<>(made.size());
        for (Made one : made) {
            KeyChange change = one.change();
            log.info("Key store {}: {} by {} ({})", directory.pkiDir(), change, one.actor(), one.reason());
            String name =
                    change.to().map(to -> AuditEvent.keyChange(to.label())).orElse("key-deleted");
            try {
                audit.record(
                        one.event() != null
                                ? one.event()
                                : AuditEvent.builder(name, one.actor())
                                        .id(change.id())
                                        .from(change.from().map(KeyState::label).orElse(null))
                                        .to(change.to().map(KeyState::label).orElse(null))
                                        .fingerprint(change.fingerprint())
                                        .reason(one.reason())
                                        .build());
                recorded.add(one);
            } catch (UncheckedIOException e) {
                unaudited(change, e);
            }
        }
        try {
            if (!recorded.isEmpty()) {
                audit.sync();
            }
        } catch (UncheckedIOException e) {
            recorded.forEach(one -> unaudited(one.change(), e));
        }
        watcher.publish(made.stream().map(Made::change).toList());
    }

    /** The change is made and cannot be undone: make the missing audit line loud, and tell the caller. */
    private void unaudited(KeyChange change, UncheckedIOException e) {
        log.error("Key store {}: {} was not written to the audit log: {}", directory.pkiDir(), change, e.getMessage());
        synchronized (unaudited) {
            unaudited.add(change.id());
        }
    }

    /** Audits a change that moves no key between states (a rotation filed or rejected while it waits). */
    /** {@link #auditLocked} for many events at once: one force of the audit log for all of them. */
    void auditAllLocked(List<AuditEvent> events) throws IOException {
        flushLocked();
        try {
            for (AuditEvent event : events) {
                log.info(
                        "Key store {}: {} of {} by {} ({})",
                        directory.pkiDir(),
                        event.event(),
                        event.id(),
                        event.actor(),
                        event.reason());
                audit.record(event);
            }
            audit.sync();
        } catch (UncheckedIOException e) {
            log.error(
                    "Key store {}: {} changes were not written to the audit log: {}",
                    directory.pkiDir(),
                    events.size(),
                    e.getMessage());
            synchronized (unaudited) {
                events.forEach(event -> unaudited.add(event.id()));
            }
        }
    }

    void auditLocked(AuditEvent event) throws IOException {
        flushLocked();
        log.info(
                "Key store {}: {} of {} by {} ({})",
                directory.pkiDir(),
                event.event(),
                event.id(),
                event.actor(),
                event.reason());
        try {
            audit.record(event);
            audit.sync();
        } catch (UncheckedIOException e) {
            log.error(
                    "Key store {}: {} of {} was not written to the audit log: {}",
                    directory.pkiDir(),
                    event.event(),
                    event.id(),
                    e.getMessage());
            synchronized (unaudited) {
                unaudited.add(event.id());
            }
        }
    }

    /** The ids of changes made but not audited since the last call, in order; emptied by the call. */
    List<String> drainUnaudited() {
        synchronized (unaudited) {
            List<String> ids = List.copyOf(unaudited);
            unaudited.clear();
            return ids;
        }
    }

    /** Ends the tenure of {@code id}'s entries that {@code fresh} no longer holds as they were. */
    private static void endTenure(Snapshot old, Snapshot fresh, String id) {
        for (boolean denied : new boolean[] {false, true}) {
            Entry before = denied ? old.denied.get(id) : old.keys.get(id);
            Entry after = denied ? fresh.denied.get(id) : fresh.keys.get(id);
            if (before != null && (after == null || after.tenure() != before.tenure())) {
                before.tenure().end();
            }
        }
    }
}

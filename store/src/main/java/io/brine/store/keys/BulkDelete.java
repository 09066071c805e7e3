package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.AdminResult.Status;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * brine-key's deletion of many keys at once ({@code -D}, or {@code -d} with a glob), without the store's snapshot of
 * every parsed key. The store lock is held from {@link #open} to {@link #close}: a running master, which takes the
 * lock to catch up with other writers, sees every deletion of the run at once, ends those minions' sessions and
 * rotates the publish key once. Each key is judged on its file under the lock and bound to the fingerprint the admin
 * saw, as {@link AdminOperations} judges one; each deletion is one audit line. What each write costs otherwise (an
 * fsync of the directory and of the audit log, the change counter) is paid once per {@value #BATCH} deletions, so
 * a machine crash (not a killed process) may lose the audit lines of the last batch.
 */
@SuppressWarnings("try") // the lock is held from open() to close()
public final class BulkDelete implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(BulkDelete.class);
    static final int BATCH = 1000;

    private final KeyDirectory directory;
    private final StoreLock lock;
    private final StoreLock.Held held;
    private final AuditLog audit;
    private final KeyFileCheck check = new KeyFileCheck();
    private final Set<Path> touched = new LinkedHashSet<>();
    private final List<String> auditedSinceSync = new ArrayList<>();
    private final List<String> unaudited = new ArrayList<>();
    private int sinceFlush;
    private boolean closed;

    private BulkDelete(KeyDirectory directory, StoreLock lock, StoreLock.Held held, AuditLog audit) {
        this.directory = directory;
        this.lock = lock;
        this.held = held;
        this.audit = audit;
    }

    /**
     * Takes the store lock of {@code pkiDir} (waiting for the master or another brine-key) until {@link #close}.
     * {@code audit} may be {@link AuditLog#none()} (an unaudited run, as the caller warned).
     *
     * @throws KeyStoreException for a missing or unsafe pki dir
     */
    public static BulkDelete open(Path pkiDir, AuditLog audit) throws IOException, KeyStoreException {
        KeyDirectory directory = KeyDirectory.of(pkiDir, false);
        StoreLock lock = StoreLock.open(directory.pkiDir());
        try {
            return new BulkDelete(directory, lock, lock.acquire(), audit);
        } catch (IOException | RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    /**
     * Deletes the key of {@code id} in {@code from} (for an exclusive state, only when that is the id's strongest
     * one, as the store sees it), if it still has {@code expectedFingerprint} (any key when null).
     */
    public AdminResult delete(String id, KeyState from, String expectedFingerprint, String actor) {
        MinionIds.requireValid(id);
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(actor, "actor");
        if (closed) {
            throw new IllegalStateException("the bulk delete is closed");
        }
        String expected = null;
        if (expectedFingerprint != null) {
            expected = Fingerprints.normalize(expectedFingerprint);
            if (expected == null) {
                throw new IllegalArgumentException(MinionIds.printable(expectedFingerprint)
                        + " is not a fingerprint (expected 32 hex bytes, e.g. ab:cd:...)");
            }
        }
        try {
            return deleteLocked(id, from, expected, actor);
        } catch (IOException e) {
            return AdminResult.of(id, Status.REFUSED, id + ": delete failed: " + e.getMessage());
        }
    }

    private AdminResult deleteLocked(String id, KeyState from, String expected, String actor) throws IOException {
        KeyState state = null;
        Path path = null;
        PosixFileAttributes attributes = null;
        for (KeyState candidate : from.exclusive() ? KeyDirectory.PRECEDENCE : List.of(KeyState.DENIED)) {
            Path file = MinionIds.resolveInside(directory.dir(candidate), id);
            Optional<PosixFileAttributes> found = AtomicFiles.attributes(file);
            if (found.isPresent()) {
                state = candidate;
                path = file;
                attributes = found.get();
                break;
            }
        }
        if (state != from) {
            if (state != null && expected != null) {
                // Another key took the id since it was listed: say so, as the store does.
                String now = check.check(path, attributes).fingerprint();
                if (!expected.equals(now)) {
                    return AdminResult.replaced(id, state, now, from, expected);
                }
            }
            return AdminResult.of(
                    id,
                    Status.NOT_FOUND,
                    id + ": no " + from.label() + " key" + (state == null ? "" : " (the id is " + state.label() + ")"));
        }
        KeyFileCheck.Verdict verdict = check.check(path, attributes);
        if (verdict.problem() != null) {
            return AdminResult.of(
                    id,
                    Status.REFUSED,
                    id + ": " + KeyDirectory.relative(state, id) + " " + verdict.problem()
                            + "; not acted on: fix or remove it by hand");
        }
        String fingerprint = verdict.fingerprint();
        if (expected != null && !expected.equals(fingerprint)) {
            return AdminResult.of(
                    id,
                    Status.REFUSED,
                    id + ": the " + state.label() + " key has fingerprint " + fingerprint + ", not " + expected
                            + "; nothing changed");
        }
        Files.delete(path);
        if (state != KeyState.DENIED) {
            directory.marks().unmark(id); // the id holds no key: its kind goes with it
        }
        if (state == KeyState.ACCEPTED) {
            directory.asks().dropLocked(id);
        }
        touched.add(path.getParent());
        record(id, from, fingerprint, actor);
        if (++sinceFlush >= BATCH) {
            flush();
        }
        return AdminResult.done(id, from, Optional.empty(), fingerprint, id + ": deleted");
    }

    private void record(String id, KeyState from, String fingerprint, String actor) {
        try {
            audit.record(AuditEvent.builder("key-deleted", actor)
                    .id(id)
                    .from(from.label())
                    .fingerprint(fingerprint)
                    .reason("deleted by admin")
                    .build());
            auditedSinceSync.add(id);
        } catch (UncheckedIOException e) {
            log.error(
                    "Key store {}: deletion of {} was not written to the audit log: {}",
                    directory.pkiDir(),
                    id,
                    e.getMessage());
            unaudited.add(id);
        }
    }

    /** Forces the batch's deletions and audit lines to disk and bumps the change counter. */
    private void flush() {
        for (Path dir : touched) {
            try {
                AtomicFiles.forceDirectory(dir);
            } catch (IOException e) {
                log.debug("Cannot fsync {}: {}", dir, e.toString());
            }
        }
        touched.clear();
        if (!auditedSinceSync.isEmpty()) {
            try {
                audit.sync();
            } catch (UncheckedIOException e) {
                log.error(
                        "Key store {}: the audit log could not be forced to disk: {}",
                        directory.pkiDir(),
                        e.getMessage());
                unaudited.addAll(auditedSinceSync);
            }
        }
        auditedSinceSync.clear();
        if (sinceFlush > 0) {
            try {
                lock.bumpGeneration();
            } catch (IOException e) {
                // Made on disk: other processes still see it by the directories' times.
                log.warn(
                        "Key store {}: keys deleted, but the change counter in {} could not be bumped: {}",
                        directory.pkiDir(),
                        StoreLock.FILE_NAME,
                        e.getMessage());
            }
        }
        sinceFlush = 0;
    }

    /** The ids deleted but not (surely) audited so far, in order. */
    public List<String> unaudited() {
        return List.copyOf(unaudited);
    }

    /** Forces the last batch to disk and releases the lock. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            flush();
        } finally {
            held.close();
            try {
                lock.close();
            } catch (IOException e) {
                log.debug("Closing the lock of {}: {}", directory.pkiDir(), e.toString());
            }
        }
    }
}

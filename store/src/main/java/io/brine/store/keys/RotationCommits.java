package io.brine.store.keys;

import io.brine.daemon.CrashPoints;
import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.store.keys.KeyDirectory.DiskEntry;
import io.brine.store.keys.KeyTransitions.Current;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Minions' key rotations in the file store ({@link FileKeyStore#rotate}), as a group commit: whoever takes the store
 * lock decides and writes every rotation queued by then, on the id's files as they are there, and makes them durable
 * together. In this order: each retired record written whole, {@code minions_retired/} forced once; then each new key
 * written whole over {@code minions/ID} (the rename is the rotation), {@code minions/} forced once, the counter bumped
 * once, the audit lines written and forced once ({@link KeyWrites#flushLocked}); only then is any of them answered. A
 * crash anywhere leaves each id with its old key or its new one, whole, and no key replaced before its retired record
 * is durable; a minion not answered keeps both keys and signs in with either. One batch holds an id and a new key
 * once: a second request of either is decided after the first is durable, on what it left.
 */
final class RotationCommits {

    private final KeyDirectory directory;
    private final StoreLock lock;
    private final KeyWrites writes;
    private final RetiredKeys retired;
    private final PendingRotations waiting;
    private final Queue<Rotation> queued = new ConcurrentLinkedQueue<>();

    RotationCommits(
            KeyDirectory directory, StoreLock lock, KeyWrites writes, RetiredKeys retired, PendingRotations waiting) {
        this.directory = directory;
        this.lock = lock;
        this.writes = writes;
        this.retired = retired;
        this.waiting = waiting;
    }

    /** The caller checked the request and the new key ({@link KeyStore#checkRotation}). */
    RotationDecision rotate(
            String id, RSAPublicKey oldKey, RSAPublicKey newKey, KeyRotationPolicy policy, String actor) {
        Rotation mine = new Rotation(id, oldKey, newKey, policy, actor);
        GroupCommit.join(queued, mine, lock, this::commitQueuedLocked, e -> failure(id, e));
        return mine.decision;
    }

    /** The rotations waiting for a group commit to take them (tests). */
    int queued() {
        return queued.size();
    }

    private UncheckedIOException failure(String id, IOException e) {
        return new UncheckedIOException(
                "key store " + directory.pkiDir() + ": cannot rotate the key of " + id + ": " + e.getMessage(), e);
    }

    /** Commits every rotation queued by now, in rounds that hold an id and a new key once each. */
    private void commitQueuedLocked() {
        List<Rotation> batch = new ArrayList<>();
        for (Rotation next = queued.poll(); next != null; next = queued.poll()) {
            batch.add(next);
        }
        while (!batch.isEmpty()) {
            List<Rotation> round = new ArrayList<>();
            List<Rotation> later = new ArrayList<>();
            Set<String> ids = new HashSet<>();
            Set<String> newKeys = new HashSet<>();
            for (Rotation one : batch) {
                boolean first = ids.add(one.id) & newKeys.add(one.newFingerprint);
                (first ? round : later).add(one);
            }
            commitLocked(round);
            batch = later;
        }
    }

    private void commitLocked(List<Rotation> round) {
        List<Rotation> rotating = new ArrayList<>();
        writes.beginBatchLocked();
        try {
            writes.syncLocked();
            for (Rotation one : round) {
                try {
                    if (decideLocked(one)) {
                        retired.retireUnforcedLocked(one.id, one.oldFingerprint);
                        rotating.add(one);
                    }
                } catch (IOException | RuntimeException e) {
                    one.failure = e;
                }
            }
            if (!rotating.isEmpty()) {
                writes.forceLocked(retired.dir());
                CrashPoints.reach("master-rotation-retired");
            }
            for (Rotation one : rotating) {
                try {
                    writes.rotateLocked(one.current, one.newKey, one.actor, (RotationDecision.Rotated) one.decision);
                } catch (IOException | RuntimeException e) {
                    one.failure = e;
                }
            }
            writes.flushLocked();
            for (Rotation one : rotating) {
                if (one.failure == null) {
                    dropWaitingLocked(one.id);
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            // Not durable, or not known to be: nobody whose key was being written is answered as if it were.
            for (Rotation one : rotating) {
                one.decision = null;
                one.failure = one.failure != null ? one.failure : e;
            }
            for (Rotation one : round) {
                if (one.decision == null && one.failure == null) {
                    one.failure = e;
                }
            }
            if (e instanceof Error error) {
                throw error;
            }
        } finally {
            writes.endBatchLocked();
            for (Rotation one : round) {
                one.done = true;
            }
        }
    }

    /**
     * Decides {@code one} on the id's files: the accepted key as the synced snapshot holds it while {@code minions/ID}
     * is the version it was read from (not read and checked again: it was checked when it was admitted), else as read
     * from disk. True when it is to be written; a decision that writes no key is made here (a rotation filed to wait
     * for an admin, with its audit line).
     */
    private boolean decideLocked(Rotation one) throws IOException {
        String id = one.id;
        Optional<DiskEntry> current =
                directory.readMain(id, writes.workingLocked().entry(KeyState.ACCEPTED, id));
        MinionKind kind = directory.kindOf(id);
        StoredKey onDisk = current.map(DiskEntry::key).orElse(null);
        Current old = current.isEmpty()
                ? Current.NONE
                : onDisk == null
                        ? Current.unreadable(current.get().state(), kind)
                        : Current.of(KeyLookup.of(onDisk.state(), onDisk.key(), one.oldKey), kind);
        Current replacement =
                onDisk == null ? old : Current.of(KeyLookup.of(onDisk.state(), onDisk.key(), one.newKey), kind);
        KeyTransitions.RotationPlan plan = KeyTransitions.planRotation(
                old,
                replacement,
                one.policy,
                writes.workingLocked().otherIds(one.newFingerprint, id),
                retired.of(id).contains(one.newFingerprint));
        RotationDecision decision = plan.decision(id, one.oldFingerprint, one.newFingerprint);
        if (plan.rotates() && one.policy == KeyRotationPolicy.PENDING) {
            one.decision = pendingLocked(one);
            return false;
        }
        one.decision = decision;
        if (plan.already()) {
            waiting.removeLocked(id);
        }
        if (!plan.rotates()) {
            return false;
        }
        one.current = current.get();
        return true;
    }

    /**
     * Drops the id's rotation that waited for an admin, now that the id's new key is durable; one left by a failure
     * here names the accepted key, and the next rotation or accept drops it as done.
     */
    private void dropWaitingLocked(String id) {
        try {
            waiting.removeLocked(id);
        } catch (IOException e) {
            // left, as above
        }
    }

    /** Files the new key to wait for an admin ({@code key_rotation: pending}), replacing one that waited. */
    private RotationDecision.Pending pendingLocked(Rotation one) throws IOException {
        String id = one.id;
        Optional<RSAPublicKey> before = waiting.of(id)
                .filter(w -> w.oldFingerprint().equals(one.oldFingerprint))
                .map(PendingRotations.Waiting::newKey);
        String reason = "the new key awaits an admin (key_rotation: pending)";
        if (before.isPresent() && KeyLookup.sameKey(before.get(), one.newKey)) {
            return new RotationDecision.Pending(id, one.oldFingerprint, one.newFingerprint, reason);
        }
        RotationDecision.Pending pending = new RotationDecision.Pending(
                id,
                one.oldFingerprint,
                one.newFingerprint,
                reason
                        + (before.isPresent()
                                ? "; replaces the rotation to " + Fingerprints.of(before.get()) + " that was waiting"
                                : ""));
        waiting.putLocked(id, one.oldFingerprint, one.newKey);
        writes.auditLocked(KeyStore.rotationPendingEvent(id, one.actor, pending));
        return pending;
    }

    /** A rotation waiting for the lock; its decision is made and written under the lock. */
    private static final class Rotation extends GroupCommit.Request {
        final String id;
        final RSAPublicKey oldKey;
        final RSAPublicKey newKey;
        final KeyRotationPolicy policy;
        final String actor;
        final String oldFingerprint;
        final String newFingerprint;
        DiskEntry current;
        RotationDecision decision;

        Rotation(String id, RSAPublicKey oldKey, RSAPublicKey newKey, KeyRotationPolicy policy, String actor) {
            this.id = id;
            this.oldKey = oldKey;
            this.newKey = newKey;
            this.policy = policy;
            this.actor = actor;
            this.oldFingerprint = Fingerprints.of(oldKey);
            this.newFingerprint = Fingerprints.of(newKey);
        }
    }
}

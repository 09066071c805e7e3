package io.brine.store.keys;

import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.store.keys.AdminResult.Status;
import io.brine.store.keys.KeyDirectory.DiskEntry;
import io.brine.store.keys.Snapshot.Entry;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What an admin (brine-key, the master's revoke) does to one key: accept, reject or delete it, judged on the id's
 * files as they are under the lock, never on the snapshot alone. A stored key is never replaced; a fingerprint the
 * admin saw (DESIGN.md §4.6) must be the key's.
 */
@SuppressWarnings("try") // try (StoreLock.Held held = lock.acquire()) holds the lock for the block; held is unused
final class AdminOperations {

    private final KeyDirectory directory;
    private final StoreLock lock;
    private final KeyWrites writes;
    private final int maxMinions;

    AdminOperations(KeyDirectory directory, StoreLock lock, KeyWrites writes, int maxMinions) {
        this.directory = directory;
        this.lock = lock;
        this.writes = writes;
        this.maxMinions = maxMinions;
    }

    AdminResult accept(String id, KeyState from, String expectedFingerprint, String actor) {
        requireOneOf(from, KeyState.PENDING, KeyState.REJECTED, KeyState.DENIED);
        return operation(id, from, KeyState.ACCEPTED, expectedFingerprint, actor);
    }

    AdminResult reject(String id, KeyState from, String expectedFingerprint, String actor) {
        requireOneOf(from, KeyState.PENDING, KeyState.ACCEPTED, KeyState.DENIED);
        return operation(id, from, KeyState.REJECTED, expectedFingerprint, actor);
    }

    /** Rejects the key of {@code id} wherever it is, pending or accepted; a rejected id is left as it is. */
    AdminResult reject(String id, String expectedFingerprint, String actor) {
        MinionIds.requireValid(id);
        Entry entry = writes.snapshot().keys.get(id);
        KeyState from =
                entry != null && entry.key().state() == KeyState.ACCEPTED ? KeyState.ACCEPTED : KeyState.PENDING;
        AdminResult result = reject(id, from, expectedFingerprint, actor);
        if (result.status() == Status.NOT_FOUND) {
            // The snapshot was stale: try the other state once (each attempt re-reads the disk under the lock).
            result = reject(
                    id, from == KeyState.ACCEPTED ? KeyState.PENDING : KeyState.ACCEPTED, expectedFingerprint, actor);
        }
        return result;
    }

    /** Deletes the id's pending, accepted or rejected key and its denied key. */
    AdminResult delete(String id, String actor) {
        MinionIds.requireValid(id);
        AdminResult main = AdminResult.of(id, Status.NOT_FOUND, id + ": no key");
        for (KeyState state : KeyDirectory.PRECEDENCE) {
            AdminResult result = delete(id, state, null, actor);
            if (result.status() != Status.NOT_FOUND) {
                main = result;
                break;
            }
        }
        AdminResult denied = delete(id, KeyState.DENIED, null, actor);
        return main.status() == Status.NOT_FOUND && denied.status() != Status.NOT_FOUND ? denied : main;
    }

    AdminResult delete(String id, KeyState from, String expectedFingerprint, String actor) {
        Objects.requireNonNull(from, "from");
        return operation(id, from, null, expectedFingerprint, actor);
    }

    private AdminResult operation(String id, KeyState from, KeyState to, String expectedFingerprint, String actor) {
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
        try (StoreLock.Held held = lock.acquire()) {
            writes.syncLocked();
            return operationLocked(id, from, to, expected, actor);
        } catch (IOException e) {
            return AdminResult.of(id, Status.REFUSED, id + ": " + verb(to) + " failed: " + e.getMessage());
        }
    }

    private AdminResult operationLocked(String id, KeyState from, KeyState to, String expected, String actor)
            throws IOException {
        Optional<DiskEntry> main = directory.readMain(id);
        DiskEntry source;
        if (from.exclusive()) {
            if (main.isEmpty() || main.get().state() != from) {
                String now = main.map(m -> m.key() == null ? null : m.key().fingerprint())
                        .orElse(null);
                if (main.isPresent() && main.get().state() == to && (expected == null || expected.equals(now))) {
                    return AdminResult.of(id, Status.UNCHANGED, id + ": already " + to.label());
                }
                if (main.isPresent() && expected != null && !expected.equals(now)) {
                    // Another key took the id since it was listed: never report it as this one's outcome.
                    return AdminResult.replaced(id, main.get().state(), now, from, expected);
                }
                return AdminResult.of(
                        id,
                        Status.NOT_FOUND,
                        id + ": no " + from.label() + " key"
                                + main.map(m -> " (the id is " + m.state().label() + ")")
                                        .orElse(""));
            }
            source = main.get();
        } else {
            Optional<DiskEntry> denied = directory.readOne(KeyState.DENIED, id);
            if (denied.isEmpty()) {
                return AdminResult.of(id, Status.NOT_FOUND, id + ": no denied key");
            }
            if (to != null && main.isPresent()) {
                DiskEntry other = main.get();
                if (other.state() == KeyState.REJECTED && to == KeyState.REJECTED) {
                    return AdminResult.of(
                            id, Status.UNCHANGED, id + ": already rejected; its denied key is left" + " in place");
                }
                return AdminResult.of(
                        id,
                        Status.REFUSED,
                        id + ": already has " + (other.state() == KeyState.ACCEPTED ? "an " : "a ")
                                + other.state().label() + " key"
                                + (other.key() == null ? "" : " (" + other.key().fingerprint() + ")")
                                + "; a denied key never replaces a stored key. Delete the id's keys and let the minion"
                                + " offer its key again");
            }
            source = denied.get();
        }
        if (source.key() == null) {
            return AdminResult.of(
                    id,
                    Status.REFUSED,
                    id + ": " + KeyDirectory.relative(source.state(), id) + " " + source.problem()
                            + "; not acted on: fix or remove it by hand");
        }
        if (expected != null && !expected.equals(source.key().fingerprint())) {
            return AdminResult.of(
                    id,
                    Status.REFUSED,
                    id + ": the " + source.state().label() + " key has fingerprint "
                            + source.key().fingerprint() + ", not " + expected + "; nothing changed");
        }
        if (to == KeyState.ACCEPTED && maxMinions > 0 && writes.snapshot().count(KeyState.ACCEPTED) >= maxMinions) {
            return AdminResult.of(id, Status.REFUSED, id + ": max minions (" + maxMinions + ") reached");
        }
        String fingerprint = source.key().fingerprint();
        if (to == null) {
            writes.deleteLocked(source, actor, "deleted by admin");
            return AdminResult.done(id, from, Optional.empty(), fingerprint, id + ": deleted");
        }
        List<String> sharing = writes.snapshot().otherIds(fingerprint, id);
        writes.moveLocked(
                source,
                to,
                actor,
                to.label() + " by admin" + (sharing.isEmpty() ? "" : "; " + KeyListing.sameKeyAs(sharing)));
        return AdminResult.done(id, from, Optional.of(to), fingerprint, id + ": " + to.label());
    }

    private static String verb(KeyState to) {
        return to == null
                ? "delete"
                : to == KeyState.ACCEPTED ? "accept" : to == KeyState.REJECTED ? "reject" : to.label();
    }

    private static void requireOneOf(KeyState state, KeyState... allowed) {
        if (!Arrays.asList(allowed).contains(state)) {
            throw new IllegalArgumentException("cannot start from " + state + "; allowed: " + Arrays.toString(allowed));
        }
    }
}

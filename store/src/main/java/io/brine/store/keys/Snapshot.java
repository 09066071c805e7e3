package io.brine.store.keys;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * An immutable picture of the pki dir: the valid key of each id (exclusive states), denied keys, and problems.
 * Replaced as a whole, under the store lock; read without it.
 */
final class Snapshot {

    /**
     * What identifies one version of a file, taken before the file is read, so a rescan (and a rotation's
     * {@code KeyDirectory.readMain(id, known)}) reads and checks again only what changed: its identity (device and
     * inode: a file replaced by a rename or a copy is another), size, mtime and ctime. Sound because a user can set
     * the mtime ({@code touch -d}, {@code cp -p}, {@code rsync -t}) but not the ctime: the kernel sets it to the
     * current time at every write, truncate, chmod, chown or rename of the inode, so a file written in place since
     * the stamp has another ctime even when its size and mtime were put back, and a version stamped before a write
     * that raced its read is read again at the next rescan. Assumes a filesystem that keeps a ctime (every local
     * POSIX one; the {@code unix} attribute view); where it is unavailable, {@code changed} is null and the stamp
     * {@link #matches} nothing, so every file is read at each rescan, as before. What it does not see: an edit in
     * the same clock tick as the stamp that keeps size and mtime (the kernel's ctime granularity: nanoseconds on
     * ext4, xfs, btrfs and tmpfs).
     */
    record FileStamp(Object fileKey, long size, FileTime modified, FileTime changed) {

        /** The stamp of the file at {@code path}, whose {@code attributes} were just read (not following links). */
        static FileStamp of(Path path, BasicFileAttributes attributes) {
            return new FileStamp(attributes.fileKey(), attributes.size(), attributes.lastModifiedTime(), ctime(path));
        }

        /** Whether both stamps name the same version of a file: never when either lacks an identity or a ctime. */
        boolean matches(FileStamp other) {
            return other != null && fileKey != null && changed != null && other.changed != null && equals(other);
        }

        private static FileTime ctime(Path path) {
            try {
                return (FileTime) Files.getAttribute(path, "unix:ctime", LinkOption.NOFOLLOW_LINKS);
            } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
                // No ctime (another filesystem or platform) or the file just went: read the file every time.
                return null;
            }
        }
    }

    /**
     * An id's key as one version of its file. {@code tenure} lasts while the id keeps this key in this state: a
     * rescan that finds the same key again (a touched or rewritten file) keeps it; a move, a delete or another key
     * ends it.
     */
    record Entry(StoredKey key, FileStamp stamp, Tenure tenure) {

        static Entry of(StoredKey key, FileStamp stamp) {
            return new Entry(key, stamp, new Tenure());
        }

        /** The same key in the same state, found in a new version of its file. */
        Entry restamped(StoredKey reread, FileStamp newStamp) {
            return new Entry(reread, newStamp, tenure);
        }
    }

    /**
     * Whether an entry is still the id's entry in the store. Ended (under the store lock) before the snapshot that
     * drops the entry is published and before listeners hear of the change, so a reader that still sees it current
     * has acted before anything the change set off.
     */
    static final class Tenure {
        private volatile boolean ended;

        boolean current() {
            return !ended;
        }

        void end() {
            ended = true;
        }
    }

    static final Snapshot EMPTY = new Snapshot(Long.MIN_VALUE, List.of(), Map.of(), Map.of(), List.of(), 0);

    /** The change counter of the lock file when this picture was known to be exact. */
    final long generation;
    /** The state directories' identities and modification times at that moment. */
    final List<Object> dirStamps;
    /** The id's key in its exclusive state. */
    final ShardedMap<Entry> keys;

    final ShardedMap<Entry> denied;
    final List<KeyProblem> problems;
    /** {@link System#nanoTime()} of the last full scan. */
    final long scannedAtNanos;

    private final Map<KeyState, Integer> counts;
    /** The ids each key (by fingerprint) is stored under, in any state, denied too (an id once per file). */
    private final ShardedMap<List<String>> owners;
    /** Made on first use: most snapshots (one per key written) are never asked. Racy but idempotent. */
    private volatile Set<String> acceptedIds;

    Snapshot(
            long generation,
            List<Object> dirStamps,
            Map<String, Entry> keys,
            Map<String, Entry> denied,
            List<KeyProblem> problems,
            long scannedAtNanos) {
        this(
                generation,
                dirStamps,
                keys,
                denied,
                problems,
                scannedAtNanos,
                count(keys, denied),
                null,
                owners(keys, denied));
    }

    private static ShardedMap<List<String>> owners(Map<String, Entry> keys, Map<String, Entry> denied) {
        Map<String, List<String>> owners = new HashMap<>();
        for (Map<String, Entry> map : List.of(keys, denied)) {
            for (Entry entry : map.values()) {
                owners.computeIfAbsent(entry.key().fingerprint(), f -> new ArrayList<>())
                        .add(entry.key().id());
            }
        }
        owners.replaceAll((fingerprint, ids) -> List.copyOf(ids));
        return ShardedMap.copyOf(owners);
    }

    private static ShardedMap<List<String>> adding(ShardedMap<List<String>> owners, Entry entry) {
        List<String> ids = new ArrayList<>(owners.getOrDefault(entry.key().fingerprint(), List.of()));
        ids.add(entry.key().id());
        return owners.with(entry.key().fingerprint(), List.copyOf(ids));
    }

    private static ShardedMap<List<String>> removing(ShardedMap<List<String>> owners, Entry entry) {
        if (entry == null) {
            return owners;
        }
        List<String> ids = new ArrayList<>(owners.getOrDefault(entry.key().fingerprint(), List.of()));
        ids.remove(entry.key().id());
        return ids.isEmpty()
                ? owners.without(entry.key().fingerprint())
                : owners.with(entry.key().fingerprint(), List.copyOf(ids));
    }

    /** The ids other than {@code id} that the key with {@code fingerprint} is stored under, in any state, sorted. */
    List<String> otherIds(String fingerprint, String id) {
        List<String> ids = owners.get(fingerprint);
        if (ids == null) {
            return List.of();
        }
        return ids.stream()
                .filter(other -> !other.equals(id))
                .distinct()
                .sorted()
                .toList();
    }

    /**
     * Every write makes a new snapshot, so nothing here may cost O(keys): with 10,000 minions authenticating,
     * copying the maps and rebuilding the counts and the sorted accepted ids per key written made the store's CPU
     * grow with the square of the minions. The maps share all but the changed shard; counts follow each change.
     */
    private Snapshot(
            long generation,
            List<Object> dirStamps,
            Map<String, Entry> keys,
            Map<String, Entry> denied,
            List<KeyProblem> problems,
            long scannedAtNanos,
            Map<KeyState, Integer> counts,
            Set<String> acceptedIds,
            ShardedMap<List<String>> owners) {
        this.generation = generation;
        this.dirStamps = List.copyOf(dirStamps);
        this.keys = ShardedMap.copyOf(keys);
        this.denied = ShardedMap.copyOf(denied);
        this.problems = List.copyOf(problems);
        this.scannedAtNanos = scannedAtNanos;
        this.counts = counts;
        this.acceptedIds = acceptedIds;
        this.owners = owners;
    }

    private static Map<KeyState, Integer> count(Map<String, Entry> keys, Map<String, Entry> denied) {
        EnumMap<KeyState, Integer> counted = new EnumMap<>(KeyState.class);
        for (KeyState state : KeyState.values()) {
            counted.put(state, 0);
        }
        for (Entry entry : keys.values()) {
            counted.merge(entry.key().state(), 1, Integer::sum);
        }
        counted.put(KeyState.DENIED, denied.size());
        return counted;
    }

    int count(KeyState state) {
        return counts.get(state);
    }

    Set<String> acceptedIds() {
        Set<String> ids = acceptedIds;
        if (ids == null) {
            Set<String> accepted = new TreeSet<>();
            for (Entry entry : keys.values()) {
                if (entry.key().state() == KeyState.ACCEPTED) {
                    accepted.add(entry.key().id());
                }
            }
            ids = Collections.unmodifiableSet(new LinkedHashSet<>(accepted));
            acceptedIds = ids;
        }
        return ids;
    }

    Entry entry(KeyState state, String id) {
        Entry entry = state == KeyState.DENIED ? denied.get(id) : keys.get(id);
        return entry != null && entry.key().state() == state ? entry : null;
    }

    Snapshot with(Entry entry) {
        String id = entry.key().id();
        if (entry.key().state() == KeyState.DENIED) {
            ShardedMap<Entry> copy = denied.with(id, entry);
            EnumMap<KeyState, Integer> counted = new EnumMap<>(counts);
            counted.put(KeyState.DENIED, copy.size());
            return new Snapshot(
                    generation,
                    dirStamps,
                    keys,
                    copy,
                    problems,
                    scannedAtNanos,
                    counted,
                    acceptedIds,
                    adding(removing(owners, denied.get(id)), entry));
        }
        Entry replaced = keys.get(id);
        ShardedMap<Entry> copy = keys.with(id, entry);
        EnumMap<KeyState, Integer> counted = new EnumMap<>(counts);
        if (replaced != null) {
            counted.merge(replaced.key().state(), -1, Integer::sum);
        }
        counted.merge(entry.key().state(), 1, Integer::sum);
        boolean acceptedSame = (replaced != null && replaced.key().state() == KeyState.ACCEPTED)
                == (entry.key().state() == KeyState.ACCEPTED);
        return new Snapshot(
                generation,
                dirStamps,
                copy,
                denied,
                problems,
                scannedAtNanos,
                counted,
                acceptedSame ? acceptedIds : null,
                adding(removing(owners, replaced), entry));
    }

    Snapshot without(KeyState state, String id) {
        if (state == KeyState.DENIED) {
            ShardedMap<Entry> copy = denied.without(id);
            EnumMap<KeyState, Integer> counted = new EnumMap<>(counts);
            counted.put(KeyState.DENIED, copy.size());
            return new Snapshot(
                    generation,
                    dirStamps,
                    keys,
                    copy,
                    problems,
                    scannedAtNanos,
                    counted,
                    acceptedIds,
                    removing(owners, denied.get(id)));
        }
        Entry removed = keys.get(id);
        if (removed == null) {
            return this;
        }
        ShardedMap<Entry> copy = keys.without(id);
        EnumMap<KeyState, Integer> counted = new EnumMap<>(counts);
        counted.merge(removed.key().state(), -1, Integer::sum);
        return new Snapshot(
                generation,
                dirStamps,
                copy,
                denied,
                problems,
                scannedAtNanos,
                counted,
                removed.key().state() == KeyState.ACCEPTED ? null : acceptedIds,
                removing(owners, removed));
    }

    Snapshot synced(long newGeneration, List<Object> newDirStamps) {
        return new Snapshot(
                newGeneration, newDirStamps, keys, denied, problems, scannedAtNanos, counts, acceptedIds, owners);
    }
}

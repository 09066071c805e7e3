package io.brine.master.keys;

import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
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

    /** What identifies one version of a file, so a rescan parses only what changed. */
    record FileStamp(Object fileKey, long size, FileTime modified) {
        static FileStamp of(BasicFileAttributes attributes) {
            return new FileStamp(attributes.fileKey(), attributes.size(), attributes.lastModifiedTime());
        }
    }

    record Entry(StoredKey key, FileStamp stamp) {
    }

    static final Snapshot EMPTY = new Snapshot(Long.MIN_VALUE, List.of(), Map.of(), Map.of(), List.of(), 0);

    /** The change counter of the lock file when this picture was known to be exact. */
    final long generation;
    /** The state directories' identities and modification times at that moment. */
    final List<Object> dirStamps;
    /** The id's key in its exclusive state. */
    final Map<String, Entry> keys;
    final Map<String, Entry> denied;
    final List<KeyProblem> problems;
    /** {@link System#nanoTime()} of the last full scan. */
    final long scannedAtNanos;
    private final Map<KeyState, Integer> counts;
    private final Set<String> acceptedIds;

    Snapshot(long generation, List<Object> dirStamps, Map<String, Entry> keys, Map<String, Entry> denied,
            List<KeyProblem> problems, long scannedAtNanos) {
        this.generation = generation;
        this.dirStamps = List.copyOf(dirStamps);
        this.keys = Collections.unmodifiableMap(keys);
        this.denied = Collections.unmodifiableMap(denied);
        this.problems = List.copyOf(problems);
        this.scannedAtNanos = scannedAtNanos;
        EnumMap<KeyState, Integer> counted = new EnumMap<>(KeyState.class);
        for (KeyState state : KeyState.values()) {
            counted.put(state, 0);
        }
        Set<String> accepted = new TreeSet<>();
        for (Entry entry : keys.values()) {
            counted.merge(entry.key().state(), 1, Integer::sum);
            if (entry.key().state() == KeyState.ACCEPTED) {
                accepted.add(entry.key().id());
            }
        }
        counted.put(KeyState.DENIED, denied.size());
        this.counts = counted;
        this.acceptedIds = Collections.unmodifiableSet(new LinkedHashSet<>(accepted));
    }

    int count(KeyState state) {
        return counts.get(state);
    }

    Set<String> acceptedIds() {
        return acceptedIds;
    }

    Entry entry(KeyState state, String id) {
        Entry entry = state == KeyState.DENIED ? denied.get(id) : keys.get(id);
        return entry != null && entry.key().state() == state ? entry : null;
    }

    Snapshot with(Entry entry) {
        String id = entry.key().id();
        if (entry.key().state() == KeyState.DENIED) {
            Map<String, Entry> copy = new HashMap<>(denied);
            copy.put(id, entry);
            return new Snapshot(generation, dirStamps, keys, copy, problems, scannedAtNanos);
        }
        Map<String, Entry> copy = new HashMap<>(keys);
        copy.put(id, entry);
        return new Snapshot(generation, dirStamps, copy, denied, problems, scannedAtNanos);
    }

    Snapshot without(KeyState state, String id) {
        if (state == KeyState.DENIED) {
            Map<String, Entry> copy = new HashMap<>(denied);
            copy.remove(id);
            return new Snapshot(generation, dirStamps, keys, copy, problems, scannedAtNanos);
        }
        Map<String, Entry> copy = new HashMap<>(keys);
        copy.remove(id);
        return new Snapshot(generation, dirStamps, copy, denied, problems, scannedAtNanos);
    }

    Snapshot synced(long newGeneration, List<Object> newDirStamps) {
        return new Snapshot(newGeneration, newDirStamps, keys, denied, problems, scannedAtNanos);
    }
}

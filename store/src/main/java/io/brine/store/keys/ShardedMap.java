package io.brine.store.keys;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * An immutable map from ids whose {@link #with} and {@link #without} copy only the one shard (of {@value #SHARDS})
 * the id falls in and share the rest: the key store makes a new snapshot for every key it writes, and copying the
 * whole map each time made 10,000 first auths cost the square of that in copying.
 *
 * @param <V> the values
 */
final class ShardedMap<V> extends AbstractMap<String, V> {

    static final int SHARDS = 64;
    private static final ShardedMap<?> EMPTY = new ShardedMap<>(emptyShards(), 0);

    private final Map<String, V>[] shards;
    private final int size;

    private ShardedMap(Map<String, V>[] shards, int size) {
        this.shards = shards;
        this.size = size;
    }

    @SuppressWarnings("unchecked")
    static <V> ShardedMap<V> of() {
        return (ShardedMap<V>) EMPTY;
    }

    /** A copy of {@code map} (or {@code map} itself when it is a sharded map already). */
    static <V> ShardedMap<V> copyOf(Map<String, V> map) {
        if (map instanceof ShardedMap<V> sharded) {
            return sharded;
        }
        Map<String, V>[] shards = emptyShards();
        for (Map.Entry<String, V> entry : map.entrySet()) {
            int shard = shardOf(entry.getKey());
            if (shards[shard].isEmpty()) {
                shards[shard] = new HashMap<>();
            }
            shards[shard].put(entry.getKey(), entry.getValue());
        }
        return new ShardedMap<>(shards, map.size());
    }

    /** This map with {@code key} mapped to {@code value}. */
    ShardedMap<V> with(String key, V value) {
        int shard = shardOf(key);
        Map<String, V> copy = new HashMap<>(shards[shard]);
        boolean added = copy.put(key, value) == null;
        Map<String, V>[] next = shards.clone();
        next[shard] = copy;
        return new ShardedMap<>(next, added ? size + 1 : size);
    }

    /** This map without {@code key}. */
    ShardedMap<V> without(String key) {
        int shard = shardOf(key);
        if (!shards[shard].containsKey(key)) {
            return this;
        }
        Map<String, V> copy = new HashMap<>(shards[shard]);
        copy.remove(key);
        Map<String, V>[] next = shards.clone();
        next[shard] = copy;
        return new ShardedMap<>(next, size - 1);
    }

    @Override
    public V get(Object key) {
        return key instanceof String id ? shards[shardOf(id)].get(id) : null;
    }

    @Override
    public boolean containsKey(Object key) {
        return key instanceof String id && shards[shardOf(id)].containsKey(id);
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public Set<Map.Entry<String, V>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Map.Entry<String, V>> iterator() {
                return new Iterator<>() {
                    private int shard;
                    private Iterator<Map.Entry<String, V>> current =
                            shards[0].entrySet().iterator();

                    @Override
                    public boolean hasNext() {
                        while (!current.hasNext()) {
                            if (++shard == SHARDS) {
                                return false;
                            }
                            current = shards[shard].entrySet().iterator();
                        }
                        return true;
                    }

                    @Override
                    public Map.Entry<String, V> next() {
                        if (!hasNext()) {
                            throw new NoSuchElementException();
                        }
                        Map.Entry<String, V> entry = current.next();
                        return new SimpleImmutableEntry<>(entry);
                    }
                };
            }

            @Override
            public int size() {
                return size;
            }
        };
    }

    private static int shardOf(String key) {
        int hash = key.hashCode();
        return (hash ^ (hash >>> 16)) & (SHARDS - 1);
    }

    @SuppressWarnings("unchecked")
    private static <V> Map<String, V>[] emptyShards() {
        Map<String, V>[] shards = new Map[SHARDS];
        Arrays.fill(shards, Map.of());
        return shards;
    }
}

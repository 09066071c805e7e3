package io.brine.cluster;

import io.brine.store.keys.KeyChange;
import io.brine.store.keys.KeyChangeListener;
import io.brine.store.keys.KeyProblem;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.StoredKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This master's picture of the cluster's keys: fed by the watches on {@code /keys} and {@code /denied} and by this
 * master's own transactions, ordered per id by ZooKeeper's transaction id (zxid), so a late watch event never
 * undoes a newer write. Listeners hear every change on one thread, in the order the view applied them.
 */
final class ZkKeyView implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ZkKeyView.class);

    /** An id's key as one version of its znode; {@code tenure} ends when the znode moves on. */
    record Entry(StoredKey key, int version, long zxid, AtomicBoolean ended) {
        boolean current() {
            return !ended.get();
        }
    }

    private final Map<String, Entry> keys = new ConcurrentHashMap<>();
    private final Map<String, Entry> denied = new ConcurrentHashMap<>();
    /** The zxid of the last change applied per path ({@code k:id}, {@code d:id}), deletes included. */
    private final Map<String, Long> lastZxid = new HashMap<>();

    private final Map<String, KeyProblem> problems = new ConcurrentHashMap<>();
    private final EnumMap<KeyState, Integer> counts = new EnumMap<>(KeyState.class);
    /** The ids each key (by fingerprint) is stored under, in any state, denied included; an id once per znode. */
    private final Map<String, List<String>> owners = new HashMap<>();

    private final List<KeyChangeListener> listeners = new CopyOnWriteArrayList<>();
    private final ExecutorService notifier;
    private volatile Set<String> acceptedIds;

    ZkKeyView(String name) {
        for (KeyState state : KeyState.values()) {
            counts.put(state, 0);
        }
        this.notifier = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    Entry entry(String id) {
        return keys.get(id);
    }

    Entry deniedEntry(String id) {
        return denied.get(id);
    }

    synchronized int count(KeyState state) {
        return counts.get(state);
    }

    Set<String> acceptedIds() {
        Set<String> ids = acceptedIds;
        if (ids == null) {
            TreeSet<String> sorted = new TreeSet<>();
            keys.forEach((id, e) -> {
                if (e.key().state() == KeyState.ACCEPTED) {
                    sorted.add(id);
                }
            });
            ids = Collections.unmodifiableSet(sorted);
            acceptedIds = ids;
        }
        return ids;
    }

    Map<KeyState, List<StoredKey>> all() {
        Map<KeyState, List<StoredKey>> all = new EnumMap<>(KeyState.class);
        keys.values()
                .forEach(e -> all.computeIfAbsent(e.key().state(), s -> new ArrayList<>())
                        .add(e.key()));
        all.put(KeyState.DENIED, denied.values().stream().map(Entry::key).toList());
        return all;
    }

    /** The ids the key with {@code fingerprint} is stored under, in any state, sorted. */
    synchronized List<String> ids(String fingerprint) {
        return owners.getOrDefault(fingerprint, List.of()).stream()
                .distinct()
                .sorted()
                .toList();
    }

    /** The ids other than {@code id} that the key with {@code fingerprint} is stored under, in any state, sorted. */
    synchronized List<String> otherIds(String fingerprint, String id) {
        return owners.getOrDefault(fingerprint, List.of()).stream()
                .filter(other -> !other.equals(id))
                .distinct()
                .sorted()
                .toList();
    }

    List<KeyProblem> problems() {
        return List.copyOf(problems.values());
    }

    /**
     * The znode of {@code id} (under {@code /keys} or {@code /denied}) holds {@code key} at {@code version} as of
     * {@code zxid}; a null key means the znode is gone. Ignored when a newer change of that znode was applied.
     */
    synchronized void apply(boolean deniedNode, String id, StoredKey key, int version, long zxid) {
        String slot = (deniedNode ? "d:" : "k:") + id;
        Long last = lastZxid.get(slot);
        if (last != null && zxid < last) {
            return;
        }
        Map<String, Entry> map = deniedNode ? denied : keys;
        Entry old = map.get(id);
        if (key == null && old == null) {
            lastZxid.put(slot, zxid);
            return;
        }
        if (old != null && key != null && old.version() == version && old.zxid() == zxid) {
            return; // our own write, heard again through the watch
        }
        lastZxid.put(slot, zxid);
        boolean sameKeyAndState = old != null
                && key != null
                && old.key().state() == key.state()
                && old.key().fingerprint().equals(key.fingerprint());
        if (key == null) {
            map.remove(id);
        } else {
            map.put(id, new Entry(key, version, zxid, sameKeyAndState ? old.ended() : new AtomicBoolean()));
        }
        if (sameKeyAndState) {
            return;
        }
        if (old != null) {
            old.ended().set(true); // before any listener hears of the change (Offer.current)
            counts.merge(old.key().state(), -1, Integer::sum);
            List<String> ids = owners.get(old.key().fingerprint());
            if (ids != null) {
                ids.remove(id);
                if (ids.isEmpty()) {
                    owners.remove(old.key().fingerprint());
                }
            }
        }
        if (key != null) {
            counts.merge(key.state(), 1, Integer::sum);
            owners.computeIfAbsent(key.fingerprint(), f -> new ArrayList<>(1)).add(id);
        }
        if ((old != null && old.key().state() == KeyState.ACCEPTED)
                || (key != null && key.state() == KeyState.ACCEPTED)) {
            acceptedIds = null;
        }
        KeyChange change;
        if (deniedNode) {
            change = new KeyChange(
                    id,
                    key == null ? Optional.of(KeyState.DENIED) : Optional.empty(),
                    key == null ? Optional.empty() : Optional.of(KeyState.DENIED),
                    (key != null ? key : old.key()).fingerprint());
        } else {
            change = new KeyChange(
                    id,
                    Optional.ofNullable(old).map(e -> e.key().state()),
                    Optional.ofNullable(key).map(StoredKey::state),
                    (key != null ? key : old.key()).fingerprint());
        }
        notifier.execute(() -> {
            for (KeyChangeListener listener : listeners) {
                try {
                    listener.onChange(change);
                } catch (RuntimeException e) {
                    log.error("Key change listener failed on {}", change, e);
                }
            }
        });
    }

    synchronized void problem(String id, KeyProblem problem) {
        if (problem == null) {
            problems.remove(id);
        } else {
            problems.put(id, problem);
        }
    }

    AutoCloseable addListener(KeyChangeListener listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    @Override
    public void close() {
        notifier.shutdownNow();
    }
}

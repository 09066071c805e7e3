package io.brine.store.keys;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/** Everything in the store at one moment: valid keys per state (sorted by id), and the files it ignores. */
public record KeyListing(Map<KeyState, List<StoredKey>> keys, List<KeyProblem> problems) {

    public KeyListing {
        EnumMap<KeyState, List<StoredKey>> copy = new EnumMap<>(KeyState.class);
        for (KeyState state : KeyState.values()) {
            List<StoredKey> list = new ArrayList<>(keys.getOrDefault(state, List.of()));
            list.sort(Comparator.comparing(StoredKey::id));
            copy.put(state, List.copyOf(list));
        }
        keys = Collections.unmodifiableMap(copy);
        problems = List.copyOf(problems);
    }

    public List<StoredKey> keys(KeyState state) {
        return keys.get(state);
    }

    public List<String> ids(KeyState state) {
        return keys.get(state).stream().map(StoredKey::id).toList();
    }

    /**
     * For each key stored under more than one id (in any state), the ids, sorted: one key, one id, so no policy
     * accepts such a key, and brine-key accepts it only when told to. Computed on each call: keep the result.
     */
    public Map<String, List<String>> sharedKeys() {
        Map<String, TreeSet<String>> ids = new HashMap<>();
        for (List<StoredKey> list : keys.values()) {
            for (StoredKey key : list) {
                ids.computeIfAbsent(key.fingerprint(), f -> new TreeSet<>()).add(key.id());
            }
        }
        Map<String, List<String>> shared = new HashMap<>();
        ids.forEach((fingerprint, set) -> {
            if (set.size() > 1) {
                shared.put(fingerprint, List.copyOf(set));
            }
        });
        return shared;
    }

    /** The ids other than {@code key}'s own in {@code shared} ({@link #sharedKeys}) for its key. */
    public static List<String> otherIds(Map<String, List<String>> shared, StoredKey key) {
        return shared.getOrDefault(key.fingerprint(), List.of()).stream()
                .filter(id -> !id.equals(key.id()))
                .toList();
    }

    /** How a key stored under other ids is marked, in listings, answers and the audit log. */
    public static String sameKeyAs(List<String> otherIds) {
        int shown = Math.min(otherIds.size(), 5);
        return "same key as " + String.join(", ", otherIds.subList(0, shown))
                + (otherIds.size() > shown ? " and " + (otherIds.size() - shown) + " more" : "");
    }

    /** The key of {@code id} in {@code state}, if there is a valid one. */
    public Optional<StoredKey> find(String id, KeyState state) {
        return keys.get(state).stream().filter(k -> k.id().equals(id)).findFirst();
    }
}

package io.brine.store.keys;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Everything in the store at one moment: valid keys per state (sorted by id), and the files it ignores. */
public record KeyListing(Map<KeyState, List<StoredKey>> keys, List<KeyProblem> problems) {

    public KeyListing {
        EnumMap<KeyState, List<StoredKey>> copy = new EnumMap<>(KeyState.class);
        for (KeyState state : KeyState.values()) {
            List<StoredKey> list = new ArrayList<>(keys.getOrDefault(state, List.of()));
            list.sort(Comparator.comparing(StoredKey::id));
            copy.put(state, List.copyOf(list));
        }
        keys = java.util.Collections.unmodifiableMap(copy);
        problems = List.copyOf(problems);
    }

    public List<StoredKey> keys(KeyState state) {
        return keys.get(state);
    }

    public List<String> ids(KeyState state) {
        return keys.get(state).stream().map(StoredKey::id).toList();
    }

    /** The key of {@code id} in {@code state}, if there is a valid one. */
    public Optional<StoredKey> find(String id, KeyState state) {
        return keys.get(state).stream().filter(k -> k.id().equals(id)).findFirst();
    }
}

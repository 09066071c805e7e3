package io.brine.store.keys;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which keys are stored under more than one id (one key, one id: such a key is marked "same key as ..."), learnt one
 * key at a time. Per key it keeps a count and the few smallest ids a mark shows, so that 100,000 ids sharing a
 * handful of keys cost memory and time linear in the ids, not in their square.
 */
public final class SharedKeys {

    /** How many other ids a mark names before "and N more" ({@link KeyListing#sameKeyAs}). */
    private static final int SHOWN = 5;

    private static final class Owners {
        int count;
        final TreeSet<String> smallest = new TreeSet<>();

        void add(String id) {
            count++;
            smallest.add(id);
            if (smallest.size() > SHOWN + 1) {
                smallest.pollLast();
            }
        }
    }

    private final Map<String, Owners> byFingerprint = new HashMap<>();

    /** Adds that the key {@code fingerprint} is stored under {@code id}; add each id of a key once. */
    public void add(String fingerprint, String id) {
        byFingerprint.computeIfAbsent(fingerprint, f -> new Owners()).add(id);
    }

    /** The keys of {@code listing}, in every state. */
    public static SharedKeys of(KeyListing listing) {
        SharedKeys shared = new SharedKeys();
        Map<String, Set<String>> seen = new HashMap<>();
        for (List<StoredKey> keys : listing.keys().values()) {
            for (StoredKey key : keys) {
                if (seen.computeIfAbsent(key.fingerprint(), f -> new HashSet<>())
                        .add(key.id())) {
                    shared.add(key.fingerprint(), key.id());
                }
            }
        }
        return shared;
    }

    /** "same key as web1, web2 and 3 more" when the key {@code fingerprint} of {@code id} has other ids. */
    public Optional<String> sameKeyAs(String fingerprint, String id) {
        Owners owners = byFingerprint.get(fingerprint);
        if (owners == null || owners.count < 2) {
            return Optional.empty();
        }
        List<String> shown = new ArrayList<>(SHOWN);
        for (String other : owners.smallest) {
            if (!other.equals(id) && shown.size() < SHOWN) {
                shown.add(other);
            }
        }
        int more = owners.count - 1 - shown.size();
        return Optional.of("same key as " + String.join(", ", shown) + (more > 0 ? " and " + more + " more" : ""));
    }
}

package io.brine.master.publish;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The grains each accepted minion last reported: used to resolve grain targets on the master. Claims, never
 * authority: a minion can only make itself a target, never reach anything it could not reach anyway.
 *
 * <p>The one exception is {@value #CLASS}: the classification a trusted provisioner's grant gave the minion
 * (AcceptancePolicies). The master sets it from its own records on every read; whatever the minion reports under
 * that name is dropped, so a minion can never classify itself.
 */
public final class GrainsStore {

    /** The grain that holds a minion's provisioner-signed classification. */
    public static final String CLASS = "class";

    private final ConcurrentHashMap<String, Map<String, Object>> grains = new ConcurrentHashMap<>();
    private final Function<String, Map<String, String>> classifications;

    public GrainsStore() {
        this(id -> Map.of());
    }

    /** @param classifications the signed classification of a minion, empty when it has none */
    public GrainsStore(Function<String, Map<String, String>> classifications) {
        this.classifications = Objects.requireNonNull(classifications, "classifications");
    }

    public void put(String minionId, Map<String, Object> reported) {
        grains.put(minionId, reported);
    }

    /** The minion's reported grains, with {@value #CLASS} replaced by its signed classification (or removed). */
    public Map<String, Object> get(String minionId) {
        Map<String, Object> reported = grains.getOrDefault(minionId, Map.of());
        Map<String, String> classification = classifications.apply(minionId);
        if (classification.isEmpty() && !reported.containsKey(CLASS)) {
            return reported;
        }
        Map<String, Object> merged = new LinkedHashMap<>(reported);
        merged.remove(CLASS);
        if (!classification.isEmpty()) {
            merged.put(CLASS, classification);
        }
        return merged;
    }

    public void remove(String minionId) {
        grains.remove(minionId);
    }
}

package io.brine.master.publish;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The grains each accepted minion last reported: used to resolve grain targets on the master. Claims, never
 * authority: a minion can only make itself a target, never reach anything it could not reach anyway.
 */
public final class GrainsStore {

    private final ConcurrentHashMap<String, Map<String, Object>> grains = new ConcurrentHashMap<>();

    public void put(String minionId, Map<String, Object> reported) {
        grains.put(minionId, reported);
    }

    public Map<String, Object> get(String minionId) {
        return grains.getOrDefault(minionId, Map.of());
    }

    public void remove(String minionId) {
        grains.remove(minionId);
    }
}

package io.brine.master.publish;

import io.brine.daemon.WarnInterval;
import io.brine.protocol.MinionIds;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The grains each accepted minion last reported: used to resolve grain targets on the master. Claims, never
 * authority: a minion can only make itself a target, never reach anything it could not reach anyway.
 *
 * <p>Two grains are not the minion's to say. {@value #ID} is always the id of the session the grains came in (Salt's
 * {@code id} grain is the minion's id), whatever the minion reported under that name, and every minion has it, so
 * {@code G@id:web1} selects web1 and only web1; a minion reporting another id is logged (once a minute at most,
 * counting the others). {@value #CLASS} is the classification a trusted provisioner's grant gave the minion
 * (AcceptancePolicies): the master sets it from its own records on every read; whatever the minion reports under
 * that name is dropped, so a minion can never classify itself. Other grains that look like names ({@code fqdn},
 * {@code host}, {@code nodename}) are what the host says about itself: claims, as the rest.
 *
 * <p>Grains are kept compact, because a master holds them for every minion: as immutable maps and lists (no
 * per-entry objects), with equal short strings shared among minions through a bounded pool (a fleet's grain names and
 * most of its values, such as {@code os} or {@code kernelrelease}, repeat from minion to minion). This took the
 * master's live heap for the grains of a Debian-like minion from about 5 KiB to about 1.5 KiB (BENCHMARKS.md).
 */
public final class GrainsStore {

    private static final Logger LOG = LoggerFactory.getLogger(GrainsStore.class);

    /** The grain that holds a minion's provisioner-signed classification. */
    public static final String CLASS = "class";
    /** The grain that holds a minion's id: the session's, never the minion's claim. */
    public static final String ID = "id";

    static final long CLAIMED_ID_WARN_INTERVAL_MS = 60_000;

    /** Strings longer than this are kept as reported: long values are rarely shared. */
    static final int POOLED_MAX_LENGTH = 128;
    /**
     * At most this many distinct strings are pooled; past it, new strings are kept as reported. Bounds what minions'
     * claims can make the pool hold (a few MiB) while every name and common value of a real fleet fits.
     */
    static final int POOL_MAX_ENTRIES = 1 << 16;

    private final ConcurrentHashMap<String, Map<String, Object>> grains = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, String> pool = new ConcurrentHashMap<>();
    private final Function<String, Map<String, String>> classifications;
    private final WarnInterval claimedIdWarnings;

    /**
     * @param classifications the signed classification of a minion, empty when it has none
     * @param clock paces the log lines about minions that claim another id
     */
    public GrainsStore(Function<String, Map<String, String>> classifications, Clock clock) {
        this.classifications = Objects.requireNonNull(classifications, "classifications");
        this.claimedIdWarnings = new WarnInterval(clock, CLAIMED_ID_WARN_INTERVAL_MS);
    }

    /** The grains {@code minionId} reported, {@code minionId} being the id its authenticated session names. */
    public void put(String minionId, Map<String, Object> reported) {
        Object claimed = reported.get(ID);
        if (claimed != null && !minionId.equals(claimed)) {
            long suppressed = claimedIdWarnings.due();
            if (suppressed >= 0) {
                LOG.warn(
                        "Minion {}: its grains claim the id {}; its id grain stays its own ({} other such claims "
                                + "since the last line)",
                        minionId,
                        MinionIds.printable(String.valueOf(claimed)),
                        suppressed);
            }
        }
        grains.put(minionId, compactMap(reported, minionId));
    }

    /** {@code map} compacted; at the top ({@code minionId} not null), with {@value #ID} set to {@code minionId}. */
    private Map<String, Object> compactMap(Map<?, ?> map, String minionId) {
        if (map.isEmpty()) {
            return minionId == null ? Map.of() : Map.of(ID, minionId);
        }
        Map<String, Object> copy = new HashMap<>(map.size() * 2 + 2);
        boolean nulls = false;
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            Object value = compact(entry.getValue());
            nulls |= entry.getKey() == null || value == null;
            copy.put(entry.getKey() == null ? null : pooled(String.valueOf(entry.getKey())), value);
        }
        if (minionId != null) {
            copy.put(ID, minionId);
        }
        // Map.copyOf refuses nulls; a nil grain is rare enough to stay in an ordinary map.
        return nulls ? Collections.unmodifiableMap(copy) : Map.copyOf(copy);
    }

    private Object compact(Object value) {
        if (value instanceof String string) {
            return pooled(string);
        }
        if (value instanceof Map<?, ?> map) {
            return compactMap(map, null);
        }
        if (value instanceof List<?> list) {
            List<Object> copy = new ArrayList<>(list.size());
            boolean nulls = false;
            for (Object element : list) {
                Object compacted = compact(element);
                nulls |= compacted == null;
                copy.add(compacted);
            }
            return nulls ? Collections.unmodifiableList(copy) : List.copyOf(copy);
        }
        return value;
    }

    private String pooled(String string) {
        if (string.length() > POOLED_MAX_LENGTH) {
            return string;
        }
        String shared = pool.get(string);
        if (shared != null) {
            return shared;
        }
        if (pool.size() >= POOL_MAX_ENTRIES) {
            return string;
        }
        shared = pool.putIfAbsent(string, string);
        return shared == null ? string : shared;
    }

    /**
     * The minion's reported grains, with {@value #ID} its id and {@value #CLASS} replaced by its signed classification
     * (or removed); a minion that reported none has its id alone.
     */
    public Map<String, Object> get(String minionId) {
        Map<String, Object> reported = grains.get(minionId);
        if (reported == null) {
            reported = Map.of(ID, minionId);
        }
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

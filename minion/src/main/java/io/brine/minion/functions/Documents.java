package io.brine.minion.functions;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Brings a function's return value (or static grains from YAML) into the closed set of types the wire codec packs:
 * {@code null}, {@link Boolean}, {@link Long}, {@link Double}, {@link String}, {@code byte[]}, {@link List},
 * {@link Map} with {@link String} keys. Smaller integers widen to {@link Long}, floats to {@link Double}, sets and
 * arrays become lists, scalar map keys become strings. The result is an unmodifiable deep copy, so a function that
 * keeps mutating its own collections cannot race the encoder. Anything else is refused here, on the minion, where
 * it can become a clear failed return instead of an encoder error later.
 */
public final class Documents {

    /** Deeper nesting is refused: it is either a reference cycle or nothing a human wants back. */
    public static final int MAX_DEPTH = 64;

    private Documents() {}

    /**
     * @throws IllegalArgumentException saying which type, and where, cannot be sent
     */
    public static Object normalize(Object value) {
        return normalize(value, 0, "value");
    }

    /** {@link #normalize} for a document: a map with string keys. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> normalizeDocument(Map<?, ?> document) {
        return (Map<String, Object>) normalize(document, 0, "value");
    }

    private static Object normalize(Object value, int depth, String where) {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException(
                    where + " is nested more than " + MAX_DEPTH + " levels deep (a reference cycle?)");
        }
        if (value == null
                || value instanceof Boolean
                || value instanceof Long
                || value instanceof Double
                || value instanceof String) {
            return value;
        }
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof Float || value instanceof BigDecimal) {
            return ((Number) value).doubleValue();
        }
        if (value instanceof BigInteger big) {
            if (big.bitLength() > 63) {
                throw new IllegalArgumentException(where + " is an integer outside the 64-bit range");
            }
            return big.longValue();
        }
        if (value instanceof CharSequence || value instanceof Character) {
            return value.toString();
        }
        if (value instanceof byte[] bytes) {
            return bytes.clone();
        }
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> copy = new LinkedHashMap<>(Math.max(4, map.size() * 2));
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                String key = key(entry.getKey(), where);
                if (copy.containsKey(key)) {
                    throw new IllegalArgumentException(where + " has two keys that both read " + key);
                }
                copy.put(key, normalize(entry.getValue(), depth + 1, where + "." + key));
            }
            return Collections.unmodifiableMap(copy);
        }
        if (value instanceof Collection<?> collection) {
            return list(collection, depth, where);
        }
        if (value instanceof Object[] array) {
            return list(Arrays.asList(array), depth, where);
        }
        throw new IllegalArgumentException(where + " is a " + value.getClass().getName()
                + ", which cannot be sent (use null, boolean, integer, double, string, bytes, list or map)");
    }

    private static List<Object> list(Collection<?> collection, int depth, String where) {
        List<Object> copy = new ArrayList<>(collection.size());
        int i = 0;
        for (Object element : collection) {
            copy.add(normalize(element, depth + 1, where + "[" + i++ + "]"));
        }
        return Collections.unmodifiableList(copy);
    }

    private static String key(Object key, String where) {
        if (key instanceof String s) {
            return s;
        }
        if (key instanceof Number
                || key instanceof Boolean
                || key instanceof CharSequence
                || key instanceof Character) {
            return key.toString();
        }
        throw new IllegalArgumentException(where + " has a map key of type "
                + (key == null ? "null" : key.getClass().getName()) + "; keys must be strings");
    }
}

package io.brine.protocol.message;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Unmodifiable shallow copies for the generic values in messages (claims, grains, args, kwargs). Unlike
 * {@code Map.copyOf} and {@code List.copyOf} they keep nil values (msgpack nil is a legal value) and the insertion
 * order (so a decoded map re-encodes in the order it arrived).
 */
final class Copies {

    private Copies() {}

    static Map<String, Object> map(Map<String, Object> map) {
        return Collections.unmodifiableMap(new LinkedHashMap<>(map));
    }

    static List<Object> list(List<Object> list) {
        return Collections.unmodifiableList(new ArrayList<>(list));
    }
}

package io.brine.protocol.salt;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Between Salt's values and brine's generic values (nil → {@code null}, {@code Boolean}, {@code Long},
 * {@code Double}, {@code String}, {@code byte[]}, {@code List<Object>}, {@code Map<String, Object>}, as in
 * {@code io.brine.protocol.codec.Values}): a Salt minion's returns and grains go to brine's job cache and targeting,
 * brine's job arguments go into Salt publications.
 */
public final class SaltValues {

    private SaltValues() {}

    /**
     * A Salt value as brine keeps it. Byte strings become text where they are UTF-8, as Salt's
     * {@code decode_embedded_strs} does, else {@code byte[]}; a uint64 beyond {@code Long.MAX_VALUE} becomes its
     * decimal text; a non-text map key (Python allows int keys) becomes its text, as Salt's JSON outputter writes
     * it — a later key with the same text replaces an earlier one. Containers are unmodifiable.
     */
    public static Object toPlain(SaltValue value) {
        if (value instanceof SaltValue.Nil) {
            return null;
        }
        if (value instanceof SaltValue.Bool b) {
            return b.value();
        }
        if (value instanceof SaltValue.Int i) {
            return i.unsigned64() ? i.big().toString() : (Object) i.value();
        }
        if (value instanceof SaltValue.Float f) {
            return f.value();
        }
        if (value instanceof SaltValue.Array a) {
            List<Object> items = new ArrayList<>(a.items().size());
            for (SaltValue item : a.items()) {
                items.add(toPlain(item));
            }
            return Collections.unmodifiableList(items);
        }
        if (value instanceof SaltValue.Map m) {
            Map<String, Object> map = new LinkedHashMap<>();
            for (SaltValue.Entry e : m.entries()) {
                map.put(keyText(e.key()), toPlain(e.value()));
            }
            return Collections.unmodifiableMap(map);
        }
        byte[] bytes = value.bytes().orElseThrow();
        return value.text().<Object>map(t -> t).orElse(bytes);
    }

    private static String keyText(SaltValue key) {
        Object plain = toPlain(key);
        if (plain instanceof byte[] bytes) {
            return HexFormat.of().formatHex(bytes);
        }
        if (plain == null) {
            return "null";
        }
        if (plain instanceof Boolean b) {
            return b ? "true" : "false";
        }
        return plain.toString();
    }

    /** A brine value as Salt sends it: text as str, {@code byte[]} as bytes, any integer type as an integer. */
    public static SaltValue fromPlain(Object value) {
        if (value == null) {
            return SaltValue.nil();
        }
        if (value instanceof Boolean b) {
            return SaltValue.bool(b);
        }
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return SaltValue.integer(((Number) value).longValue());
        }
        if (value instanceof Double || value instanceof Float) {
            return new SaltValue.Float(((Number) value).doubleValue());
        }
        if (value instanceof String s) {
            return SaltValue.str(s);
        }
        if (value instanceof byte[] bytes) {
            return SaltValue.bin(bytes);
        }
        if (value instanceof List<?> list) {
            List<SaltValue> items = new ArrayList<>(list.size());
            for (Object item : list) {
                items.add(fromPlain(item));
            }
            return new SaltValue.Array(items);
        }
        if (value instanceof Map<?, ?> map) {
            SaltValue.Builder b = SaltValue.Map.builder();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!(e.getKey() instanceof String key)) {
                    throw new IllegalArgumentException("a map key is not text");
                }
                b.put(key, fromPlain(e.getValue()));
            }
            return b.build();
        }
        throw new IllegalArgumentException(
                "no Salt form for " + value.getClass().getSimpleName());
    }

    /**
     * A job's {@code arg} as Salt publishes it ({@code utils/args.py: condition_input}): the positional arguments,
     * then, when there are keyword arguments, a map {@code {"__kwarg__": true, ...}}.
     */
    public static SaltValue.Array jobArgs(List<Object> args, Map<String, Object> kwargs) {
        List<SaltValue> items = new ArrayList<>(args.size() + 1);
        for (Object arg : args) {
            items.add(fromPlain(arg));
        }
        if (!kwargs.isEmpty()) {
            SaltValue.Builder kw = SaltValue.Map.builder().put("__kwarg__", true);
            kwargs.forEach((k, v) -> kw.put(k, fromPlain(v)));
            items.add(kw.build());
        }
        return new SaltValue.Array(items);
    }
}

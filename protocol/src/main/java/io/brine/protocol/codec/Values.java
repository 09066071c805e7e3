package io.brine.protocol.codec;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The generic value of claims, grains, args, kwargs and return values: nil, bool, int (decoded as {@code Long}),
 * float ({@code Double}), str ({@code String}), bin ({@code byte[]}), array ({@code List<Object>}) and map with
 * string keys ({@code Map<String, Object>}, insertion-ordered). Decoded containers are unmodifiable. Nothing else
 * crosses the wire: ext types, non-string or duplicate map keys, integers beyond a long, nesting deeper than
 * {@link FieldLimits#MAX_VALUE_DEPTH}.
 */
final class Values {

    private Values() {}

    static void write(MsgWriter out, String field, Object value) {
        write(out, field, value, 0);
    }

    static void writeMap(MsgWriter out, String field, Map<String, Object> map) {
        if (map == null) {
            throw new IllegalArgumentException(field + " is null");
        }
        write(out, field, map, 0);
    }

    static void writeList(MsgWriter out, String field, List<Object> list) {
        if (list == null) {
            throw new IllegalArgumentException(field + " is null");
        }
        write(out, field, list, 0);
    }

    private static void write(MsgWriter out, String field, Object value, int depth) {
        if (value == null) {
            out.nil();
        } else if (value instanceof Boolean b) {
            out.bool(b);
        } else if (value instanceof Long
                || value instanceof Integer
                || value instanceof Short
                || value instanceof Byte) {
            out.integer(((Number) value).longValue());
        } else if (value instanceof Double || value instanceof Float) {
            out.float64(((Number) value).doubleValue());
        } else if (value instanceof String s) {
            out.str(field, s);
        } else if (value instanceof byte[] bytes) {
            out.bin(field, bytes);
        } else if (value instanceof List<?> list) {
            checkDepth(field, depth);
            out.array(list.size());
            for (Object item : list) {
                write(out, field, item, depth + 1);
            }
        } else if (value instanceof Map<?, ?> map) {
            checkDepth(field, depth);
            out.map(map.size());
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!(entry.getKey() instanceof String key)) {
                    throw new IllegalArgumentException(field + ": map keys must be strings");
                }
                out.str(field, key);
                write(out, field, entry.getValue(), depth + 1);
            }
        } else {
            throw new IllegalArgumentException(
                    field + ": cannot encode a " + value.getClass().getName()
                            + " (allowed: null, Boolean, integer types, Double, Float, String, byte[], List, Map)");
        }
    }

    private static void checkDepth(String field, int depth) {
        // Also stops a self-containing list or map before it overflows the stack.
        if (depth >= FieldLimits.MAX_VALUE_DEPTH) {
            throw new IllegalArgumentException(field + ": nested deeper than " + FieldLimits.MAX_VALUE_DEPTH);
        }
    }

    static Object read(MsgReader in, String field) throws IOException, MalformedException {
        return read(in, field, 0);
    }

    static Map<String, Object> readMap(MsgReader in, String field) throws IOException, MalformedException {
        return readMap(in, field, 0);
    }

    static List<Object> readList(MsgReader in, String field) throws IOException, MalformedException {
        return readList(in, field, 0);
    }

    private static Object read(MsgReader in, String field, int depth) throws IOException, MalformedException {
        return switch (in.peek(field)) {
            case NIL -> {
                in.nil(field);
                yield null;
            }
            case BOOLEAN -> in.bool(field);
            case INTEGER -> in.int64(field);
            case FLOAT -> in.float64(field);
            case STRING -> in.str(field, Integer.MAX_VALUE);
            case BINARY -> in.bin(field, 0, Integer.MAX_VALUE);
            case ARRAY -> readList(in, field, depth);
            case MAP -> readMap(in, field, depth);
            case EXTENSION -> throw new MalformedException(field + ": msgpack ext types are not allowed");
        };
    }

    private static List<Object> readList(MsgReader in, String field, int depth) throws IOException, MalformedException {
        checkReadDepth(field, depth);
        int count = in.arrayUpTo(field, Integer.MAX_VALUE);
        List<Object> list = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            list.add(read(in, field, depth + 1));
        }
        return Collections.unmodifiableList(list);
    }

    private static Map<String, Object> readMap(MsgReader in, String field, int depth)
            throws IOException, MalformedException {
        checkReadDepth(field, depth);
        int count = in.map(field);
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            String key = in.str(field + " key", Integer.MAX_VALUE);
            if (map.containsKey(key)) {
                // Two readers could keep different values: refuse the ambiguity instead.
                throw new MalformedException(field + ": duplicate map key");
            }
            map.put(key, read(in, field, depth + 1));
        }
        return Collections.unmodifiableMap(map);
    }

    private static void checkReadDepth(String field, int depth) throws MalformedException {
        if (depth >= FieldLimits.MAX_VALUE_DEPTH) {
            throw new MalformedException(field + ": nested deeper than " + FieldLimits.MAX_VALUE_DEPTH);
        }
    }
}

package io.brine.daemon;

import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Salt's two text outputters, for every CLI with {@code --out}: {@code nested} (Salt's default: each key on its own
 * line, its value indented below, maps after a {@code ----------} line, lists as dashes) and {@code txt} (one
 * {@code key: line} per line of a text value, other values in Python's notation on the key's line).
 */
public final class SaltOutputters {

    private SaltOutputters() {}

    /** {@code key:} and {@code value} below it, as Salt's nested outputter shows a minion's return. */
    public static String nested(String key, Object value) {
        StringBuilder out = new StringBuilder(key).append(":\n");
        nested(out, value, 4);
        return out.toString();
    }

    /** A value with no key (a runner's list, say) as Salt's nested outputter shows it: {@code - item} lines. */
    public static String nested(Object value) {
        StringBuilder out = new StringBuilder();
        nested(out, value, 0);
        return out.toString();
    }

    /** Each entry of {@code document} as {@link #nested(String, Object)}, in its order. */
    public static String nested(Map<String, ?> document) {
        StringBuilder out = new StringBuilder();
        document.forEach((key, value) -> out.append(nested(key, value)));
        return out.toString();
    }

    /** Salt's txt outputter for one key: {@code key: line} for each line of a text value, else the value's repr. */
    public static String txt(String key, Object value) {
        StringBuilder out = new StringBuilder();
        if (value instanceof String text) {
            for (String line : text.lines().toList()) {
                out.append(key).append(": ").append(line).append('\n');
            }
        } else {
            out.append(key).append(": ").append(repr(value)).append('\n');
        }
        return out.toString();
    }

    /** A value with no key as Salt's txt outputter shows it: text as is, anything else in Python's notation. */
    public static String txt(Object value) {
        return (value instanceof String text ? text : repr(value)) + "\n";
    }

    /** Each entry of {@code document} as {@link #txt(String, Object)}, in its order. */
    public static String txt(Map<String, ?> document) {
        StringBuilder out = new StringBuilder();
        document.forEach((key, value) -> out.append(txt(key, value)));
        return out.toString();
    }

    private static void nested(StringBuilder out, Object value, int indent) {
        String pad = " ".repeat(indent);
        if (value instanceof Map<?, ?> map) {
            out.append(pad).append("----------\n");
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                out.append(pad).append(entry.getKey()).append(":\n");
                if (entry.getValue() instanceof Map<?, ?> || entry.getValue() instanceof List<?>) {
                    nested(out, entry.getValue(), indent + 4);
                } else {
                    scalar(out, entry.getValue(), indent + 4);
                }
            }
        } else if (value instanceof List<?> list) {
            for (Object item : list) {
                if (item instanceof Map<?, ?> || item instanceof List<?>) {
                    out.append(pad).append("-\n");
                    nested(out, item, indent + 4);
                } else {
                    out.append(pad).append("- ").append(text(item)).append('\n');
                }
            }
        } else {
            scalar(out, value, indent);
        }
    }

    private static void scalar(StringBuilder out, Object value, int indent) {
        String pad = " ".repeat(indent);
        for (String line : text(value).split("\n", -1)) {
            out.append(pad).append(line).append('\n');
        }
    }

    private static String text(Object value) {
        if (value == null) {
            return "None";
        }
        if (value instanceof Boolean b) {
            return b ? "True" : "False";
        }
        if (value instanceof byte[] bytes) {
            return Base64.getEncoder().encodeToString(bytes);
        }
        return String.valueOf(value);
    }

    /** A value as Python prints it (txt shows non-text values so): 'text', [..], {..}, True, None. */
    static String repr(Object value) {
        if (value instanceof String text) {
            String escaped = text.replace("\\", "\\\\").replace("\n", "\\n");
            // As Python: double quotes for text holding a quote and no double quote, else quotes escaped.
            return text.contains("'") && !text.contains("\"")
                    ? "\"" + escaped + "\""
                    : "'" + escaped.replace("'", "\\'") + "'";
        }
        if (value instanceof List<?> list) {
            StringBuilder out = new StringBuilder("[");
            for (Object item : list) {
                out.append(out.length() > 1 ? ", " : "").append(repr(item));
            }
            return out.append(']').toString();
        }
        if (value instanceof Map<?, ?> map) {
            StringBuilder out = new StringBuilder("{");
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                out.append(out.length() > 1 ? ", " : "")
                        .append(repr(entry.getKey()))
                        .append(": ")
                        .append(repr(entry.getValue()));
            }
            return out.append('}').toString();
        }
        return text(value);
    }
}

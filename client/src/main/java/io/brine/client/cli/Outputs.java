package io.brine.client.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** The CLI's output formats: Salt's nested text, JSON, YAML. */
final class Outputs {

    enum Format { text, json, yaml }

    /** text, json or yaml, any case; txt is Salt's name for text. */
    static final class FormatConverter implements ITypeConverter<Format> {
        @Override
        public Format convert(String value) {
            String name = value.toLowerCase(Locale.ROOT);
            if (name.equals("txt")) {
                return Format.text;
            }
            for (Format format : Format.values()) {
                if (format.name().equals(name)) {
                    return format;
                }
            }
            throw new TypeConversionException("expected text (or txt), json or yaml, not '"
                    + value + "'");
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES));

    private Outputs() {
    }

    static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String yaml(Object value) {
        try {
            return YAML.writeValueAsString(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String structured(Format format, Object value) {
        return format == Format.yaml ? yaml(value) : json(value);
    }

    /** Salt's "nested" outputter: a value under its minion id, maps as indented keys, lists as dashes. */
    static String nested(String id, Object value) {
        StringBuilder out = new StringBuilder(id).append(":\n");
        nested(out, value, 4);
        return out.toString();
    }

    private static void nested(StringBuilder out, Object value, int indent) {
        String pad = " ".repeat(indent);
        if (value instanceof Map<?, ?> map) {
            out.append(pad).append("----------\n");
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                Object inner = entry.getValue();
                if (inner instanceof Map<?, ?> || inner instanceof List<?>) {
                    out.append(pad).append(entry.getKey()).append(":\n");
                    nested(out, inner, indent + 4);
                } else {
                    out.append(pad).append(entry.getKey()).append(":\n");
                    scalar(out, inner, indent + 4);
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
}

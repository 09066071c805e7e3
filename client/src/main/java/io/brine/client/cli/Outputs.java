package io.brine.client.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import io.brine.daemon.SaltOutputters;
import io.brine.protocol.MinionIds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** The CLI's output formats: Salt's nested (brine's text) and txt, JSON, YAML. */
final class Outputs {

    /** text is Salt's nested outputter (its default); txt is Salt's txt. */
    enum Format {
        text,
        txt,
        json,
        yaml;

        /** Whether returns are printed one by one as they arrive (Salt's outputters) rather than as one document. */
        boolean streams() {
            return this == text || this == txt;
        }
    }

    /** text (or Salt's name for it, nested), txt, json or yaml, any case. */
    static final class FormatConverter implements ITypeConverter<Format> {
        @Override
        public Format convert(String value) {
            String name = value.toLowerCase(Locale.ROOT);
            if (name.equals("nested")) {
                return Format.text;
            }
            for (Format format : Format.values()) {
                if (format.name().equals(name)) {
                    return format;
                }
            }
            throw new TypeConversionException(
                    "expected text (or nested), txt, json or yaml, not " + MinionIds.printable(value));
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES));

    private Outputs() {}

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

    /** {@code value} as one document: JSON, YAML, or Salt's nested or txt (of each entry, for a map). */
    @SuppressWarnings("unchecked")
    static String structured(Format format, Object value) {
        return switch (format) {
            case yaml -> yaml(value);
            case json -> json(value);
            case text ->
                value instanceof Map<?, ?> map
                        ? SaltOutputters.nested((Map<String, ?>) map)
                        : SaltOutputters.nested(value);
            case txt ->
                value instanceof Map<?, ?> map ? SaltOutputters.txt((Map<String, ?>) map) : SaltOutputters.txt(value);
        };
    }

    /** One minion's return in a format that {@linkplain Format#streams streams}. */
    static String one(Format format, String id, Object value) {
        return format == Format.txt ? SaltOutputters.txt(id, value) : SaltOutputters.nested(id, value);
    }
}

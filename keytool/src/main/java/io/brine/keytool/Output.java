package io.brine.keytool;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.brine.daemon.SaltOutputters;
import io.brine.store.keys.KeyState;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where and how brine-key answers: text in salt-key's layout (coloured on a terminal) or a JSON or YAML document on
 * standard output; notes and warnings on standard error.
 */
final class Output {

    /** {@code --out}: salt-key's layout (text), Salt's nested and txt outputters, JSON, YAML. */
    enum Format {
        text,
        nested,
        txt,
        json,
        yaml
    }

    /** What the listings are called in text output, in salt-key's order. */
    static final Map<KeyState, String> TEXT_HEADINGS = headings();
    /** Order of the groups in structured output. */
    static final List<KeyState> STRUCTURED_ORDER =
            List.of(KeyState.ACCEPTED, KeyState.PENDING, KeyState.REJECTED, KeyState.DENIED);

    private static final Map<KeyState, String> COLOURS = Map.of(
            KeyState.ACCEPTED,
            "\u001b[0;32m",
            KeyState.DENIED,
            "\u001b[0;35m",
            KeyState.PENDING,
            "\u001b[0;31m",
            KeyState.REJECTED,
            "\u001b[0;34m");
    private static final String RESET = "\u001b[0m";

    private final PrintWriter out;
    private final PrintWriter err;
    private final Format format;
    private final boolean colour;

    /** @param colour whether text may be coloured (a terminal, no {@code --no-color}, no {@code NO_COLOR}) */
    Output(PrintWriter out, PrintWriter err, Format format, boolean colour) {
        this.out = out;
        this.err = err;
        this.format = format;
        this.colour = colour && format == Format.text;
    }

    PrintWriter out() {
        return out;
    }

    PrintWriter err() {
        return err;
    }

    boolean text() {
        return format == Format.text;
    }

    /** {@code text} in the state's colour, when colour is on. */
    String colour(KeyState state, String text) {
        return colour ? COLOURS.get(state) + text + RESET : text;
    }

    /** Prints {@code document} as JSON or YAML on standard output; returns exit code 0. */
    int printStructured(Map<String, Object> document) {
        out.print(structured(format, document));
        out.flush();
        return 0;
    }

    /** The document as JSON (indented), YAML, or Salt's nested or txt outputter (its entries in order). */
    static String structured(Format format, Map<String, Object> document) {
        if (format == Format.nested || format == Format.text) {
            return SaltOutputters.nested(document);
        }
        if (format == Format.txt) {
            return SaltOutputters.txt(document);
        }
        try {
            return format == Format.json
                    ? new ObjectMapper()
                                    .enable(SerializationFeature.INDENT_OUTPUT)
                                    .writeValueAsString(document) + "\n"
                    : YAMLMapper.builder()
                            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
                            .build()
                            .writeValueAsString(document);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode output", e);
        }
    }

    private static Map<KeyState, String> headings() {
        Map<KeyState, String> headings = new LinkedHashMap<>();
        headings.put(KeyState.ACCEPTED, "Accepted Keys:");
        headings.put(KeyState.DENIED, "Denied Keys:");
        headings.put(KeyState.PENDING, "Unaccepted Keys:");
        headings.put(KeyState.REJECTED, "Rejected Keys:");
        return headings;
    }
}

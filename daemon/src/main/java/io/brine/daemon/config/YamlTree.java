package io.brine.daemon.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * A YAML document as a small tree in which every node remembers its line and column, built from Jackson's token
 * stream. Scalars keep the text as written, so it is the typed accessors of {@link ConfigSection}, not YAML 1.1's
 * implicit typing, that decide what {@code yes}, {@code 0600} or {@code 1e3} mean.
 */
final class YamlTree {

    /** Config files are shallow; anything deeper is a mistake and must not cost a deep recursion. */
    static final int MAX_DEPTH = 16;

    private static final String STR_TAG = "tag:yaml.org,2002:str";

    private static final YAMLFactory FACTORY = new YAMLFactory();

    /** 1-based line and column. */
    record Mark(int line, int column) {
        static final Mark NONE = new Mark(0, 0);
    }

    sealed interface Node permits Mapping, Sequence, Scalar {
        Mark mark();
    }

    record Entry(String key, Mark keyMark, Node value) {}

    record Mapping(Mark mark, List<Entry> entries) implements Node {
        Entry get(String key) {
            for (Entry entry : entries) {
                if (entry.key().equals(key)) {
                    return entry;
                }
            }
            return null;
        }
    }

    record Sequence(Mark mark, List<Node> items) implements Node {}

    /** How YAML would have typed a scalar; {@code STRING} also for every quoted or {@code !!str} scalar. */
    enum Kind {
        NULL,
        STRING,
        BOOLEAN,
        INTEGER,
        FLOAT
    }

    record Scalar(Mark mark, Kind kind, String text) implements Node {
        /** {@code key:}, {@code key: ~}, {@code key: null} and {@code key: ""} all mean "not set". */
        boolean isNull() {
            return kind == Kind.NULL || text.isEmpty();
        }
    }

    /** Where the recoverable problems found while building the tree go. */
    interface Problems {
        void add(Mark mark, String key, String message);
    }

    private final YAMLParser parser;
    private final Problems problems;

    private YamlTree(YAMLParser parser, Problems problems) {
        this.parser = parser;
        this.problems = problems;
    }

    /**
     * Parses {@code text} into its top-level node: null for an empty document. Recoverable problems (duplicate keys,
     * aliases, tags, too deep) go to {@code problems}; a syntax error or a second document throws.
     */
    static Node parse(Path file, String text, Problems problems) throws ConfigException {
        try (YAMLParser parser = FACTORY.createParser(text)) {
            YamlTree tree = new YamlTree(parser, problems);
            JsonToken first = parser.nextToken();
            if (first == null) {
                return null;
            }
            Node root = tree.node(first, "", 0);
            JsonToken next = parser.nextToken();
            if (next != null) {
                Mark mark = mark(parser.currentTokenLocation());
                throw fatal(file, mark, "the file holds more than one YAML document (a second '---')");
            }
            return root;
        } catch (JsonProcessingException e) {
            throw syntaxError(file, e);
        } catch (IOException e) {
            throw fatal(file, Mark.NONE, "cannot parse: " + Quoting.printable(String.valueOf(e.getMessage())));
        }
    }

    private Node node(JsonToken token, String path, int depth) throws IOException {
        Mark mark = mark(parser.currentTokenLocation());
        if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
            if (depth >= MAX_DEPTH) {
                problems.add(mark, path, "nested deeper than " + MAX_DEPTH + " levels");
                parser.skipChildren();
                return new Scalar(mark, Kind.NULL, "");
            }
            return token == JsonToken.START_OBJECT ? mapping(mark, path, depth) : sequence(mark, path, depth);
        }
        return scalar(token, mark, path);
    }

    private Mapping mapping(Mark mark, String path, int depth) throws IOException {
        List<Entry> entries = new ArrayList<>();
        Map<String, Mark> seen = new HashMap<>();
        for (JsonToken token = parser.nextToken(); token != JsonToken.END_OBJECT; token = parser.nextToken()) {
            String key = parser.currentName();
            Mark keyMark = mark(parser.currentTokenLocation());
            String keyPath = path.isEmpty() ? key : path + "." + key;
            Node value = node(parser.nextToken(), keyPath, depth + 1);
            Mark first = seen.putIfAbsent(key, keyMark);
            if (first != null) {
                problems.add(keyMark, keyPath, "duplicate key (first at line " + first.line() + ")");
            } else {
                entries.add(new Entry(key, keyMark, value));
            }
        }
        return new Mapping(mark, List.copyOf(entries));
    }

    private Sequence sequence(Mark mark, String path, int depth) throws IOException {
        List<Node> items = new ArrayList<>();
        for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
            items.add(node(token, path + "[" + items.size() + "]", depth + 1));
        }
        return new Sequence(mark, List.copyOf(items));
    }

    private Scalar scalar(JsonToken token, Mark mark, String path) throws IOException {
        String text = parser.getText();
        if (parser.isCurrentAlias()) {
            problems.add(mark, path, "YAML aliases (*" + text + ") are not supported: write the value out");
            return new Scalar(mark, Kind.NULL, "");
        }
        String tag = parser.getTypeId();
        if (tag != null && !tag.equals(STR_TAG)) {
            problems.add(
                    mark,
                    path,
                    "YAML tags (" + tag.replace("tag:yaml.org,2002:", "!!")
                            + ") are not supported: write the plain value, quoted if it is a string");
            return new Scalar(mark, Kind.NULL, "");
        }
        Kind kind = switch (token) {
            case VALUE_NULL -> Kind.NULL;
            case VALUE_TRUE, VALUE_FALSE -> Kind.BOOLEAN;
            case VALUE_NUMBER_INT -> Kind.INTEGER;
            case VALUE_NUMBER_FLOAT -> Kind.FLOAT;
            case VALUE_STRING -> Kind.STRING;
            default -> {
                problems.add(mark, path, "unsupported YAML value");
                yield Kind.NULL;
            }
        };
        return new Scalar(mark, kind, text == null ? "" : text);
    }

    private static Mark mark(JsonLocation location) {
        return location == null
                ? Mark.NONE
                : new Mark(Math.max(location.getLineNr(), 0), Math.max(location.getColumnNr(), 0));
    }

    private static ConfigException syntaxError(Path file, JsonProcessingException e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof MarkedYAMLException yaml && yaml.getProblemMark() != null) {
                org.yaml.snakeyaml.error.Mark at = yaml.getProblemMark();
                String context = yaml.getContext() == null ? "" : " (" + yaml.getContext() + ")";
                return fatal(
                        file,
                        new Mark(at.getLine() + 1, at.getColumn() + 1),
                        "invalid YAML: " + Quoting.printable(yaml.getProblem() + context));
            }
        }
        return fatal(file, mark(e.getLocation()), "invalid YAML: " + Quoting.printable(e.getOriginalMessage()));
    }

    static ConfigException fatal(Path file, Mark mark, String message) {
        return new ConfigException(List.of(new ConfigProblem(file, mark.line(), mark.column(), "", message)));
    }
}

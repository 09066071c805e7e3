package io.brine.daemon.config;

import io.brine.daemon.config.YamlTree.Entry;
import io.brine.daemon.config.YamlTree.Kind;
import io.brine.daemon.config.YamlTree.Mapping;
import io.brine.daemon.config.YamlTree.Mark;
import io.brine.daemon.config.YamlTree.Node;
import io.brine.daemon.config.YamlTree.Scalar;
import io.brine.daemon.config.YamlTree.Sequence;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

// Over 400 lines: one typed accessor per kind of value (durations, sizes, ports, addresses, paths, globs, ...),
// each with its file:line error; splitting them by kind would scatter one small vocabulary over several files.
/**
 * One mapping of a config file (the top level, or a nested one such as {@code tls:}), read through typed
 * accessors. Every accessor returns empty when the key is absent or set to nothing ({@code key:}, {@code ~},
 * {@code null}, {@code ""}), so the caller's builder keeps its default; a value of the wrong kind is recorded as a
 * problem with its line and also gives empty. Asking for a key, present or not, makes it a known key: what is
 * left over is reported as unknown by {@link ConfigReader#finish()}. Read each key once: a second read reports its
 * problems again.
 *
 * <p>Scalars are read as written, not as YAML 1.1 would type them: a string key takes {@code yes} as the string
 * "yes" and {@code 0600} as "0600"; a boolean key takes only {@code true} and {@code false}; an integer key takes
 * only plain decimal digits, so {@code 0600}, {@code 1e3}, {@code 1_000}, {@code 0x10} and {@code "4505"} are
 * errors rather than surprises.
 */
public final class ConfigSection {

    private static final Pattern DECIMAL = Pattern.compile("-?(0|[1-9][0-9]*)");
    private static final Pattern LOOKS_NUMERIC = Pattern.compile("[-+]?[0-9][0-9_]*");
    private static final Pattern WITH_UNIT = Pattern.compile("[0-9]+ ?[a-zA-Z]+");
    private static final Set<String> TRUE = Set.of("true", "True", "TRUE");
    private static final Set<String> FALSE = Set.of("false", "False", "FALSE");

    private final ConfigReader reader;
    private final String path;
    private final Mark mark;
    private final Mapping mapping;
    private final Set<String> known = new LinkedHashSet<>();

    ConfigSection(ConfigReader reader, String path, Mark mark, Mapping mapping) {
        this.reader = reader;
        this.path = path;
        this.mark = mark;
        this.mapping = mapping;
    }

    /** This section's key path, such as {@code tls} or {@code autosign_tokens[2]}; empty for the top level. */
    public String path() {
        return path;
    }

    /** Whether {@code key} is set to something (even something invalid). */
    public boolean has(String key) {
        return lookup(key) != null;
    }

    /**
     * Records a problem that no single accessor can see (two keys that clash, a required key that is missing). It
     * is placed at the key's value when the key is set, else at this section.
     */
    public void problem(String key, String message) {
        Entry entry = mapping.get(key);
        Mark at = entry == null ? mark : entry.value().mark();
        reader.add(at, keyPath(key), message);
    }

    /**
     * Records a problem for each two keys whose values are equal, such as two ports bound on one interface.
     * {@code values} maps each key to its effective value (the default when the key is not set); a problem is
     * placed at a key that is set, and names the other key, marking a default as such.
     */
    public void requireDistinct(Map<String, ?> values, String what) {
        List<String> keys = List.copyOf(values.keySet());
        for (int i = 0; i < keys.size(); i++) {
            for (int j = i + 1; j < keys.size(); j++) {
                String a = keys.get(i);
                String b = keys.get(j);
                if (values.get(a).equals(values.get(b))) {
                    boolean bSet = mapping.get(b) != null;
                    String shown = bSet ? b : a;
                    String other = bSet ? a : b;
                    problem(
                            shown,
                            values.get(a) + " is also " + other + (mapping.get(other) != null ? "" : " (its default)")
                                    + "; " + what + " must differ");
                }
            }
        }
    }

    // ---------------------------------------------------------------- scalars

    /** Any scalar, as written; control characters are refused. */
    public Optional<String> string(String key) {
        return string(key, ValueCheck.any());
    }

    /** A scalar, as written, that passes {@code check}. */
    public Optional<String> string(String key, ValueCheck check) {
        Node node = lookup(key);
        return node == null ? Optional.empty() : Optional.ofNullable(text(node, keyPath(key), check, true));
    }

    /** A secret string; the value never appears in a problem's message. */
    public Optional<Secret> secret(String key) {
        Node node = lookup(key);
        return node == null
                ? Optional.empty()
                : Optional.ofNullable(text(node, keyPath(key), ValueCheck.any(), false))
                        .map(Secret::new);
    }

    /** {@code true} or {@code false}; YAML 1.1's {@code yes}, {@code no}, {@code on}, {@code off} are refused. */
    public Optional<Boolean> bool(String key) {
        Node node = lookup(key);
        if (node == null) {
            return Optional.empty();
        }
        if (node instanceof Scalar s && s.kind() == Kind.BOOLEAN && TRUE.contains(s.text())) {
            return Optional.of(true);
        }
        if (node instanceof Scalar s && s.kind() == Kind.BOOLEAN && FALSE.contains(s.text())) {
            return Optional.of(false);
        }
        String hint = "";
        if (node instanceof Scalar s && s.kind() == Kind.BOOLEAN) {
            hint = " (YAML 1.1 reads yes/no/on/off as booleans; brine takes only true and false)";
        } else if (node instanceof Scalar s
                && s.kind() == Kind.STRING
                && (TRUE.contains(s.text()) || FALSE.contains(s.text()))) {
            hint = " (remove the quotes)";
        }
        wrong(node, keyPath(key), "true or false", hint);
        return Optional.empty();
    }

    /** A plain decimal integer from {@code min} to {@code max}. */
    public OptionalInt integer(String key, int min, int max) {
        Node node = lookup(key);
        if (node == null) {
            return OptionalInt.empty();
        }
        Long value = whole(node, keyPath(key), min, max, "an integer");
        return value == null ? OptionalInt.empty() : OptionalInt.of(value.intValue());
    }

    /** A duration written as a plain decimal number of seconds, from {@code minSeconds} to {@code maxSeconds}. */
    public Optional<Duration> seconds(String key, long minSeconds, long maxSeconds) {
        Node node = lookup(key);
        if (node == null) {
            return Optional.empty();
        }
        Long value = whole(node, keyPath(key), minSeconds, maxSeconds, "a whole number of seconds");
        return Optional.ofNullable(value).map(Duration::ofSeconds);
    }

    /** One of an enum's constants, written in lower case ({@code zeromq}). */
    public <E extends Enum<E>> Optional<E> choice(String key, Class<E> type) {
        Node node = lookup(key);
        if (node == null) {
            return Optional.empty();
        }
        List<String> names = Arrays.stream(type.getEnumConstants())
                .map(e -> e.name().toLowerCase(Locale.ROOT))
                .collect(Collectors.toList());
        String expected = "one of " + String.join(", ", names);
        if (node instanceof Scalar s) {
            int index = names.indexOf(s.text());
            if (index >= 0) {
                return Optional.of(type.getEnumConstants()[index]);
            }
        }
        wrong(node, keyPath(key), expected, "");
        return Optional.empty();
    }

    /**
     * One or more of an enum's constants, written in lower case: a single value ({@code zeromq}) or a list of
     * distinct values ({@code [zeromq, tcp]}). The set keeps the order written; an empty list is a problem.
     */
    public <E extends Enum<E>> Optional<Set<E>> choices(String key, Class<E> type) {
        Node node = lookup(key);
        if (node == null) {
            return Optional.empty();
        }
        String keyPath = keyPath(key);
        List<String> names = Arrays.stream(type.getEnumConstants())
                .map(e -> e.name().toLowerCase(Locale.ROOT))
                .collect(Collectors.toList());
        String expected = "one of " + String.join(", ", names);
        List<Node> items = node instanceof Sequence sequence ? sequence.items() : List.of(node);
        if (items.isEmpty()) {
            wrong(node, keyPath, expected + ", or a list of them", "");
            return Optional.empty();
        }
        Set<E> result = new LinkedHashSet<>();
        boolean ok = true;
        for (int i = 0; i < items.size(); i++) {
            Node item = items.get(i);
            String itemPath = node instanceof Sequence ? keyPath + "[" + i + "]" : keyPath;
            int index = item instanceof Scalar s ? names.indexOf(s.text()) : -1;
            if (index < 0) {
                wrong(item, itemPath, expected, "");
                ok = false;
            } else if (!result.add(type.getEnumConstants()[index])) {
                reader.add(item.mark(), itemPath, names.get(index) + " is listed twice");
                ok = false;
            }
        }
        return ok ? Optional.of(Collections.unmodifiableSet(result)) : Optional.empty();
    }

    /**
     * A host name or an IPv4 or IPv6 address literal, checked by its syntax only: no name is looked up here. An
     * IPv6 literal may be written in brackets; it is returned without them.
     */
    public Optional<String> host(String key) {
        return string(key, ConfigSection::hostProblem)
                .map(h -> h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h);
    }

    /**
     * A path; a relative one is resolved against the config file's directory, so a config tree can be moved
     * whole. {@code ~} is not expanded (brine is not a shell), so it is refused.
     */
    public Optional<Path> path(String key) {
        Node node = lookup(key);
        if (node == null) {
            return Optional.empty();
        }
        String keyPath = keyPath(key);
        String text = text(node, keyPath, ValueCheck.any(), true);
        if (text == null) {
            return Optional.empty();
        }
        if (text.startsWith("~")) {
            reader.add(
                    node.mark(),
                    keyPath,
                    "~ is not expanded in brine config files: write the full path, got " + Quoting.quote(text));
            return Optional.empty();
        }
        try {
            return Optional.of(reader.directory().resolve(text).normalize());
        } catch (InvalidPathException e) {
            reader.add(node.mark(), keyPath, "not a valid path: " + Quoting.quote(text));
            return Optional.empty();
        }
    }

    // ---------------------------------------------------------------- collections

    /** Whether {@code key} is written as a list. */
    public boolean isList(String key) {
        return lookup(key) instanceof Sequence;
    }

    /** A list of scalars, as written, each passing {@code check}. A single scalar is not taken for a list. */
    public Optional<List<String>> strings(String key, ValueCheck check) {
        Node node = lookup(key);
        if (node == null) {
            return Optional.empty();
        }
        String keyPath = keyPath(key);
        if (!(node instanceof Sequence sequence)) {
            wrong(node, keyPath, "a list", node instanceof Scalar ? " (write [value] or '- value' lines)" : "");
            return Optional.empty();
        }
        return Optional.of(items(sequence, keyPath, check));
    }

    /**
     * A mapping of names to values, where each value is a scalar or a list of scalars (a scalar is returned as a
     * one-element list). Names must be non-empty and free of white space; values must pass {@code check}. The
     * returned map keeps the file's order.
     */
    public Optional<Map<String, List<String>>> stringLists(String key, ValueCheck check) {
        Node node = lookup(key);
        if (node == null) {
            return Optional.empty();
        }
        String keyPath = keyPath(key);
        if (!(node instanceof Mapping map)) {
            wrong(node, keyPath, "a mapping of name: value", "");
            return Optional.empty();
        }
        Map<String, List<String>> result = new LinkedHashMap<>();
        for (Entry entry : map.entries()) {
            String entryPath = keyPath + "." + entry.key();
            if (!validName(entry, entryPath)) {
                continue;
            }
            Node value = entry.value();
            if (value instanceof Sequence sequence) {
                result.put(entry.key(), items(sequence, entryPath, check));
            } else if (value instanceof Scalar s && !s.isNull()) {
                String text = text(s, entryPath, check, true);
                if (text != null) {
                    result.put(entry.key(), List.of(text));
                }
            } else {
                wrong(value, entryPath, "a value or a list of values", "");
            }
        }
        return Optional.of(Collections.unmodifiableMap(result));
    }

    /**
     * One entry of a mapping of names chosen by the admin to a value or a list of values ({@link #namedValues}):
     * whether it was written as a list, and a way to report a problem at its line.
     */
    public final class Named {
        private final String name;
        private final boolean list;
        private final List<String> values;
        private final Mark mark;
        private final String keyPath;

        private Named(String name, boolean list, List<String> values, Mark mark, String keyPath) {
            this.name = name;
            this.list = list;
            this.values = values;
            this.mark = mark;
            this.keyPath = keyPath;
        }

        public String name() {
            return name;
        }

        /** Whether the value was written as a list (else {@link #values} holds the one value). */
        public boolean list() {
            return list;
        }

        public List<String> values() {
            return values;
        }

        /** Records a problem with this entry, at the line of its value. */
        public void problem(String message) {
            reader.add(mark, keyPath, message);
        }
    }

    /**
     * As {@link #stringLists}, and keeps whether each value was a list and where it was written, for checks that
     * need every entry at once (such as {@code nodegroups:}, which refer to each other). Values are not checked.
     */
    public Optional<List<Named>> namedValues(String key) {
        Node node = lookup(key);
        if (node == null) {
            return Optional.empty();
        }
        String keyPath = keyPath(key);
        if (!(node instanceof Mapping map)) {
            wrong(node, keyPath, "a mapping of name: value", "");
            return Optional.empty();
        }
        List<Named> result = new ArrayList<>();
        for (Entry entry : map.entries()) {
            String entryPath = keyPath + "." + entry.key();
            if (!validName(entry, entryPath)) {
                continue;
            }
            Node value = entry.value();
            if (value instanceof Sequence sequence) {
                result.add(new Named(
                        entry.key(), true, items(sequence, entryPath, ValueCheck.any()), value.mark(), entryPath));
            } else if (value instanceof Scalar s && !s.isNull()) {
                String text = text(s, entryPath, ValueCheck.any(), true);
                if (text != null) {
                    result.add(new Named(entry.key(), false, List.of(text), value.mark(), entryPath));
                }
            } else {
                wrong(value, entryPath, "a value or a list of values", "");
            }
        }
        return Optional.of(List.copyOf(result));
    }

    /** A nested mapping whose keys are known to the caller (such as {@code tls: {cert: ..., key: ...}}). */
    public Optional<ConfigSection> section(String key) {
        Node node = lookup(key);
        if (node == null) {
            return Optional.empty();
        }
        if (!(node instanceof Mapping map)) {
            wrong(node, keyPath(key), "a mapping of 'key: value' lines", "");
            return Optional.empty();
        }
        return Optional.of(reader.section(keyPath(key), map.mark(), map));
    }

    /** A list of nested mappings (such as {@code autosign_tokens: [{match: ..., sha256: ...}]}). */
    public Optional<List<ConfigSection>> sectionList(String key) {
        Node node = lookup(key);
        if (node == null) {
            return Optional.empty();
        }
        String keyPath = keyPath(key);
        if (!(node instanceof Sequence sequence)) {
            wrong(node, keyPath, "a list of mappings", "");
            return Optional.empty();
        }
        List<ConfigSection> result = new ArrayList<>();
        for (int i = 0; i < sequence.items().size(); i++) {
            Node item = sequence.items().get(i);
            String itemPath = keyPath + "[" + i + "]";
            if (item instanceof Mapping map) {
                result.add(reader.section(itemPath, map.mark(), map));
            } else {
                wrong(item, itemPath, "a mapping of 'key: value' lines", "");
            }
        }
        return Optional.of(List.copyOf(result));
    }

    /**
     * A mapping of names chosen by the admin to nested mappings whose keys are known to the caller (such as
     * {@code publisher_acl: {ops: {targets: [...]}}}). The returned map keeps the file's order.
     */
    public Optional<Map<String, ConfigSection>> sectionMap(String key) {
        Node node = lookup(key);
        if (node == null) {
            return Optional.empty();
        }
        String keyPath = keyPath(key);
        if (!(node instanceof Mapping outer)) {
            wrong(node, keyPath, "a mapping of name: settings", "");
            return Optional.empty();
        }
        Map<String, ConfigSection> result = new LinkedHashMap<>();
        for (Entry entry : outer.entries()) {
            String entryPath = keyPath + "." + entry.key();
            if (!validName(entry, entryPath)) {
                continue;
            }
            if (entry.value() instanceof Mapping map) {
                result.put(entry.key(), reader.section(entryPath, map.mark(), map));
            } else {
                wrong(entry.value(), entryPath, "a mapping of 'key: value' lines", "");
            }
        }
        return Optional.of(Collections.unmodifiableMap(result));
    }

    // ---------------------------------------------------------------- internals

    /**
     * One problem per unknown key, with the nearest known name when one is close; the section's valid keys are listed
     * once, with its first unknown key, and the later ones point back at that line.
     */
    void reportUnknownKeys() {
        int listedAt = -1;
        for (Entry entry : mapping.entries()) {
            if (!known.contains(entry.key())) {
                String suggestion = closest(entry.key())
                        .map(k -> ", did you mean " + k + "?")
                        .orElse("");
                String list;
                if (listedAt < 0) {
                    list = " (valid keys here: " + String.join(", ", known) + ")";
                    listedAt = entry.keyMark().line();
                } else {
                    list = " (valid keys listed at line " + listedAt + ")";
                }
                reader.add(entry.keyMark(), keyPath(entry.key()), "unknown key" + suggestion + list);
            }
        }
    }

    /** The known key a typo most likely meant: a small edit away, or the same words with a suffix. */
    private Optional<String> closest(String unknown) {
        String typed = unknown.toLowerCase(Locale.ROOT).replace('-', '_');
        String best = null;
        int bestScore = Integer.MAX_VALUE;
        for (String candidate : known) {
            int score = candidate.startsWith(typed + "_") || typed.startsWith(candidate + "_")
                    ? 1
                    : editDistance(typed, candidate);
            if (score < bestScore) {
                best = candidate;
                bestScore = score;
            }
        }
        int allowed = typed.length() <= 4 ? 1 : typed.length() <= 9 ? 2 : 3;
        return bestScore <= allowed ? Optional.of(best) : Optional.empty();
    }

    /** Edits (insert, delete, replace, swap two neighbours) that turn {@code a} into {@code b}. */
    private static int editDistance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(d[i - 1][j - 1] + cost, Math.min(d[i - 1][j], d[i][j - 1]) + 1);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }

    /** The value of {@code key}, or null when it is absent or set to nothing; either way {@code key} is known. */
    private Node lookup(String key) {
        known.add(key);
        Entry entry = mapping.get(key);
        if (entry == null || entry.value() instanceof Scalar s && s.isNull()) {
            return null;
        }
        return entry.value();
    }

    private String keyPath(String key) {
        return path.isEmpty() ? key : key.isEmpty() ? path : path + "." + key;
    }

    private List<String> items(Sequence sequence, String keyPath, ValueCheck check) {
        List<String> result = new ArrayList<>();
        for (int i = 0; i < sequence.items().size(); i++) {
            String text = text(sequence.items().get(i), keyPath + "[" + i + "]", check, true);
            if (text != null) {
                result.add(text);
            }
        }
        return List.copyOf(result);
    }

    private String text(Node node, String keyPath, ValueCheck check, boolean echo) {
        if (!(node instanceof Scalar s) || s.isNull()) {
            wrong(node, keyPath, "a single value", "");
            return null;
        }
        String text = s.text();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                reader.add(
                        node.mark(),
                        keyPath,
                        String.format(
                                "contains a control character (U+%04X)%s",
                                (int) c, echo ? ": " + Quoting.quote(text) : ""));
                return null;
            }
        }
        Optional<String> problem = check.problem(text);
        if (problem.isPresent()) {
            reader.add(node.mark(), keyPath, (echo ? Quoting.quote(text) + " is not valid: " : "") + problem.get());
            return null;
        }
        return text;
    }

    private Long whole(Node node, String keyPath, long min, long max, String what) {
        String expected = max == Long.MAX_VALUE || max == Integer.MAX_VALUE
                ? what + " of at least " + min
                : what + " from " + min + " to " + max;
        if (node instanceof Scalar s
                && s.kind() == Kind.INTEGER
                && DECIMAL.matcher(s.text()).matches()) {
            try {
                long value = Long.parseLong(s.text());
                if (value >= min && value <= max) {
                    return value;
                }
            } catch (NumberFormatException e) {
                // out of long's range: out of ours too
            }
            wrong(node, keyPath, expected, "");
            return null;
        }
        String hint = "";
        if (node instanceof Scalar s) {
            String text = s.text();
            if (s.kind() == Kind.STRING && DECIMAL.matcher(text).matches()) {
                hint = " (remove the quotes)";
            } else if (text.matches("-?0[0-9]+")) {
                hint = " (a leading zero is ambiguous: YAML 1.1 reads it as octal)";
            } else if (LOOKS_NUMERIC.matcher(text).matches() && text.contains("_")) {
                hint = " (write the digits without '_')";
            } else if (WITH_UNIT.matcher(text).matches() && what.contains("seconds")) {
                hint = " (write the number of seconds alone, without a unit)";
            }
        }
        wrong(node, keyPath, expected, hint);
        return null;
    }

    private boolean validName(Entry entry, String entryPath) {
        String name = entry.key();
        boolean ok = !name.isEmpty()
                && name.codePoints()
                        .noneMatch(c -> Character.isWhitespace(c)
                                || Character.isISOControl(c)
                                || c == '\u2028'
                                || c == '\u2029');
        if (!ok) {
            reader.add(
                    entry.keyMark(),
                    entryPath,
                    "a name must be non-empty and free of white space, got " + Quoting.quote(name));
        }
        return ok;
    }

    private void wrong(Node node, String keyPath, String expected, String hint) {
        reader.add(node.mark(), keyPath, "expected " + expected + ", got " + describe(node) + hint);
    }

    static String describe(Node node) {
        if (node instanceof Mapping) {
            return "a mapping";
        }
        if (node instanceof Sequence) {
            return "a list";
        }
        Scalar scalar = (Scalar) node;
        if (scalar.isNull()) {
            return "nothing";
        }
        return (scalar.kind() == Kind.STRING && DECIMAL.matcher(scalar.text()).matches() ? "the string " : "")
                + Quoting.quote(scalar.text());
    }

    static Optional<String> hostProblem(String value) {
        boolean bracketed = value.startsWith("[") && value.endsWith("]");
        String host = bracketed ? value.substring(1, value.length() - 1) : value;
        if (host.isEmpty()) {
            return Optional.of("expected a host name or IP address");
        }
        if (bracketed || host.indexOf(':') >= 0) {
            // Brackets make InetAddress parse a literal and never ask DNS.
            if (!host.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.')) {
                return Optional.of("not an IPv6 address");
            }
            try {
                return InetAddress.getByName("[" + host + "]") instanceof Inet6Address
                        ? Optional.empty()
                        : Optional.of("not an IPv6 address");
            } catch (UnknownHostException e) {
                return Optional.of("not an IPv6 address");
            }
        }
        if (host.chars().allMatch(c -> (c >= '0' && c <= '9') || c == '.')) {
            String[] parts = host.split("\\.", -1);
            if (parts.length != 4) {
                return Optional.of("an IPv4 address has four parts");
            }
            for (String part : parts) {
                if (part.isEmpty()
                        || part.length() > 3
                        || (part.length() > 1 && part.charAt(0) == '0')
                        || Integer.parseInt(part) > 255) {
                    return Optional.of("an IPv4 address has four parts from 0 to 255, without leading zeros");
                }
            }
            return Optional.empty();
        }
        if (host.length() > 253) {
            return Optional.of("a host name is at most 253 characters");
        }
        String[] labels =
                host.endsWith(".") ? host.substring(0, host.length() - 1).split("\\.", -1) : host.split("\\.", -1);
        for (String label : labels) {
            if (label.isEmpty()
                    || label.length() > 63
                    || label.startsWith("-")
                    || label.endsWith("-")
                    || !label.chars()
                            .allMatch(c -> (c >= 'a' && c <= 'z')
                                    || (c >= 'A' && c <= 'Z')
                                    || (c >= '0' && c <= '9')
                                    || c == '-')) {
                return Optional.of(
                        "not a host name (labels of letters, digits and '-', separated by dots)" + " or IP address");
            }
        }
        if (labels[labels.length - 1].chars().allMatch(c -> c >= '0' && c <= '9')) {
            return Optional.of("not an IP address, and a host name's last label is not all digits");
        }
        return Optional.empty();
    }
}

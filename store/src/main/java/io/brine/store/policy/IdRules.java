package io.brine.store.policy;

import io.brine.protocol.MinionIds;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The entries of an autosign or autoreject file, one a line:
 * <ul>
 * <li>an exact minion id ({@code web1.example.com});</li>
 * <li>{@code *.DOMAIN}, where {@code *} stands for one or more whole leading labels: {@code *.example.com}
 * matches {@code web.example.com} and {@code a.b.example.com}, but neither {@code example.com} nor
 * {@code webexample.com};</li>
 * <li>{@code *} alone: every id.</li>
 * </ul>
 * A line starting with {@code #} is a comment; blank lines are skipped. Any other line that is not an entry (white
 * space, other glob characters, a {@code *} elsewhere, empty labels, upper case, ...) is a {@link Problem}, and the
 * rest of the file still applies. Matching is exact on ids that passed the one id validator: nothing is folded.
 */
public final class IdRules {

    /** One valid entry and where it came from. */
    public record Entry(int line, String text) {}

    /** A line that is not an entry, and why. */
    public record Problem(int line, String text, String reason) {}

    public static final IdRules EMPTY = new IdRules(Map.of(), Map.of(), null, List.of(), 0);

    private final Map<String, Entry> exact;
    /** Keyed by the domain without the leading {@code *.}. */
    private final Map<String, Entry> domains;

    private final Entry everything;
    private final List<Problem> problems;
    private final int entries;

    private IdRules(
            Map<String, Entry> exact,
            Map<String, Entry> domains,
            Entry everything,
            List<Problem> problems,
            int entries) {
        this.exact = exact;
        this.domains = domains;
        this.everything = everything;
        this.problems = List.copyOf(problems);
        this.entries = entries;
    }

    /** Parses a whole file; never throws. Lines end with LF, CRLF or CR. */
    public static IdRules parse(String content) {
        Map<String, Entry> exact = new HashMap<>();
        Map<String, Entry> domains = new HashMap<>();
        Entry everything = null;
        List<Problem> problems = new ArrayList<>();
        int entries = 0;
        List<String> lines = content.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            int number = i + 1;
            String line = lines.get(i);
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Optional<String> problem = problem(line);
            if (problem.isPresent()) {
                problems.add(new Problem(number, line, problem.get()));
                continue;
            }
            Entry entry = new Entry(number, line);
            entries++;
            if (line.equals("*")) {
                everything = everything == null ? entry : everything;
            } else if (line.startsWith("*.")) {
                domains.putIfAbsent(line.substring(2), entry);
            } else {
                exact.putIfAbsent(line, entry);
            }
        }
        return new IdRules(Map.copyOf(exact), Map.copyOf(domains), everything, problems, entries);
    }

    /** Why {@code line} is not a valid entry, or empty when it is one. */
    static Optional<String> problem(String line) {
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (Character.isWhitespace(c) || Character.isSpaceChar(c)) {
                return Optional.of("white space is not allowed (comments start with # in the first column)");
            }
            if (c == '?' || c == '[' || c == ']' || c == '{' || c == '}' || c == '!') {
                return Optional.of("only '*' alone or '*.' before a domain is supported, not other glob characters");
            }
        }
        if (line.equals("*")) {
            return Optional.empty();
        }
        String id = line.startsWith("*.") ? line.substring(2) : line;
        if (id.indexOf('*') >= 0) {
            return Optional.of("'*' may stand only alone or as the whole first label, as in *.example.com");
        }
        Optional<String> invalid = MinionIds.problem(id);
        if (invalid.isPresent()) {
            boolean upper = id.chars().anyMatch(c -> c >= 'A' && c <= 'Z');
            return Optional.of((line.startsWith("*.") ? "the domain after '*.': " : "")
                    + invalid.get()
                    + (upper ? " (ids are lower case; nothing is folded)" : ""));
        }
        return Optional.empty();
    }

    /**
     * The entry that matches {@code id} (a valid id), or empty: an exact entry first, then the longest matching
     * domain, then {@code *}.
     */
    public Optional<Entry> match(String id) {
        Entry hit = exact.get(id);
        if (hit != null) {
            return Optional.of(hit);
        }
        // Every proper suffix of the id that starts after a dot, longest first: '*' is one or more whole labels.
        for (int dot = id.indexOf('.'); dot >= 0; dot = id.indexOf('.', dot + 1)) {
            hit = domains.get(id.substring(dot + 1));
            if (hit != null) {
                return Optional.of(hit);
            }
        }
        return Optional.ofNullable(everything);
    }

    /** Whether the file has the entry {@code *}. */
    public boolean matchesEverything() {
        return everything != null;
    }

    public List<Problem> problems() {
        return problems;
    }

    /** How many valid entries the file has. */
    public int size() {
        return entries;
    }
}

package io.brine.protocol.targeting;

import io.brine.protocol.MinionIds;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Parses target expressions of each type: {@code glob} (the default), {@code pcre}, {@code list}, {@code grain}
 * ({@code key:glob}, nested keys joined by {@code :}) and {@code compound}, Salt's syntax:
 * {@code G@os:debian and web* or not L@db1,db2}, with {@code E@} for a regex, {@code L@} for a list, {@code P@} for
 * a grain regex ({@code key:regex}), {@code S@} for a subnet on the {@code ipv4} grain ({@code 10.0.0.0/8}),
 * parentheses, and {@code not} binding tighter than {@code and}, which binds tighter than {@code or}. A nodegroup term
 * ({@code N@name}) is the master's to expand first ({@link Nodegroups}); parsed here, it is an error.
 */
public final class Targets {

    public static final Set<String> TYPES = Set.of("glob", "pcre", "list", "grain", "compound");

    private Targets() {}

    public static Target parse(String type, String expression) {
        if (expression == null || expression.isBlank()) {
            throw new TargetException("empty target expression");
        }
        if (expression.length() > TargetException.MAX_EXPRESSION) {
            throw new TargetException(
                    "target expression is longer than " + TargetException.MAX_EXPRESSION + " characters");
        }
        return switch (type) {
            case "glob" -> new Target.IdGlob(Glob.compile(expression));
            case "pcre" -> regex(expression);
            case "list" -> list(expression);
            case "grain" -> grain(expression);
            case "compound" -> new CompoundParser(expression).parse();
            default -> throw new TargetException("unknown target type " + type + ": use one of " + TYPES);
        };
    }

    private static Target regex(String expression) {
        try {
            return new Target.IdRegex(Pattern.compile(expression));
        } catch (PatternSyntaxException e) {
            throw new TargetException("bad regular expression " + expression + ": " + e.getDescription());
        }
    }

    private static Target list(String expression) {
        Set<String> ids = new LinkedHashSet<>();
        for (String id : expression.split(",")) {
            if (!id.isBlank()) {
                String stripped = id.strip();
                // One strict validator wherever an id enters (DESIGN.md 4.2): no case folding, no silent miss.
                MinionIds.problem(stripped).ifPresent(problem -> {
                    throw new TargetException(
                            "not a minion id in the list: " + MinionIds.printable(stripped) + " (" + problem + ")");
                });
                ids.add(stripped);
            }
        }
        if (ids.isEmpty()) {
            throw new TargetException("empty list of ids");
        }
        return new Target.IdList(Set.copyOf(ids));
    }

    private static Target grain(String expression) {
        int colon = expression.lastIndexOf(':');
        if (colon <= 0) {
            throw new TargetException("grain target " + expression + " needs the form key:glob (e.g. os:debian)");
        }
        List<String> path = Arrays.asList(expression.substring(0, colon).split(":"));
        if (path.stream().anyMatch(String::isEmpty)) {
            throw new TargetException("grain target " + expression + " has an empty key");
        }
        return new Target.GrainGlob(List.copyOf(path), Glob.compile(expression.substring(colon + 1), true));
    }

    private static Target grainRegex(String expression) {
        // The key path ends at the last colon before the first character that only a regex has.
        int special = 0;
        while (special < expression.length() && "()[]{}.*+?|^$\\".indexOf(expression.charAt(special)) < 0) {
            special++;
        }
        int colon = expression.lastIndexOf(':', special);
        if (colon <= 0) {
            throw new TargetException("grain regex target " + expression + " needs the form key:regex");
        }
        List<String> path = Arrays.asList(expression.substring(0, colon).split(":"));
        if (path.stream().anyMatch(String::isEmpty)) {
            throw new TargetException("grain regex target " + expression + " has an empty key");
        }
        String regex = expression.substring(colon + 1);
        try {
            return new Target.GrainRegex(List.copyOf(path), Pattern.compile(regex, Pattern.CASE_INSENSITIVE));
        } catch (PatternSyntaxException e) {
            throw new TargetException("bad regular expression " + regex + ": " + e.getDescription());
        }
    }

    private static Target subnet(String expression) {
        int slash = expression.indexOf('/');
        String address = slash < 0 ? expression : expression.substring(0, slash);
        int prefix = 32;
        if (slash >= 0) {
            String bits = expression.substring(slash + 1);
            if (!bits.matches("[0-9]{1,2}") || Integer.parseInt(bits) > 32) {
                throw new TargetException("bad subnet " + expression + ": the prefix length must be 0 to 32");
            }
            prefix = Integer.parseInt(bits);
        }
        Integer network = Target.Subnet.ipv4(address);
        if (network == null) {
            throw new TargetException("bad subnet " + expression + ": expected an IPv4 address or a.b.c.d/bits");
        }
        return new Target.Subnet(network, prefix);
    }

    /**
     * The words of a compound expression: split at white space, with parentheses glued to a word's start or end as
     * words of their own ({@code (web* or db*)}). Joining them with spaces gives an expression with the same words.
     */
    static List<String> tokens(String expression) {
        List<String> tokens = new ArrayList<>();
        for (String word : expression.strip().split("\\s+")) {
            int start = 0;
            while (start < word.length() && word.charAt(start) == '(') {
                tokens.add("(");
                start++;
            }
            int end = word.length();
            int closing = 0;
            while (end > start && word.charAt(end - 1) == ')') {
                end--;
                closing++;
            }
            if (end > start) {
                tokens.add(word.substring(start, end));
            }
            for (int i = 0; i < closing; i++) {
                tokens.add(")");
            }
        }
        return tokens;
    }

    /** Recursive descent over whitespace-separated words and parentheses. */
    private static final class CompoundParser {
        private final List<String> tokens = new ArrayList<>();
        private int position;

        CompoundParser(String expression) {
            tokens.addAll(tokens(expression));
        }

        Target parse() {
            Target target = or();
            if (position < tokens.size()) {
                throw new TargetException(
                        "unexpected '" + tokens.get(position) + "' in compound target at word " + (position + 1));
            }
            return target;
        }

        private Target or() {
            Target left = and();
            while (accept("or")) {
                left = new Target.Or(left, and());
            }
            return left;
        }

        private Target and() {
            Target left = not();
            while (accept("and")) {
                left = new Target.And(left, not());
            }
            return left;
        }

        private Target not() {
            if (accept("not")) {
                return new Target.Not(not());
            }
            return primary();
        }

        private Target primary() {
            if (position >= tokens.size()) {
                throw new TargetException("compound target ends where a term was expected");
            }
            String token = tokens.get(position++);
            if (token.equals("(")) {
                Target inner = or();
                if (!accept(")")) {
                    throw new TargetException("missing ')' in compound target");
                }
                return inner;
            }
            String lower = token.toLowerCase(Locale.ROOT);
            if (token.equals(")") || lower.equals("and") || lower.equals("or")) {
                throw new TargetException("unexpected '" + token + "' in compound target at word " + position);
            }
            if (token.length() > 2 && token.charAt(1) == '@') {
                String rest = token.substring(2);
                return switch (token.charAt(0)) {
                    case 'G' -> grain(rest);
                    case 'E' -> regex(rest);
                    case 'L' -> list(rest);
                    case 'P' -> grainRegex(rest);
                    case 'S' -> subnet(rest);
                    case 'N' ->
                        throw new TargetException("nodegroup " + token + " was not expanded: nodegroups are"
                                + " the master's (master.yaml), expanded before a target is parsed");
                    default ->
                        throw new TargetException("unsupported compound prefix " + token.substring(0, 2)
                                + " (supported: G@, P@, E@, L@, S@, N@ for a nodegroup, and plain globs)");
                };
            }
            return new Target.IdGlob(Glob.compile(token));
        }

        private boolean accept(String word) {
            if (position < tokens.size() && tokens.get(position).equalsIgnoreCase(word)) {
                position++;
                return true;
            }
            return false;
        }
    }
}

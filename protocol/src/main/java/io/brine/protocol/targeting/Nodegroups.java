package io.brine.protocol.targeting;

import io.brine.protocol.MinionIds;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Salt's nodegroups: names for target expressions, defined under {@code nodegroups:} in {@code master.yaml} and used
 * as {@code N@name} in a compound target (or {@code brine -N name}). The master expands them before it parses a
 * target, each {@code N@name} into {@code ( definition )} with the nodegroups that one uses expanded in turn, so
 * minions only ever see compound terms they know. Definitions are checked all at once when loaded: a definition
 * that does not parse, uses an unknown nodegroup, or uses itself (directly or through others: Salt's recursion
 * check) is refused then, not at the first publication.
 */
public final class Nodegroups {

    /** The compound prefix of a nodegroup term. */
    public static final String PREFIX = "N@";
    /** The target type of {@code brine -N}: the expression is one nodegroup's name. */
    public static final String TYPE = "nodegroup";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]{0,127}");
    private static final Set<String> OPERATORS = Set.of("and", "or", "not", "(", ")");
    private static final Pattern TYPED_TERM = Pattern.compile("[A-Z]@.*", Pattern.DOTALL);
    /** Stands for a nodegroup term when only the syntax around it is checked. */
    private static final String PLACEHOLDER = "nodegroup";

    private static final Nodegroups NONE = new Nodegroups(Map.of());

    private final Map<String, String> expanded;

    private Nodegroups(Map<String, String> expanded) {
        this.expanded = expanded;
    }

    /** No nodegroups: every {@code N@} term is unknown. */
    public static Nodegroups none() {
        return NONE;
    }

    /**
     * The nodegroups of {@code definitions} (name to compound expression, in the file's order).
     *
     * @throws TargetException naming the first definition with a problem ({@link #problems} names them all)
     */
    public static Nodegroups of(Map<String, String> definitions) {
        Checked checked = check(definitions);
        if (!checked.problems().isEmpty()) {
            Map.Entry<String, String> first =
                    checked.problems().entrySet().iterator().next();
            throw new TargetException("nodegroup " + first.getKey() + ": " + first.getValue());
        }
        return new Nodegroups(Collections.unmodifiableMap(checked.expanded()));
    }

    /** The names defined, in the file's order. */
    public Set<String> names() {
        return expanded.keySet();
    }

    /**
     * What is wrong with each definition, by name (empty when all are fine): a bad name, a syntax error, a use of an
     * unknown nodegroup or of itself, or an expansion longer than a target may be. A definition that only uses one
     * with a problem is not named: the problem is where it is written.
     */
    public static Map<String, String> problems(Map<String, String> definitions) {
        return Collections.unmodifiableMap(check(definitions).problems());
    }

    private record Checked(Map<String, String> problems, Map<String, String> expanded) {}

    private static Checked check(Map<String, String> definitions) {
        Map<String, String> problems = new LinkedHashMap<>();
        Map<String, List<String>> uses = new LinkedHashMap<>();
        for (Map.Entry<String, String> definition : definitions.entrySet()) {
            String name = definition.getKey();
            Optional<String> problem = nameProblem(name).or(() -> syntaxProblem(definition.getValue()));
            if (problem.isEmpty()) {
                List<String> used = references(definition.getValue());
                problem = used.stream()
                        .filter(u -> !definitions.containsKey(u))
                        .findFirst()
                        .map(unknown -> "uses the unknown nodegroup " + unknown);
                uses.put(name, used);
            }
            problem.ifPresent(p -> problems.put(name, p));
        }
        // Depth first, each name once: on the stack (a use of one of those is a cycle), or done.
        Map<String, String> expanded = new LinkedHashMap<>();
        Set<String> done = new LinkedHashSet<>();
        for (String name : definitions.keySet()) {
            visit(name, definitions, uses, new ArrayList<>(), done, problems, expanded);
        }
        Map<String, String> ordered = new LinkedHashMap<>();
        definitions.keySet().stream().filter(expanded::containsKey).forEach(n -> ordered.put(n, expanded.get(n)));
        return new Checked(problems, ordered);
    }

    /** Expands {@code name} after what it uses, unless it or one of those has a problem. */
    private static void visit(
            String name,
            Map<String, String> definitions,
            Map<String, List<String>> uses,
            List<String> stack,
            Set<String> done,
            Map<String, String> problems,
            Map<String, String> expanded) {
        if (done.contains(name) || problems.containsKey(name)) {
            return;
        }
        stack.add(name);
        boolean usable = true;
        for (String used : uses.get(name)) {
            int onStack = stack.indexOf(used);
            if (onStack >= 0) {
                List<String> loop = new ArrayList<>(stack.subList(onStack, stack.size()));
                loop.add(used);
                for (String member : loop.subList(0, loop.size() - 1)) {
                    problems.putIfAbsent(member, "uses itself: " + String.join(" -> ", rotate(loop, member)));
                }
                usable = false;
                continue;
            }
            visit(used, definitions, uses, stack, done, problems, expanded);
            usable &= expanded.containsKey(used);
        }
        stack.remove(stack.size() - 1);
        done.add(name);
        if (!usable || problems.containsKey(name)) {
            return;
        }
        List<String> words = new ArrayList<>();
        words.add("(");
        for (String token : Targets.tokens(definitions.get(name))) {
            words.add(isTerm(token) ? expanded.get(token.substring(PREFIX.length())) : token);
        }
        words.add(")");
        String expression = String.join(" ", words);
        if (expression.length() > TargetException.MAX_EXPRESSION) {
            problems.put(
                    name,
                    "expands to " + expression.length() + " characters, more than a target may have ("
                            + TargetException.MAX_EXPRESSION + ")");
            return;
        }
        expanded.put(name, expression);
    }

    /** The loop {@code a -> b -> a} told from {@code member}: {@code b -> a -> b}. */
    private static List<String> rotate(List<String> loop, String member) {
        List<String> ring = loop.subList(0, loop.size() - 1);
        int from = ring.indexOf(member);
        List<String> rotated = new ArrayList<>(ring.subList(from, ring.size()));
        rotated.addAll(ring.subList(0, from));
        rotated.add(member);
        return rotated;
    }

    /** Why {@code name} cannot name a nodegroup ({@code N@name} is one word of a compound target), or empty. */
    public static Optional<String> nameProblem(String name) {
        return NAME.matcher(name).matches()
                ? Optional.empty()
                : Optional.of("a nodegroup name is 1 to 128 of [A-Za-z0-9._-], not starting with '.' or '-'");
    }

    /**
     * Salt's list form of a definition as one compound expression: a list of minion ids is {@code L@id1,id2}; a
     * list of compound words (with an operator, a parenthesis or a typed term such as {@code G@os:debian}) is the
     * words joined.
     *
     * @throws TargetException when it is neither: an item that is not a minion id in a list without operators
     */
    public static String fromList(List<String> items) {
        if (items.isEmpty()) {
            throw new TargetException("an empty list selects nothing");
        }
        boolean compound = items.stream()
                .anyMatch(item -> OPERATORS.contains(item.toLowerCase(Locale.ROOT))
                        || TYPED_TERM.matcher(item).matches());
        if (compound) {
            return String.join(" ", items);
        }
        for (String item : items) {
            Optional<String> problem = MinionIds.problem(item);
            if (problem.isPresent()) {
                throw new TargetException("a list of minion ids, and " + MinionIds.printable(item) + " is not one ("
                        + problem.get() + "); write globs as a compound string, e.g. 'web* or db*'");
            }
        }
        return "L@" + String.join(",", items);
    }

    /**
     * The target to parse and publish for the one a publisher sent: a {@code nodegroup} target, or a compound one
     * with {@code N@} terms, becomes a compound target with each nodegroup expanded; any other is returned as it
     * is.
     *
     * @throws TargetException for an unknown nodegroup
     */
    public Expanded expand(String type, String expression) {
        if (TYPE.equals(type)) {
            String name = expression == null ? "" : expression.strip();
            return new Expanded("compound", String.join(" ", term(name)));
        }
        if (!"compound".equals(type) || expression == null || !expression.contains(PREFIX)) {
            return new Expanded(type, expression);
        }
        List<String> tokens = Targets.tokens(expression);
        if (tokens.stream().noneMatch(Nodegroups::isTerm)) {
            return new Expanded(type, expression);
        }
        List<String> words = new ArrayList<>();
        for (String token : tokens) {
            if (isTerm(token)) {
                words.addAll(term(token.substring(PREFIX.length())));
            } else {
                words.add(token);
            }
        }
        return new Expanded(type, String.join(" ", words));
    }

    /** A target after {@link #expand}. */
    public record Expanded(String type, String expression) {}

    /**
     * Whether a target of {@code type} (with {@code N@} terms, or {@code nodegroup}) parses once each nodegroup is
     * expanded, whatever the nodegroups are: for a publisher, which does not know them.
     */
    public static Optional<String> syntaxProblem(String type, String expression) {
        if (TYPE.equals(type)) {
            String name = expression == null ? "" : expression.strip();
            return nameProblem(name).map(problem -> "bad nodegroup " + name + ": " + problem);
        }
        if (!"compound".equals(type)) {
            try {
                Targets.parse(type, expression);
                return Optional.empty();
            } catch (TargetException e) {
                return Optional.of(e.getMessage());
            }
        }
        return syntaxProblem(expression);
    }

    private static Optional<String> syntaxProblem(String compound) {
        if (compound == null || compound.isBlank()) {
            return Optional.of("empty target expression");
        }
        List<String> words = new ArrayList<>();
        for (String token : Targets.tokens(compound)) {
            if (isTerm(token)) {
                String name = token.substring(PREFIX.length());
                Optional<String> problem = nameProblem(name);
                if (problem.isPresent()) {
                    return Optional.of("bad nodegroup " + name + " in N@" + name + ": " + problem.get());
                }
                words.add(PLACEHOLDER);
            } else {
                words.add(token);
            }
        }
        try {
            Targets.parse("compound", String.join(" ", words));
            return Optional.empty();
        } catch (TargetException e) {
            return Optional.of(e.getMessage());
        }
    }

    private List<String> term(String name) {
        String definition = expanded.get(name);
        if (definition == null) {
            throw new TargetException(
                    "unknown nodegroup " + name + (expanded.isEmpty() ? " (master.yaml defines no nodegroups)" : ""));
        }
        return List.of(definition);
    }

    private static boolean isTerm(String token) {
        return token.length() > PREFIX.length() && token.startsWith(PREFIX);
    }

    /** The nodegroups a definition uses by name, in order. */
    private static List<String> references(String compound) {
        Set<String> names = new LinkedHashSet<>();
        for (String token : Targets.tokens(compound)) {
            if (isTerm(token)) {
                names.add(token.substring(PREFIX.length()));
            }
        }
        return List.copyOf(names);
    }
}

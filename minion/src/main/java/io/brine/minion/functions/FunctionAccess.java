package io.brine.minion.functions;

import io.brine.protocol.targeting.Glob;
import io.brine.protocol.targeting.TargetException;
import java.util.ArrayList;
import java.util.List;

/**
 * Which functions this minion runs: {@code functions: {allow: [...], deny: [...]}} in {@code minion.yaml}, globs on
 * function names. Deny wins; an empty allow list allows everything not denied. A minion admin uses it to keep, say,
 * {@code cmd.*} off a host whatever the master publishes.
 */
public final class FunctionAccess {

    private final List<String> allow;
    private final List<String> deny;
    private final List<Glob> allowGlobs;
    private final List<Glob> denyGlobs;

    private FunctionAccess(List<String> allow, List<String> deny) {
        this.allow = List.copyOf(allow);
        this.deny = List.copyOf(deny);
        List<String> problems = new ArrayList<>();
        this.allowGlobs = compile(this.allow, "allow", problems);
        this.denyGlobs = compile(this.deny, "deny", problems);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
    }

    /**
     * @throws IllegalArgumentException naming every bad glob, for the config loader to report with file and line
     */
    public static FunctionAccess of(List<String> allow, List<String> deny) {
        return new FunctionAccess(allow, deny);
    }

    public static FunctionAccess allowAll() {
        return new FunctionAccess(List.of(), List.of());
    }

    public boolean permits(String functionName) {
        if (denyGlobs.stream().anyMatch(g -> g.matches(functionName))) {
            return false;
        }
        return allowGlobs.isEmpty() || allowGlobs.stream().anyMatch(g -> g.matches(functionName));
    }

    public List<String> allow() {
        return allow;
    }

    public List<String> deny() {
        return deny;
    }

    private static List<Glob> compile(List<String> globs, String list, List<String> problems) {
        List<Glob> compiled = new ArrayList<>(globs.size());
        for (String glob : globs) {
            if (glob == null || glob.isBlank()) {
                problems.add("functions." + list + ": empty glob");
                continue;
            }
            try {
                compiled.add(Glob.compile(glob.strip()));
            } catch (TargetException e) {
                problems.add("functions." + list + ": " + e.getMessage());
            }
        }
        return List.copyOf(compiled);
    }

    @Override
    public String toString() {
        return "FunctionAccess[allow=" + allow + ", deny=" + deny + "]";
    }
}

package io.brine.store.policy;

import io.brine.protocol.MinionIds;
import io.brine.protocol.targeting.Glob;
import io.brine.store.keys.PolicyVerdict;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code autosign_claims}: a new key is accepted when every listed claim (a grain the minion sends with its auth
 * request) matches one of its globs. A claim that is a list matches when one of its items does; numbers and booleans
 * match by their text; a missing claim, a map or null never matches.
 *
 * <p><b>Claims are unsigned.</b> Anyone who can reach the master can claim anything, so this policy is only as strong
 * as the network that stops strangers from reaching the master's ports (DESIGN.md §4.8). Signed grants are the
 * strong form of the same idea.
 */
public final class ClaimsPolicy implements AcceptancePolicy {

    public static final String RULE = "autosign_claims";

    private final Map<String, List<Glob>> required;

    public ClaimsPolicy(Map<String, List<String>> required) {
        Map<String, List<Glob>> compiled = new LinkedHashMap<>();
        required.forEach((name, globs) ->
                compiled.put(name, globs.stream().map(Glob::compile).toList()));
        this.required = compiled;
    }

    @Override
    public PolicyDecision evaluate(AuthAttempt attempt) {
        if (required.isEmpty()) {
            return new PolicyDecision(PolicyVerdict.NONE, RULE, "no claims configured");
        }
        List<String> matched = new ArrayList<>();
        for (Map.Entry<String, List<Glob>> entry : required.entrySet()) {
            String name = entry.getKey();
            Object value = attempt.claims().get(name);
            if (value == null) {
                return new PolicyDecision(PolicyVerdict.NONE, RULE, "claim " + name + " is missing");
            }
            String hit = firstMatch(value, entry.getValue());
            if (hit == null) {
                return new PolicyDecision(
                        PolicyVerdict.NONE, RULE, "claim " + name + " matches none of " + entry.getValue());
            }
            matched.add(name + "=" + MinionIds.printable(hit));
        }
        return new PolicyDecision(
                PolicyVerdict.ACCEPT,
                RULE + " " + required.keySet(),
                "unsigned claims " + String.join(", ", matched) + " match");
    }

    private static String firstMatch(Object value, List<Glob> globs) {
        if (value instanceof List<?> list) {
            for (Object item : list) {
                String hit = scalarMatch(item, globs);
                if (hit != null) {
                    return hit;
                }
            }
            return null;
        }
        return scalarMatch(value, globs);
    }

    private static String scalarMatch(Object value, List<Glob> globs) {
        if (!(value instanceof String || value instanceof Number || value instanceof Boolean)) {
            return null;
        }
        String text = String.valueOf(value);
        for (Glob glob : globs) {
            if (glob.matches(text)) {
                return text;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return RULE + " " + required.keySet();
    }
}

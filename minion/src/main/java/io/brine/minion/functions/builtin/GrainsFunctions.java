package io.brine.minion.functions.builtin;

import io.brine.minion.functions.FunctionCall;
import io.brine.minion.functions.FunctionException;
import io.brine.minion.functions.MinionFunction;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** Salt's {@code grains} module over the grains snapshot the job was accepted with. */
final class GrainsFunctions {

    private GrainsFunctions() {}

    static List<MinionFunction> functions() {
        return List.of(
                MinionFunction.of("grains.items", "grains.items: all grains", FunctionCall::grains),
                MinionFunction.of(
                        "grains.get",
                        "grains.get KEY [DEFAULT=''] [delimiter=':']: the grain KEY; nested"
                                + " keys (and list indexes) joined by ':', e.g. grains.get cloud:region",
                        GrainsFunctions::get));
    }

    private static Object get(FunctionCall call) throws FunctionException {
        call.checkArguments(2, Set.of("key", "default", "delimiter"));
        String key = call.requireString(0, "key");
        Object fallback = call.arg(1, "default").orElse("");
        String delimiter = call.string(FunctionCall.KEYWORD_ONLY, "delimiter").orElse(":");
        if (delimiter.isEmpty()) {
            throw new FunctionException("argument 'delimiter' must not be empty");
        }
        Object value = call.grains();
        for (String part : key.split(Pattern.quote(delimiter), -1)) {
            if (value instanceof Map<?, ?> map && map.containsKey(part)) {
                value = map.get(part);
            } else if (value instanceof List<?> list && isIndex(part, list.size())) {
                value = list.get(Integer.parseInt(part));
            } else {
                return fallback;
            }
        }
        return value;
    }

    private static boolean isIndex(String s, int size) {
        if (s.isEmpty() || s.length() > 9 || !s.chars().allMatch(Character::isDigit)) {
            return false;
        }
        return Integer.parseInt(s) < size;
    }
}

package io.brine.protocol.targeting;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * A parsed target expression (Salt's targeting): which minions a publication is for. The master resolves it
 * against accepted minions and the grains they reported; each minion checks it again against itself.
 */
public sealed interface Target {

    /** Whether the minion {@code id} with {@code grains} is targeted. */
    boolean matches(String id, Map<String, Object> grains);

    /** Whether {@link #matches} reads the grains; when false, callers may pass an empty map. */
    default boolean usesGrains() {
        return false;
    }

    /** The exact ids targeted when the expression names them without wildcards or grains; empty otherwise. */
    default Optional<Set<String>> exactIds() {
        return Optional.empty();
    }

    /** Glob on the id (the default target type). */
    record IdGlob(Glob glob) implements Target {
        @Override
        public boolean matches(String id, Map<String, Object> grains) {
            return glob.matches(id);
        }

        @Override
        public Optional<Set<String>> exactIds() {
            return glob.isLiteral() ? Optional.of(Set.of(glob.toString())) : Optional.empty();
        }
    }

    /** Regular expression on the id, anchored at the start as Salt's {@code re.match} is. */
    record IdRegex(Pattern pattern) implements Target {
        @Override
        public boolean matches(String id, Map<String, Object> grains) {
            return pattern.matcher(id).lookingAt();
        }
    }

    /** An explicit list of ids. */
    record IdList(Set<String> ids) implements Target {
        @Override
        public boolean matches(String id, Map<String, Object> grains) {
            return ids.contains(id);
        }

        @Override
        public Optional<Set<String>> exactIds() {
            return Optional.of(ids);
        }
    }

    /**
     * A grain glob: {@code path} names a grain, nested keys separated by {@code :}; the glob matches the value's
     * string form case-insensitively, or any element of a list value, as in Salt.
     */
    record GrainGlob(List<String> path, Glob glob) implements Target {
        @Override
        public boolean usesGrains() {
            return true;
        }

        @Override
        public boolean matches(String id, Map<String, Object> grains) {
            Object value = grains;
            for (String key : path) {
                if (!(value instanceof Map<?, ?> map)) {
                    return false;
                }
                value = map.get(key);
            }
            return matchesValue(value);
        }

        private boolean matchesValue(Object value) {
            if (value == null || value instanceof Map<?, ?>) {
                return false;
            }
            if (value instanceof List<?> list) {
                return list.stream().anyMatch(this::matchesValue);
            }
            return glob.matches(String.valueOf(value));
        }
    }

    /** A grain regex ({@code P@}): as {@link GrainGlob}, with a regex anchored at the start, case-insensitive. */
    record GrainRegex(List<String> path, Pattern pattern) implements Target {
        @Override
        public boolean usesGrains() {
            return true;
        }

        @Override
        public boolean matches(String id, Map<String, Object> grains) {
            return anyScalar(grain(grains, path), text -> pattern.matcher(text).lookingAt());
        }
    }

    /** A subnet ({@code S@}) that one of the minion's {@code ipv4} grain addresses is in. */
    record Subnet(int network, int prefix) implements Target {
        @Override
        public boolean usesGrains() {
            return true;
        }

        @Override
        public boolean matches(String id, Map<String, Object> grains) {
            int mask = prefix == 0 ? 0 : -1 << (32 - prefix);
            return anyScalar(grains.get("ipv4"), text -> {
                Integer address = ipv4(text);
                return address != null && (address & mask) == (network & mask);
            });
        }

        /** A dotted-quad IPv4 address as an int; null when it is not one (never a host name: no DNS). */
        static Integer ipv4(String text) {
            String[] parts = text.split("\\.", -1);
            if (parts.length != 4) {
                return null;
            }
            int address = 0;
            for (String part : parts) {
                if (!part.matches("[0-9]{1,3}") || Integer.parseInt(part) > 255) {
                    return null;
                }
                address = address << 8 | Integer.parseInt(part);
            }
            return address;
        }
    }

    /** The value of the grain at {@code path} (nested keys); null when there is none. */
    private static Object grain(Map<String, Object> grains, List<String> path) {
        Object value = grains;
        for (String key : path) {
            if (!(value instanceof Map<?, ?> map)) {
                return null;
            }
            value = map.get(key);
        }
        return value;
    }

    /** Whether the value, or any element of a list value, is a scalar whose string form passes {@code test}. */
    private static boolean anyScalar(Object value, Predicate<String> test) {
        if (value == null || value instanceof Map<?, ?>) {
            return false;
        }
        if (value instanceof List<?> list) {
            return list.stream().anyMatch(item -> anyScalar(item, test));
        }
        return test.test(String.valueOf(value));
    }

    record And(Target left, Target right) implements Target {
        @Override
        public boolean usesGrains() {
            return left.usesGrains() || right.usesGrains();
        }

        @Override
        public boolean matches(String id, Map<String, Object> grains) {
            return left.matches(id, grains) && right.matches(id, grains);
        }
    }

    record Or(Target left, Target right) implements Target {
        @Override
        public boolean usesGrains() {
            return left.usesGrains() || right.usesGrains();
        }

        @Override
        public boolean matches(String id, Map<String, Object> grains) {
            return left.matches(id, grains) || right.matches(id, grains);
        }
    }

    record Not(Target inner) implements Target {
        @Override
        public boolean usesGrains() {
            return inner.usesGrains();
        }

        @Override
        public boolean matches(String id, Map<String, Object> grains) {
            return !inner.matches(id, grains);
        }
    }
}

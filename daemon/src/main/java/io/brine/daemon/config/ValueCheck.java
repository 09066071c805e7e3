package io.brine.daemon.config;

import java.util.Optional;

/**
 * A domain check on a configured string: says what is wrong with a value, or nothing. Its shape is that of
 * {@link io.brine.protocol.MinionIds#problem(String)}, so the one id validator plugs in as it is.
 */
@FunctionalInterface
public interface ValueCheck {

    /** Why {@code value} is not acceptable, or empty when it is. */
    Optional<String> problem(String value);

    /** Accepts every value. */
    static ValueCheck any() {
        return value -> Optional.empty();
    }

    /**
     * A shell-style glob ({@code *}, {@code ?}, {@code [...]}) as used to match minion ids and function names: not
     * empty, no white space, brackets closed.
     */
    static ValueCheck glob() {
        return value -> {
            if (value.isEmpty()) {
                return Optional.of("a glob cannot be empty");
            }
            boolean inBracket = false;
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if (Character.isWhitespace(c)) {
                    return Optional.of("a glob cannot contain white space");
                }
                if (c == '[' && !inBracket) {
                    inBracket = true;
                } else if (c == ']' && inBracket) {
                    inBracket = false;
                }
            }
            return inBracket ? Optional.of("a glob has an unclosed '['") : Optional.empty();
        };
    }
}

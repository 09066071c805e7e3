package io.brine.keytool;

import io.brine.protocol.MinionIds;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A shell-style glob on minion ids: {@code *}, {@code ?}, {@code [abc]}, {@code [a-z]}, {@code [!abc]}. Outside
 * the brackets' syntax a glob may only hold characters an id may hold, and a glob without wildcards must be a valid
 * id, so a typo like {@code Web1} is an error rather than a silent non-match.
 */
record IdGlob(String text, Pattern pattern) {

    /** Parses a comma-separated list of globs. */
    static List<IdGlob> parseList(String text) {
        List<IdGlob> globs = new ArrayList<>();
        for (String item : text.split(",", -1)) {
            globs.add(parse(item.strip()));
        }
        return List.copyOf(globs);
    }

    static IdGlob parse(String text) {
        if (text.isEmpty()) {
            throw UserError.usage("empty glob in the list; separate ids or globs with single commas");
        }
        if (!hasWildcard(text)) {
            MinionIds.problem(text).ifPresent(problem -> {
                throw UserError.usage(MinionIds.printable(text) + " is not a valid id: " + problem);
            });
            return new IdGlob(text, Pattern.compile(Pattern.quote(text)));
        }
        StringBuilder regex = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '*' -> regex.append("[^/]*");
                case '?' -> regex.append("[^/]");
                case '[' -> {
                    int close = text.indexOf(']', i + 2);
                    if (close < 0) {
                        throw UserError.usage(MinionIds.printable(text) + ": '[' without a matching ']'");
                    }
                    String body = text.substring(i + 1, close);
                    boolean negated = body.startsWith("!") || body.startsWith("^");
                    if (negated) {
                        body = body.substring(1);
                    }
                    for (char b : body.toCharArray()) {
                        requireIdCharacter(text, b);
                    }
                    // Inside a class, only '-' (a range) is special among the characters an id may hold.
                    regex.append('[').append(negated ? "^" : "").append(body).append(']');
                    i = close;
                }
                default -> {
                    requireIdCharacter(text, c);
                    regex.append(Pattern.quote(String.valueOf(c)));
                }
            }
        }
        try {
            return new IdGlob(text, Pattern.compile(regex.toString()));
        } catch (java.util.regex.PatternSyntaxException e) {
            throw UserError.usage(MinionIds.printable(text) + " is not a valid glob: " + e.getDescription());
        }
    }

    static boolean hasWildcard(String text) {
        return text.indexOf('*') >= 0 || text.indexOf('?') >= 0 || text.indexOf('[') >= 0;
    }

    private static void requireIdCharacter(String glob, char c) {
        boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
        if (!ok) {
            throw UserError.usage(MinionIds.printable(glob) + " is not a valid glob: "
                    + String.format("character U+%04X is neither a wildcard nor allowed in an id ([a-z0-9._-])",
                            (int) c));
        }
    }

    boolean matches(String id) {
        return pattern.matcher(id).matches();
    }

    static boolean anyMatches(List<IdGlob> globs, String id) {
        for (IdGlob glob : globs) {
            if (glob.matches(id)) {
                return true;
            }
        }
        return false;
    }
}

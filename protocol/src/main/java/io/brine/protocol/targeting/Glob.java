package io.brine.protocol.targeting;

import io.brine.protocol.MinionIds;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Shell-style globs as Salt uses them on minion ids: {@code *} any run of characters, {@code ?} one character,
 * {@code [abc]}, {@code [a-z]} and {@code [!abc]} one character of (or not of) a set. Everything else is literal
 * ({@code [^abc]} too, as in Python's fnmatch, and a {@code [} without its {@code ]}). {@link #compileIds} is the
 * strict form for a glob that can only ever match minion ids (an admin's argument to brine-key).
 */
public final class Glob {

    private final String glob;
    private final Pattern pattern;

    private Glob(String glob, Pattern pattern) {
        this.glob = glob;
        this.pattern = pattern;
    }

    public static Glob compile(String glob) {
        return compile(glob, false);
    }

    public static Glob compile(String glob, boolean ignoreCase) {
        if (glob.length() > TargetException.MAX_EXPRESSION) {
            throw new TargetException("glob is longer than " + TargetException.MAX_EXPRESSION + " characters");
        }
        StringBuilder regex = new StringBuilder(glob.length() + 8);
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            switch (c) {
                case '*' -> regex.append(".*");
                case '?' -> regex.append('.');
                case '[' -> {
                    int close = glob.indexOf(']', i + 2);
                    if (close < 0) {
                        regex.append("\\[");
                        break;
                    }
                    String set = glob.substring(i + 1, close);
                    boolean negate = set.startsWith("!");
                    if (negate) {
                        set = set.substring(1);
                    }
                    regex.append('[').append(negate ? "^" : "");
                    for (char s : set.toCharArray()) {
                        regex.append(s == '-' || Character.isLetterOrDigit(s) ? String.valueOf(s) : "\\" + s);
                    }
                    regex.append(']');
                    i = close;
                }
                default -> regex.append(Character.isLetterOrDigit(c) ? String.valueOf(c) : "\\" + c);
            }
        }
        try {
            return new Glob(
                    glob,
                    Pattern.compile(
                            regex.toString(), ignoreCase ? Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE : 0));
        } catch (PatternSyntaxException e) {
            throw new TargetException("bad glob " + glob + ": " + e.getDescription());
        }
    }

    /**
     * A glob over minion ids, checked strictly so that a typo is an error rather than a glob that matches nothing:
     * outside the wildcards it holds only characters an id may hold ({@code [a-z0-9._-]}), every {@code [} has its
     * {@code ]}, and without wildcards it must be a valid id.
     *
     * @throws TargetException naming the problem; the message quotes the glob only when it is printable ASCII
     */
    public static Glob compileIds(String glob) {
        if (glob.isEmpty()) {
            throw new TargetException("empty glob");
        }
        String quoted = MinionIds.printable(glob);
        if (isLiteral(glob)) {
            MinionIds.problem(glob).ifPresent(problem -> {
                throw new TargetException(quoted + " is not a valid id: " + problem);
            });
            return compile(glob);
        }
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            if (c == '*' || c == '?') {
                continue;
            }
            if (c == '[') {
                int close = glob.indexOf(']', i + 2);
                if (close < 0) {
                    throw new TargetException(quoted + ": '[' without a matching ']'");
                }
                String set = glob.substring(i + 1, close);
                if (set.startsWith("^")) {
                    throw new TargetException(
                            quoted + " is not a valid glob: a set is negated with [!...], not" + " [^...]");
                }
                for (char member : (set.startsWith("!") ? set.substring(1) : set).toCharArray()) {
                    requireIdCharacter(quoted, member);
                }
                i = close;
                continue;
            }
            requireIdCharacter(quoted, c);
        }
        return compile(glob);
    }

    private static void requireIdCharacter(String quoted, char c) {
        boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
        if (!ok) {
            throw new TargetException(quoted + " is not a valid glob: "
                    + String.format(
                            "character U+%04X is neither a wildcard nor allowed in an id ([a-z0-9._-])", (int) c));
        }
    }

    public boolean matches(String s) {
        return pattern.matcher(s).matches();
    }

    /** True when the glob has no wildcard: it names exactly one string. */
    public boolean isLiteral() {
        return isLiteral(glob);
    }

    /** True when {@code glob} has no wildcard. */
    public static boolean isLiteral(String glob) {
        return glob.chars().noneMatch(c -> c == '*' || c == '?' || c == '[');
    }

    @Override
    public String toString() {
        return glob;
    }
}

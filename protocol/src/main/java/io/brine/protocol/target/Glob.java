package io.brine.protocol.target;

import java.util.regex.Pattern;

/**
 * Shell-style globs as Salt uses them on minion ids: {@code *} any run of characters, {@code ?} one character,
 * {@code [abc]}, {@code [a-z]} and {@code [!abc]} one character of (or not of) a set. Everything else is literal.
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
            return new Glob(glob, Pattern.compile(regex.toString(), ignoreCase
                    ? Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE : 0));
        } catch (java.util.regex.PatternSyntaxException e) {
            throw new TargetException("bad glob " + glob + ": " + e.getDescription());
        }
    }

    public boolean matches(String s) {
        return pattern.matcher(s).matches();
    }

    /** True when the glob has no wildcard: it names exactly one string. */
    public boolean isLiteral() {
        return glob.chars().noneMatch(c -> c == '*' || c == '?' || c == '[');
    }

    @Override
    public String toString() {
        return glob;
    }
}

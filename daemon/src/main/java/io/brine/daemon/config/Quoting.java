package io.brine.daemon.config;

/** Puts configured values into messages without letting a hostile file put control characters on a terminal. */
final class Quoting {

    private static final int MAX_SHOWN = 60;

    private Quoting() {}

    /** {@code "value"}, escaped, and cut after 60 characters. */
    static String quote(String value) {
        return '"' + escape(value, MAX_SHOWN, true) + '"';
    }

    /** {@code text} with control characters escaped; for messages of other libraries. */
    static String printable(String text) {
        return escape(text, 400, false);
    }

    private static String escape(String value, int max, boolean escapeQuotes) {
        StringBuilder out = new StringBuilder(Math.min(value.length(), max) + 8);
        for (int i = 0; i < value.length(); i++) {
            if (i == max) {
                return out.append("...").toString();
            }
            char c = value.charAt(i);
            if (escapeQuotes && (c == '"' || c == '\\')) {
                out.append('\\').append(c);
            } else if (c == '\n' && !escapeQuotes) {
                out.append(' ');
            } else if (Character.isISOControl(c)
                    || Character.getType(c) == Character.FORMAT
                    || c == '\u2028'
                    || c == '\u2029') {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}

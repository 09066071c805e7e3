package io.brine.protocol;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The one validator for minion ids (DESIGN.md §4.2). Every place where an id enters brine (auth requests, CLI
 * arguments, file names in the key store, caches) goes through here.
 *
 * <p>An id is one or more DNS-style labels separated by dots; a label is 1-63 characters of {@code [a-z0-9_-]}
 * and does not start with {@code -} (so an id can never be mistaken for a command-line option); the whole id is
 * at most 253 bytes. Nothing is folded: {@code Web1} is refused, not lower-cased.
 */
public final class MinionIds {

    public static final int MAX_LENGTH = 253;
    public static final int MAX_LABEL_LENGTH = 63;

    private MinionIds() {}

    /** Why {@code id} is not a valid id, or empty when it is. */
    public static Optional<String> problem(String id) {
        if (id == null || id.isEmpty()) {
            return Optional.of("id is empty");
        }
        if (id.length() > MAX_LENGTH || id.getBytes(StandardCharsets.UTF_8).length > MAX_LENGTH) {
            return Optional.of("id is longer than " + MAX_LENGTH + " bytes");
        }
        int labelStart = 0;
        for (int i = 0; i <= id.length(); i++) {
            char c = i < id.length() ? id.charAt(i) : '.';
            if (c == '.') {
                int labelLength = i - labelStart;
                if (labelLength == 0) {
                    return Optional.of("id has an empty label");
                }
                if (labelLength > MAX_LABEL_LENGTH) {
                    return Optional.of("id has a label longer than " + MAX_LABEL_LENGTH + " characters");
                }
                if (id.charAt(labelStart) == '-') {
                    return Optional.of("id has a label starting with '-'");
                }
                labelStart = i + 1;
            } else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
                return Optional.of(
                        String.format("id has a character outside [a-z0-9._-] at position %d (U+%04X)", i, (int) c));
            }
        }
        return Optional.empty();
    }

    public static boolean isValid(String id) {
        return problem(id).isEmpty();
    }

    /**
     * Returns {@code id} if valid.
     *
     * @throws InvalidIdException naming the problem; the message quotes the id only when it is printable ASCII
     */
    public static String requireValid(String id) {
        Optional<String> problem = problem(id);
        if (problem.isPresent()) {
            throw new InvalidIdException(printable(id) + ": " + problem.get());
        }
        return id;
    }

    /**
     * Resolves the file for {@code id} inside {@code dir}, refusing any id that is invalid or whose path would not
     * stay directly inside {@code dir}.
     */
    public static Path resolveInside(Path dir, String id) {
        requireValid(id);
        Path base = dir.toAbsolutePath().normalize();
        Path file = base.resolve(id).normalize();
        if (!base.equals(file.getParent())) {
            throw new InvalidIdException(printable(id) + ": id does not name a file inside " + base);
        }
        return file;
    }

    /** A form of a possibly hostile string that is safe to put in a log line or an error message. */
    public static String printable(String s) {
        if (s == null) {
            return "<null>";
        }
        StringBuilder out = new StringBuilder(Math.min(s.length(), 80) + 2).append('\'');
        for (int i = 0; i < s.length() && i < 80; i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
                out.append(c);
            } else {
                out.append(String.format("\\u%04x", (int) c));
            }
        }
        if (s.length() > 80) {
            out.append("...");
        }
        return out.append('\'').toString();
    }
}

package io.brine.daemon.config;

import java.nio.file.Path;
import java.util.Objects;

/**
 * One thing wrong with a configuration file, located so that an admin can go straight to it.
 *
 * @param file the file as it was named to the reader
 * @param line 1-based line, or 0 when the problem has no single place (a missing file, a derived default)
 * @param column 1-based column, or 0 with {@code line}
 * @param key the key path, such as {@code publish_port} or {@code publisher_acl.ops.targets[1]}; empty for the file
 * @param message what is wrong, safe to print: values in it are quoted and escaped
 */
public record ConfigProblem(Path file, int line, int column, String key, String message) {

    public ConfigProblem {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(message, "message");
    }

    /** {@code master.yaml:12: publish_port: expected ...}, the form editors and grep understand. */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder().append(file);
        if (line > 0) {
            out.append(':').append(line);
        }
        out.append(": ");
        if (!key.isEmpty()) {
            out.append(key).append(": ");
        }
        return out.append(message).toString();
    }
}

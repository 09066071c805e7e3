package io.brine.master.api;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The web console's files, served at {@code /} next to the API: a fixed list read from the jar once, at start. A
 * request's path is only ever a key of that list, compared as sent (no decoding, no resolving, no class path lookup
 * from it), so nothing a request says reaches the file system. Each answer carries {@link #POLICY}.
 */
final class ConsoleFiles {

    /**
     * The console's Content-Security-Policy: its own scripts, styles and API only; no inline script or style, no
     * plugins, no frames around it, no forms posted elsewhere.
     */
    static final String POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self';"
            + " connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    /** The policy of every other answer (JSON, events, errors): nothing may run or be framed. */
    static final String NONE = "default-src 'none'; frame-ancestors 'none'";

    /** A file of the console: its bytes and its content type. */
    record File(byte[] body, String contentType) {}

    /** Request path to resource name, in the jar next to this class. */
    private static final Map<String, String> PATHS = Map.of(
            "/", "index.html",
            "/index.html", "index.html",
            "/console/console.css", "console.css",
            "/console/app.js", "app.js",
            "/console/api.js", "api.js",
            "/console/dom.js", "dom.js",
            "/console/pages.js", "pages.js");

    private final Map<String, File> files;

    private ConsoleFiles(Map<String, File> files) {
        this.files = files;
    }

    /** Reads the console's files from the jar. */
    static ConsoleFiles load() throws IOException {
        Map<String, File> files = new LinkedHashMap<>();
        for (Map.Entry<String, String> entry : PATHS.entrySet()) {
            String name = entry.getValue();
            try (InputStream in = ConsoleFiles.class.getResourceAsStream("console/" + name)) {
                if (in == null) {
                    throw new IOException("the console's " + name + " is missing from the jar");
                }
                files.put(entry.getKey(), new File(in.readAllBytes(), contentType(name)));
            }
        }
        return new ConsoleFiles(Map.copyOf(files));
    }

    /** The file at {@code rawPath} (the request's path, not decoded), or empty. */
    Optional<File> find(String rawPath) {
        return Optional.ofNullable(files.get(rawPath));
    }

    private static String contentType(String name) {
        if (name.endsWith(".html")) {
            return "text/html; charset=utf-8";
        }
        if (name.endsWith(".css")) {
            return "text/css; charset=utf-8";
        }
        if (name.endsWith(".js")) {
            return "text/javascript; charset=utf-8";
        }
        throw new IllegalArgumentException("no content type for " + name);
    }
}

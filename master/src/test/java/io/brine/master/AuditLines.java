package io.brine.master;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** An audit log's lines as a test compares them. */
public final class AuditLines {

    private static final ObjectMapper JSON = new ObjectMapper();

    private AuditLines() {}

    /** Each line of the audit log {@code file} as "event: reason". */
    public static List<String> of(Path file) throws IOException {
        return Files.readAllLines(file).stream()
                .map(line -> {
                    try {
                        JsonNode node = JSON.readTree(line);
                        return node.get("event").asText() + ": "
                                + node.get("reason").asText();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                })
                .toList();
    }
}

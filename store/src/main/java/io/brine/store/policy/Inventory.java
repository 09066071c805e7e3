package io.brine.store.policy;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.brine.protocol.MinionIds;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The machines an inventory expects: a YAML or JSON list (JSON when the file name ends in {@code .json}) of
 * records {@code {id, created_at, addresses}}. {@code created_at} is an ISO-8601 time with an offset
 * ({@code 2026-11-22T10:00:00Z}) or whole epoch seconds; {@code addresses} is a list of IP address literals. A
 * record that breaks a rule is a problem and is skipped; an id with two records is skipped altogether, since the
 * two could disagree.
 */
public final class Inventory {

    /** One expected machine. */
    public record Record(String id, Instant createdAt, Set<InetAddress> addresses) {}

    public static final Inventory EMPTY = new Inventory(Map.of(), List.of());

    private static final ObjectMapper JSON = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    private static final ObjectMapper YAML = YAMLMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .build();
    private static final Set<String> KEYS = Set.of("id", "created_at", "addresses");

    private final Map<String, Record> records;
    private final List<String> problems;

    private Inventory(Map<String, Record> records, List<String> problems) {
        this.records = records;
        this.problems = List.copyOf(problems);
    }

    public Optional<Record> record(String id) {
        return Optional.ofNullable(records.get(id));
    }

    public int size() {
        return records.size();
    }

    /** What was skipped, one line each, naming the entry. */
    public List<String> problems() {
        return problems;
    }

    /** Parses a whole file; never throws. */
    public static Inventory parse(Path file, byte[] content) {
        boolean json = file.getFileName().toString().endsWith(".json");
        JsonNode root;
        try {
            root = (json ? JSON : YAML).readTree(content);
        } catch (JacksonException e) {
            String where =
                    e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr();
            return new Inventory(
                    Map.of(), List.of("not valid " + (json ? "JSON" : "YAML") + where + ": nothing in it applies"));
        } catch (IOException e) {
            return new Inventory(Map.of(), List.of("unreadable: " + e.getMessage()));
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            return EMPTY;
        }
        if (!root.isArray()) {
            return new Inventory(Map.of(), List.of("expected a list of records {id, created_at, addresses}"));
        }
        List<String> problems = new ArrayList<>();
        Map<String, Record> records = new HashMap<>();
        Set<String> duplicates = new HashSet<>();
        for (int i = 0; i < root.size(); i++) {
            String where = "entry " + (i + 1);
            try {
                Record record = record(root.get(i));
                if (records.putIfAbsent(record.id(), record) != null) {
                    duplicates.add(record.id());
                }
            } catch (IllegalArgumentException e) {
                problems.add(where + ": " + e.getMessage() + "; skipped");
            }
        }
        for (String id : duplicates) {
            records.remove(id);
            problems.add(id + " has more than one record; all of them are skipped");
        }
        return new Inventory(Map.copyOf(records), problems);
    }

    private static Record record(JsonNode node) {
        if (!node.isObject()) {
            throw new IllegalArgumentException("expected a mapping {id, created_at, addresses}");
        }
        node.fieldNames().forEachRemaining(key -> {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException(
                        "unknown key " + MinionIds.printable(key) + " (expected id, created_at, addresses)");
            }
        });
        JsonNode id = node.get("id");
        if (id == null || !id.isTextual()) {
            throw new IllegalArgumentException("id is required, a string");
        }
        MinionIds.problem(id.textValue()).ifPresent(problem -> {
            throw new IllegalArgumentException(MinionIds.printable(id.textValue()) + ": " + problem);
        });
        Instant createdAt = createdAt(node.get("created_at"));
        JsonNode list = node.get("addresses");
        if (list == null || !list.isArray() || list.isEmpty()) {
            throw new IllegalArgumentException("addresses is required, a non-empty list of IP addresses");
        }
        Set<InetAddress> addresses = new LinkedHashSet<>();
        for (JsonNode item : list) {
            Optional<InetAddress> address = item.isTextual() ? IpAddresses.parse(item.textValue()) : Optional.empty();
            if (address.isEmpty()) {
                throw new IllegalArgumentException(
                        "addresses: " + MinionIds.printable(item.asText()) + " is not an IP address");
            }
            addresses.add(address.get());
        }
        return new Record(id.textValue(), createdAt, Set.copyOf(addresses));
    }

    private static Instant createdAt(JsonNode node) {
        if (node == null) {
            throw new IllegalArgumentException("created_at is required");
        }
        if (node.isIntegralNumber() && node.canConvertToLong() && node.longValue() >= 0) {
            return Instant.ofEpochSecond(node.longValue());
        }
        if (node.isTextual()) {
            try {
                return OffsetDateTime.parse(node.textValue()).toInstant();
            } catch (DateTimeParseException e) {
                // reported below
            }
        }
        throw new IllegalArgumentException(
                "created_at must be an ISO-8601 time with an offset" + " (2026-11-22T10:00:00Z) or epoch seconds");
    }
}

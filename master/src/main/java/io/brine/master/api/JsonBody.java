package io.brine.master.api;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A request's JSON body, read strictly: one object, no duplicate or unknown fields, each field of the type the route
 * documents. Every problem is an {@link ApiError} (400) naming the field and what was expected, never Jackson's
 * message (which can name Java classes).
 */
final class JsonBody {

    /** Nesting at most, in a job's arguments too. */
    static final int MAX_DEPTH = 32;

    static final ObjectMapper JSON = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    static {
        JSON.getFactory()
                .setStreamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(MAX_DEPTH)
                        .build());
    }

    private final ObjectNode object;

    private JsonBody(ObjectNode object) {
        this.object = object;
    }

    /** Parses {@code bytes} as one JSON object whose fields are all in {@code allowed}. */
    static JsonBody parse(byte[] bytes, Set<String> allowed) throws ApiError {
        if (bytes.length == 0) {
            throw ApiError.badRequest("a JSON object is required as the body");
        }
        JsonNode node;
        try (JsonParser parser = JSON.getFactory().createParser(bytes)) {
            node = JSON.readTree(parser);
            if (parser.nextToken() != null) {
                throw ApiError.badRequest("malformed JSON: more than one value in the body");
            }
        } catch (JacksonException e) {
            String what = e.getOriginalMessage();
            if (what != null && what.contains("Duplicate field")) {
                throw ApiError.badRequest("malformed JSON: a field appears twice");
            }
            if (what != null && what.contains("nesting depth")) {
                throw ApiError.badRequest("malformed JSON: nested deeper than " + MAX_DEPTH);
            }
            throw ApiError.badRequest(
                    "malformed JSON at line " + e.getLocation().getLineNr() + ", column "
                            + e.getLocation().getColumnNr());
        } catch (IOException e) {
            throw ApiError.badRequest("malformed JSON");
        }
        if (!(node instanceof ObjectNode object)) {
            throw ApiError.badRequest("the body must be a JSON object");
        }
        for (Iterator<String> names = object.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!allowed.contains(name)) {
                throw ApiError.badRequest("unknown field " + quoted(name) + "; expected "
                        + String.join(", ", allowed.stream().sorted().toList()));
            }
        }
        return new JsonBody(object);
    }

    private static String quoted(String name) {
        return "\"" + io.brine.protocol.MinionIds.printable(name) + "\"";
    }

    Optional<String> string(String field) throws ApiError {
        JsonNode node = object.get(field);
        if (node == null || node.isNull()) {
            return Optional.empty();
        }
        if (!node.isTextual()) {
            throw ApiError.badRequest(field + ": expected a string, got " + type(node));
        }
        return Optional.of(node.textValue());
    }

    String requiredString(String field) throws ApiError {
        return string(field).orElseThrow(() -> ApiError.badRequest(field + ": required"));
    }

    Optional<Boolean> bool(String field) throws ApiError {
        JsonNode node = object.get(field);
        if (node == null || node.isNull()) {
            return Optional.empty();
        }
        if (!node.isBoolean()) {
            throw ApiError.badRequest(field + ": expected true or false, got " + type(node));
        }
        return Optional.of(node.booleanValue());
    }

    Optional<Integer> integer(String field, int min, int max) throws ApiError {
        JsonNode node = object.get(field);
        if (node == null || node.isNull()) {
            return Optional.empty();
        }
        if (!node.isIntegralNumber() || !node.canConvertToInt() || node.intValue() < min || node.intValue() > max) {
            throw ApiError.badRequest(field + ": expected a whole number from " + min + " to " + max + ", got "
                    + (node.isNumber() ? node.asText() : type(node)));
        }
        return Optional.of(node.intValue());
    }

    List<Object> list(String field) throws ApiError {
        JsonNode node = object.get(field);
        if (node == null || node.isNull()) {
            return List.of();
        }
        if (!node.isArray()) {
            throw ApiError.badRequest(field + ": expected a list, got " + type(node));
        }
        List<Object> values = new ArrayList<>();
        node.forEach(element -> values.add(value(element)));
        return values;
    }

    Map<String, Object> map(String field) throws ApiError {
        JsonNode node = object.get(field);
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject()) {
            throw ApiError.badRequest(field + ": expected an object, got " + type(node));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) value(node);
        return map;
    }

    /** A JSON value as the job's arguments carry it: strings, longs, doubles, booleans, null, lists and maps. */
    private static Object value(JsonNode node) {
        if (node.isObject()) {
            Map<String, Object> map = new LinkedHashMap<>();
            node.fields().forEachRemaining(entry -> map.put(entry.getKey(), value(entry.getValue())));
            return map;
        }
        if (node.isArray()) {
            List<Object> list = new ArrayList<>();
            node.forEach(element -> list.add(value(element)));
            return list;
        }
        if (node.isIntegralNumber()) {
            return node.canConvertToLong() ? (Object) node.longValue() : node.asText();
        }
        if (node.isNumber()) {
            return node.doubleValue();
        }
        if (node.isBoolean()) {
            return node.booleanValue();
        }
        if (node.isNull()) {
            return null;
        }
        return node.asText();
    }

    private static String type(JsonNode node) {
        return switch (node.getNodeType()) {
            case ARRAY -> "a list";
            case OBJECT, POJO -> "an object";
            case STRING -> "a string";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            case NULL, MISSING -> "null";
            case BINARY -> "binary";
        };
    }
}

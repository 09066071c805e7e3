package io.brine.protocol.grant;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Rsa;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The provisioning grant format (PROTOCOL.md, "Provisioning grants"): a UTF-8 JSON document
 * {@code {"brine_grant":1,"signer":FP,"payload":B64,"signature":B64}} whose payload is the JSON of a
 * {@link ProvisioningGrant} and whose signature is RSA-PSS-SHA256 (suite 1) by the provisioner's key over
 * {@code "brine-grant-v1" || payload}. The signature covers the payload's exact bytes, so nobody ever needs a
 * canonical JSON encoding. Parsing is strict: exact keys, exact types, no duplicates, no trailing data.
 */
public final class Grants {

    /** The most bytes a grant may have: the limit of the auth request's grant field. */
    public static final int MAX_BYTES = 16 * 1024;

    public static final int VERSION = 1;

    private static final byte[] CONTEXT = "brine-grant-v1".getBytes(StandardCharsets.US_ASCII);
    private static final Set<String> OUTER_KEYS = Set.of("brine_grant", "signer", "payload", "signature");
    private static final Set<String> PAYLOAD_KEYS =
            Set.of("version", "id", "fingerprint", "not_before", "not_after", "class", "nonce");
    private static final ObjectMapper JSON = new ObjectMapper(JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxNestingDepth(4)
                            .maxStringLength(MAX_BYTES)
                            .build())
                    .build())
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final SecureRandom RANDOM = new SecureRandom();

    private Grants() {}

    /** A parsed grant whose signature is not checked yet: {@link #verify(PublicKey)} does that. */
    public record SignedGrant(ProvisioningGrant grant, String signer, byte[] payload, byte[] signature) {

        /** True only when {@code provisionerKey} signed exactly this payload. */
        public boolean verify(PublicKey provisionerKey) {
            return Rsa.verify(provisionerKey, signatureInput(payload), signature);
        }

        /** SHA-256 of the payload as hex: what a master records to make the grant single use. */
        public String digest() {
            try {
                return HexFormat.of()
                        .formatHex(MessageDigest.getInstance("SHA-256").digest(payload));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("the JDK lacks SHA-256", e);
            }
        }

        @Override
        public String toString() {
            return "SignedGrant[id=" + grant.id() + ", signer=" + signer + ", notAfter=" + grant.notAfter() + "]";
        }
    }

    /** A fresh nonce for a new grant. */
    public static String newNonce() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** Signs {@code grant} with the provisioner's key pair and encodes it: the bytes of a grant file. */
    public static byte[] sign(ProvisioningGrant grant, KeyPair provisioner) {
        ObjectNode payload = JSON.createObjectNode();
        payload.put("version", VERSION);
        payload.put("id", grant.id());
        payload.put("fingerprint", grant.fingerprint());
        payload.put("not_before", grant.notBefore().getEpochSecond());
        payload.put("not_after", grant.notAfter().getEpochSecond());
        ObjectNode classes = payload.putObject("class");
        grant.classification().forEach(classes::put);
        payload.put("nonce", grant.nonce());
        byte[] payloadBytes = payload.toString().getBytes(StandardCharsets.UTF_8);
        byte[] signature = Rsa.sign(provisioner.getPrivate(), signatureInput(payloadBytes));
        ObjectNode outer = JSON.createObjectNode();
        outer.put("brine_grant", VERSION);
        outer.put("signer", Fingerprints.of(provisioner.getPublic()));
        outer.put("payload", Base64.getEncoder().encodeToString(payloadBytes));
        outer.put("signature", Base64.getEncoder().encodeToString(signature));
        byte[] bytes = (outer + "\n").getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_BYTES) {
            throw new IllegalArgumentException("the grant would be " + bytes.length + " bytes; at most " + MAX_BYTES
                    + " fit in an auth request (fewer or shorter classes)");
        }
        return bytes;
    }

    /** Parses a grant file's bytes; checks structure and field rules, not the signature. */
    public static SignedGrant parse(byte[] bytes) throws GrantException {
        if (bytes == null || bytes.length == 0) {
            throw new GrantException("the grant is empty");
        }
        if (bytes.length > MAX_BYTES) {
            throw new GrantException("the grant is larger than " + MAX_BYTES + " bytes");
        }
        JsonNode outer = readObject(bytes, "grant");
        requireKeys(outer, OUTER_KEYS, OUTER_KEYS, "grant");
        if (!outer.get("brine_grant").isInt() || outer.get("brine_grant").intValue() != VERSION) {
            throw new GrantException("brine_grant: only version " + VERSION + " is known");
        }
        String signer = Fingerprints.normalize(text(outer, "signer"));
        if (signer == null) {
            throw new GrantException("signer: not a key fingerprint");
        }
        byte[] payload = base64(outer, "payload");
        byte[] signature = base64(outer, "signature");
        if (signature.length == 0 || signature.length > 1024) {
            throw new GrantException("signature: expected 1 to 1024 bytes");
        }
        JsonNode fields = readObject(payload, "payload");
        requireKeys(
                fields,
                PAYLOAD_KEYS,
                Set.of("version", "id", "fingerprint", "not_before", "not_after", "nonce"),
                "payload");
        if (!fields.get("version").isInt() || fields.get("version").intValue() != VERSION) {
            throw new GrantException("payload version: only version " + VERSION + " is known");
        }
        Map<String, String> classes = new LinkedHashMap<>();
        JsonNode classNode = fields.get("class");
        if (classNode != null) {
            if (!classNode.isObject()) {
                throw new GrantException("class: expected an object of strings");
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = classNode.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> entry = it.next();
                if (!entry.getValue().isTextual()) {
                    throw new GrantException("class: expected an object of strings");
                }
                classes.put(entry.getKey(), entry.getValue().textValue());
            }
        }
        try {
            ProvisioningGrant grant = new ProvisioningGrant(
                    text(fields, "id"),
                    text(fields, "fingerprint"),
                    Instant.ofEpochSecond(seconds(fields, "not_before")),
                    Instant.ofEpochSecond(seconds(fields, "not_after")),
                    classes,
                    text(fields, "nonce"));
            return new SignedGrant(grant, signer, payload, signature);
        } catch (IllegalArgumentException e) {
            throw new GrantException("payload: " + e.getMessage());
        }
    }

    private static byte[] signatureInput(byte[] payload) {
        byte[] input = Arrays.copyOf(CONTEXT, CONTEXT.length + payload.length);
        System.arraycopy(payload, 0, input, CONTEXT.length, payload.length);
        return input;
    }

    private static JsonNode readObject(byte[] bytes, String what) throws GrantException {
        try {
            JsonNode node = JSON.readTree(bytes);
            if (node == null || !node.isObject()) {
                throw new GrantException(what + ": expected a JSON object");
            }
            return node;
        } catch (JacksonException e) {
            // Jackson's message may quote the input: name only where it broke.
            throw new GrantException(what + ": not valid JSON"
                    + (e.getLocation() == null
                            ? ""
                            : " (at byte " + e.getLocation().getByteOffset() + ")"));
        } catch (IOException e) {
            throw new GrantException(what + ": unreadable");
        }
    }

    private static void requireKeys(JsonNode node, Set<String> allowed, Set<String> required, String what)
            throws GrantException {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!allowed.contains(key)) {
                throw new GrantException(what + ": unknown field");
            }
        }
        for (String key : required) {
            if (!node.has(key)) {
                throw new GrantException(what + ": " + key + " is missing");
            }
        }
    }

    private static String text(JsonNode node, String key) throws GrantException {
        JsonNode value = node.get(key);
        if (!value.isTextual()) {
            throw new GrantException(key + ": expected a string");
        }
        return value.textValue();
    }

    private static long seconds(JsonNode node, String key) throws GrantException {
        JsonNode value = node.get(key);
        if (!value.isIntegralNumber()
                || !value.canConvertToLong()
                || value.longValue() < 0
                || value.longValue() > 253402300799L) {
            throw new GrantException(key + ": expected whole seconds since the epoch");
        }
        return value.longValue();
    }

    /** Only the canonical encoding (standard alphabet, padded, no line breaks): one grant has one spelling. */
    private static byte[] base64(JsonNode node, String key) throws GrantException {
        String text = text(node, key);
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw new GrantException(key + ": not base64");
        }
        if (!Base64.getEncoder().encodeToString(bytes).equals(text)) {
            throw new GrantException(key + ": not canonical base64 (standard alphabet with its '=' padding)");
        }
        return bytes;
    }
}

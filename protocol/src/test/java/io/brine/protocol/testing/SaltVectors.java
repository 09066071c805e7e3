package io.brine.protocol.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.salt.SaltDialect;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltMsgpack;
import io.brine.protocol.salt.SaltTcpFrame;
import io.brine.protocol.salt.SaltValue;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The wire vectors recorded from real Salt 3008.2 and 3006.26 (test resources {@code salt-vectors/}, described by
 * their {@code README.md}), for byte-level tests here and in the modules that use protocol's test jar.
 */
public final class SaltVectors {

    public static final List<String> DIRS = List.of("3008.2-zeromq", "3006.26-zeromq", "3008.2-tcp");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, KeyPair> KEYS = new ConcurrentHashMap<>();

    private SaltVectors() {}

    /** Every vector file name (without {@code .json}) of {@code dir}, as listed in the set's verification file. */
    public static List<String> names(String dir) {
        List<String> names = new ArrayList<>();
        for (var e : json("_verification.json").properties()) {
            if (e.getKey().startsWith(dir + "/")) {
                names.add(e.getKey().substring(dir.length() + 1));
            }
        }
        if (names.isEmpty()) {
            throw new IllegalStateException("no vectors listed for " + dir);
        }
        return names;
    }

    /** {@code dir/name}, for every vector of every dir. */
    public static List<String> all() {
        List<String> all = new ArrayList<>();
        for (String dir : DIRS) {
            for (String name : names(dir)) {
                all.add(dir + "/" + name);
            }
        }
        return all;
    }

    /** All vector paths whose name starts with {@code prefix}. */
    public static List<String> named(String prefix) {
        return all().stream()
                .filter(p -> p.substring(p.indexOf('/') + 1).startsWith(prefix))
                .toList();
    }

    public static JsonNode vector(String path) {
        return json(path + ".json");
    }

    public static JsonNode json(String file) {
        try (InputStream in = open(file)) {
            return JSON.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static String text(String file) {
        try (InputStream in = open(file)) {
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static KeyPair pair(String name) {
        return KEYS.computeIfAbsent(name, n -> {
            try {
                return Pem.readPrivateKey(text("keys/" + n + ".pem"));
            } catch (KeyFormatException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    public static RSAPublicKey pub(String name) {
        return (RSAPublicKey) pair(name).getPublic();
    }

    public static byte[] b64(JsonNode node) {
        if (node == null || node.isMissingNode() || node.isNull()) {
            throw new IllegalArgumentException("missing base64 field");
        }
        return Base64.getDecoder().decode(node.asText());
    }

    /** A {@code view} field's byte value: either a JSON string (UTF-8 text) or {@code {"$b64": ...}}. */
    public static byte[] viewBytes(JsonNode node) {
        if (node.isTextual()) {
            return node.asText().getBytes(StandardCharsets.UTF_8);
        }
        return b64(node.get("$b64"));
    }

    /** The payload of one side of an exchange: the ZeroMQ payload frame, or the body of the TCP frame. */
    public static SaltValue payload(JsonNode side) {
        try {
            if (side.has("tcp_stream_b64")) {
                return SaltTcpFrame.decode(b64(side.get("tcp_stream_b64")), SaltLimits.SESSION)
                        .body();
            }
            return SaltMsgpack.read(b64(side.get("payload_b64")), SaltLimits.SESSION);
        } catch (MalformedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The exact bytes of one side: the ZeroMQ payload frame or the TCP stream bytes. */
    public static byte[] wire(JsonNode side) {
        return b64(side.has("tcp_stream_b64") ? side.get("tcp_stream_b64") : side.get("payload_b64"));
    }

    /** What {@code payload} re-encodes to on the vector's transport ({@code side} gives the TCP head). */
    public static byte[] encodeLike(JsonNode side, SaltValue payload) {
        if (side.has("tcp_stream_b64")) {
            try {
                SaltTcpFrame request = SaltTcpFrame.decode(b64(side.get("tcp_stream_b64")), SaltLimits.SESSION);
                return SaltTcpFrame.encode(request.reply(payload));
            } catch (MalformedException e) {
                throw new IllegalStateException(e);
            }
        }
        return SaltMsgpack.write(payload, SaltDialect.PAYLOAD);
    }

    public static boolean isTcp(String path) {
        return path.startsWith("3008.2-tcp/");
    }

    private static InputStream open(String file) {
        InputStream in = SaltVectors.class.getResourceAsStream("/salt-vectors/" + file);
        if (in == null) {
            throw new IllegalStateException("missing test resource salt-vectors/" + file);
        }
        return in;
    }
}

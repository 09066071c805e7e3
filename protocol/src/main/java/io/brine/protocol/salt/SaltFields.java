package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;
import java.util.Optional;
import java.util.regex.Pattern;

/** Typed, bounded access to the fields of a decoded Salt map; every problem names the field. */
final class SaltFields {

    /** {@code uuid.uuid4().hex}, what Salt uses for every nonce. */
    private static final Pattern NONCE = Pattern.compile("[0-9a-f]{32}");

    private SaltFields() {}

    static SaltValue.Map asMap(SaltValue value, String what) throws MalformedException {
        if (value instanceof SaltValue.Map m) {
            return m;
        }
        throw new MalformedException(what + ": expected a map, got " + value.kind());
    }

    static SaltValue required(SaltValue.Map map, String field) throws MalformedException {
        return map.get(field).orElseThrow(() -> new MalformedException(field + ": missing"));
    }

    static SaltValue.Map map(SaltValue.Map map, String field) throws MalformedException {
        return asMap(required(map, field), field);
    }

    static Optional<SaltValue.Map> optionalMap(SaltValue.Map map, String field) throws MalformedException {
        Optional<SaltValue> v = map.get(field);
        if (v.isEmpty() || v.get() instanceof SaltValue.Nil) {
            return Optional.empty();
        }
        return Optional.of(asMap(v.get(), field));
    }

    /** A byte string (any kind) holding UTF-8 text without NUL, of at most {@code maxBytes}. */
    static String text(SaltValue.Map map, String field, int maxBytes) throws MalformedException {
        return text(required(map, field), field, maxBytes);
    }

    static String text(SaltValue value, String field, int maxBytes) throws MalformedException {
        byte[] bytes = value.bytes()
                .orElseThrow(() -> new MalformedException(field + ": expected a string, got " + value.kind()));
        if (bytes.length > maxBytes) {
            throw new MalformedException(field + ": longer than " + maxBytes + " bytes");
        }
        String text = value.text().orElseThrow(() -> new MalformedException(field + ": not valid UTF-8"));
        if (text.indexOf('\0') >= 0) {
            throw new MalformedException(field + ": contains a NUL character");
        }
        return text;
    }

    static Optional<String> optionalText(SaltValue.Map map, String field, int maxBytes) throws MalformedException {
        Optional<SaltValue> v = map.get(field);
        if (v.isEmpty() || v.get() instanceof SaltValue.Nil) {
            return Optional.empty();
        }
        return Optional.of(text(v.get(), field, maxBytes));
    }

    static byte[] bytes(SaltValue.Map map, String field, int maxBytes) throws MalformedException {
        SaltValue value = required(map, field);
        byte[] bytes = value.bytes()
                .orElseThrow(() -> new MalformedException(field + ": expected bytes, got " + value.kind()));
        if (bytes.length > maxBytes) {
            throw new MalformedException(field + ": longer than " + maxBytes + " bytes");
        }
        return bytes;
    }

    static Optional<byte[]> optionalBytes(SaltValue.Map map, String field, int maxBytes) throws MalformedException {
        Optional<SaltValue> v = map.get(field);
        if (v.isEmpty() || v.get() instanceof SaltValue.Nil) {
            return Optional.empty();
        }
        return Optional.of(bytes(map, field, maxBytes));
    }

    static long integer(SaltValue.Map map, String field) throws MalformedException {
        SaltValue value = required(map, field);
        if (value instanceof SaltValue.Int i && !i.unsigned64()) {
            return i.value();
        }
        throw new MalformedException(field + ": expected an integer, got " + value.kind());
    }

    static boolean bool(SaltValue.Map map, String field) throws MalformedException {
        SaltValue value = required(map, field);
        if (value instanceof SaltValue.Bool b) {
            return b.value();
        }
        throw new MalformedException(field + ": expected a bool, got " + value.kind());
    }

    static String nonce(SaltValue.Map map, String field) throws MalformedException {
        String nonce = text(map, field, 32);
        if (!NONCE.matcher(nonce).matches()) {
            throw new MalformedException(field + ": not 32 lower-case hex digits");
        }
        return nonce;
    }
}

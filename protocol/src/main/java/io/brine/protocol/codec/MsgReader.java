package io.brine.protocol.codec;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessageInsufficientBufferException;
import org.msgpack.core.MessageIntegerOverflowException;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * A strict reader over msgpack-core: every read names the field it expects and the type it must have (no implicit
 * str/bin conversion), and every length a peer declares is checked against the bytes that remain and the field's cap
 * before anything is allocated. Problems become {@link MalformedException}.
 */
final class MsgReader {

    /** A layout read from a reader; it may throw what msgpack-core throws, {@link #parse} turns that into a reason. */
    interface Layout<T> {
        T read(MsgReader in) throws IOException, MalformedException;
    }

    private static final MessagePack.UnpackerConfig CONFIG = new MessagePack.UnpackerConfig()
            .withAllowReadingBinaryAsString(false)
            .withAllowReadingStringAsBinary(false);

    private final MessageUnpacker in;
    private final int length;
    private int elementBudget = FieldLimits.MAX_VALUE_ELEMENTS;

    private MsgReader(byte[] bytes, int offset, int length) {
        this.in = CONFIG.newUnpacker(bytes, offset, length);
        this.length = length;
    }

    /** Reads {@code bytes[offset..offset+length)} with {@code layout}, which must consume exactly all of it. */
    static <T> T parse(byte[] bytes, int offset, int length, String what, Layout<T> layout) throws MalformedException {
        MsgReader reader = new MsgReader(bytes, offset, length);
        try {
            T value = layout.read(reader);
            long trailing = reader.remaining();
            if (trailing != 0) {
                throw new MalformedException(what + ": " + trailing + " trailing bytes");
            }
            return value;
        } catch (MessageInsufficientBufferException e) {
            throw new MalformedException(what + ": truncated");
        } catch (IOException | MessagePackException e) {
            throw new MalformedException(
                    what + ": invalid msgpack (" + e.getClass().getSimpleName() + ")");
        }
    }

    long remaining() {
        return length - in.getTotalReadBytes();
    }

    ValueType peek(String field) throws IOException, MalformedException {
        MessageFormat format = in.getNextFormat();
        if (format == MessageFormat.NEVER_USED) {
            throw new MalformedException(field + ": reserved msgpack byte 0xc1");
        }
        return format.getValueType();
    }

    private void expect(String field, ValueType expected) throws IOException, MalformedException {
        ValueType actual = peek(field);
        if (actual != expected) {
            throw new MalformedException(field + ": expected " + name(expected) + ", got " + name(actual));
        }
    }

    /** An array header of exactly {@code count} items. */
    void array(String field, int count) throws IOException, MalformedException {
        expect(field, ValueType.ARRAY);
        int actual = in.unpackArrayHeader();
        if (actual != count) {
            throw new MalformedException(field + ": expected " + count + " items, got " + actual);
        }
    }

    /** An array header of {@code min} to {@code max} items (a message whose later fields are optional). */
    int arrayBetween(String field, int min, int max) throws IOException, MalformedException {
        expect(field, ValueType.ARRAY);
        int actual = in.unpackArrayHeader();
        if (actual < min || actual > max) {
            throw new MalformedException(field + ": expected " + min + " to " + max + " items, got " + actual);
        }
        return actual;
    }

    /** An array header of at most {@code max} items; each item takes at least one byte. */
    int arrayUpTo(String field, int max) throws IOException, MalformedException {
        expect(field, ValueType.ARRAY);
        int count = in.unpackArrayHeader();
        if (count > max) {
            throw new MalformedException(field + ": more than " + max + " items");
        }
        claimElements(field, count, 1);
        return count;
    }

    /** A map header; each entry takes at least two bytes. */
    int map(String field) throws IOException, MalformedException {
        expect(field, ValueType.MAP);
        int count = in.unpackMapHeader();
        claimElements(field, count, 2);
        return count;
    }

    /** Charges {@code count} elements to this input's budget, after checking they can fit in what remains. */
    void claimElements(String field, int count, int minBytesEach) throws MalformedException {
        if ((long) count * minBytesEach > remaining()) {
            throw new MalformedException(field + ": declares " + count + " items, more than the input holds");
        }
        if (count > elementBudget) {
            throw new MalformedException(field + ": more than " + FieldLimits.MAX_VALUE_ELEMENTS + " elements in all");
        }
        elementBudget -= count;
    }

    boolean isNil(String field) throws IOException, MalformedException {
        return peek(field) == ValueType.NIL;
    }

    void nil(String field) throws IOException, MalformedException {
        expect(field, ValueType.NIL);
        in.unpackNil();
    }

    boolean bool(String field) throws IOException, MalformedException {
        expect(field, ValueType.BOOLEAN);
        return in.unpackBoolean();
    }

    /** Any msgpack integer that fits a signed 64-bit long. */
    long int64(String field) throws IOException, MalformedException {
        expect(field, ValueType.INTEGER);
        try {
            return in.unpackLong();
        } catch (MessageIntegerOverflowException e) {
            throw new MalformedException(field + ": integer out of range");
        }
    }

    long range(String field, long min, long max) throws IOException, MalformedException {
        long value = int64(field);
        if (value < min || value > max) {
            throw new MalformedException(field + ": " + value + " is outside " + min + ".." + max);
        }
        return value;
    }

    long nonNegative(String field) throws IOException, MalformedException {
        return range(field, 0, Long.MAX_VALUE);
    }

    int int32(String field, int min, int max) throws IOException, MalformedException {
        return (int) range(field, min, max);
    }

    double float64(String field) throws IOException, MalformedException {
        expect(field, ValueType.FLOAT);
        return in.unpackDouble();
    }

    byte[] bin(String field, int min, int max) throws IOException, MalformedException {
        expect(field, ValueType.BINARY);
        int size = in.unpackBinaryHeader();
        if (size < min || size > max) {
            throw new MalformedException(
                    field + ": " + size + " bytes, expected " + (min == max ? String.valueOf(min) : min + ".." + max));
        }
        return payload(field, size);
    }

    byte[] binOrNil(String field, int min, int max) throws IOException, MalformedException {
        if (isNil(field)) {
            in.unpackNil();
            return null;
        }
        return bin(field, min, max);
    }

    /** A string of at most {@code maxBytes} bytes of strict UTF-8 (no overlong forms, no surrogates). */
    String str(String field, int maxBytes) throws IOException, MalformedException {
        expect(field, ValueType.STRING);
        int size = in.unpackRawStringHeader();
        if (size > maxBytes) {
            throw new MalformedException(field + ": longer than " + maxBytes + " bytes");
        }
        byte[] utf8 = payload(field, size);
        try {
            // A fresh decoder reports malformed input; String's constructor would replace it silently.
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(ByteBuffer.wrap(utf8))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new MalformedException(field + ": not valid UTF-8");
        }
    }

    String strOrNil(String field, int maxBytes) throws IOException, MalformedException {
        if (isNil(field)) {
            in.unpackNil();
            return null;
        }
        return str(field, maxBytes);
    }

    /** A string meant for people and logs: {@link #str} without control characters, non-empty unless allowed. */
    String text(String field, int maxBytes, boolean allowEmpty) throws IOException, MalformedException {
        String s = str(field, maxBytes);
        if (s.isEmpty() && !allowEmpty) {
            throw new MalformedException(field + ": empty");
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || (c >= 0x7f && c < 0xa0)) {
                throw new MalformedException(field + ": control character at position " + i);
            }
        }
        return s;
    }

    private byte[] payload(String field, int size) throws IOException, MalformedException {
        if (size > remaining()) {
            throw new MalformedException(field + ": declares " + size + " bytes, more than the input holds");
        }
        return in.readPayload(size);
    }

    private static String name(ValueType type) {
        return switch (type) {
            case NIL -> "nil";
            case BOOLEAN -> "bool";
            case INTEGER -> "int";
            case FLOAT -> "float";
            case STRING -> "str";
            case BINARY -> "bin";
            case ARRAY -> "array";
            case MAP -> "map";
            case EXTENSION -> "ext";
        };
    }
}

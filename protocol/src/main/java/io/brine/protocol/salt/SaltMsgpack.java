package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessageInsufficientBufferException;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageSizeException;
import org.msgpack.core.MessageUnpacker;

/**
 * Reads and writes Salt's msgpack (SALT.md, "msgpack"). The reader accepts what Salt 3006-3008 send in either
 * dialect and refuses, with a {@link MalformedException} naming the bound, anything over the {@link SaltLimits}; it
 * never allocates more than the input can hold and never recurses deeper than {@link SaltLimits#maxDepth()}. The
 * writer produces Salt's bytes exactly for the {@link SaltDialect} asked.
 */
public final class SaltMsgpack {

    private static final MessagePack.PackerConfig PAYLOAD = new MessagePack.PackerConfig().withStr8FormatSupport(false);
    private static final MessagePack.PackerConfig FRAME = new MessagePack.PackerConfig();
    private static final int MAX_PRESIZE = 1024;

    private SaltMsgpack() {}

    /** Decodes {@code bytes}, which must hold exactly one value. */
    public static SaltValue read(byte[] bytes, SaltLimits limits) throws MalformedException {
        return read(bytes, 0, bytes.length, limits);
    }

    public static SaltValue read(byte[] bytes, int offset, int length, SaltLimits limits) throws MalformedException {
        if (length > limits.maxBytes()) {
            throw new MalformedException("msgpack: " + length + " bytes, more than the limit of " + limits.maxBytes());
        }
        Reader reader = new Reader(MessagePack.newDefaultUnpacker(bytes, offset, length), length, limits);
        try {
            SaltValue value = reader.value(1);
            long trailing = reader.remaining();
            if (trailing != 0) {
                throw new MalformedException("msgpack: " + trailing + " trailing bytes");
            }
            return value;
        } catch (MessageInsufficientBufferException e) {
            throw new MalformedException("msgpack: truncated");
        } catch (MessageSizeException e) {
            throw new MalformedException("msgpack: a length over 2 GiB, more than the input holds");
        } catch (IOException | MessagePackException e) {
            throw new MalformedException("msgpack: invalid (" + e.getClass().getSimpleName() + ")");
        }
    }

    /** Encodes {@code value} in {@code dialect}. */
    public static byte[] write(SaltValue value, SaltDialect dialect) {
        MessageBufferPacker out = (dialect == SaltDialect.PAYLOAD ? PAYLOAD : FRAME).newBufferPacker();
        try {
            write(out, value, dialect);
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException("writing to memory failed", e);
        }
    }

    private static void write(MessageBufferPacker out, SaltValue value, SaltDialect dialect) throws IOException {
        if (value instanceof SaltValue.Nil) {
            out.packNil();
        } else if (value instanceof SaltValue.Bool b) {
            out.packBoolean(b.value());
        } else if (value instanceof SaltValue.Int i) {
            if (i.unsigned64()) {
                out.packBigInteger(i.big());
            } else {
                out.packLong(i.value());
            }
        } else if (value instanceof SaltValue.Float f) {
            out.packDouble(f.value());
        } else if (value instanceof SaltValue.Str s) {
            raw(out, s.value().getBytes(StandardCharsets.UTF_8));
        } else if (value instanceof SaltValue.Raw r) {
            bytes(out, r.value(), dialect);
        } else if (value instanceof SaltValue.Bin b) {
            bytes(out, b.value(), dialect);
        } else if (value instanceof SaltValue.Array a) {
            out.packArrayHeader(a.items().size());
            for (SaltValue item : a.items()) {
                write(out, item, dialect);
            }
        } else {
            SaltValue.Map m = (SaltValue.Map) value;
            out.packMapHeader(m.entries().size());
            for (SaltValue.Entry e : m.entries()) {
                write(out, e.key(), dialect);
                write(out, e.value(), dialect);
            }
        }
    }

    /** Python bytes: raw str in the payload dialect (where there is no bin), bin in the frame dialect. */
    private static void bytes(MessageBufferPacker out, byte[] bytes, SaltDialect dialect) throws IOException {
        if (dialect == SaltDialect.PAYLOAD) {
            raw(out, bytes);
        } else {
            out.packBinaryHeader(bytes.length);
            out.writePayload(bytes);
        }
    }

    private static void raw(MessageBufferPacker out, byte[] bytes) throws IOException {
        out.packRawStringHeader(bytes.length);
        out.writePayload(bytes);
    }

    private static final class Reader {
        private final MessageUnpacker in;
        private final int length;
        private final SaltLimits limits;
        private int elements;

        Reader(MessageUnpacker in, int length, SaltLimits limits) {
            this.in = in;
            this.length = length;
            this.limits = limits;
        }

        long remaining() {
            return length - in.getTotalReadBytes();
        }

        SaltValue value(int depth) throws IOException, MalformedException {
            if (++elements > limits.maxElements()) {
                throw new MalformedException("msgpack: more than " + limits.maxElements() + " values");
            }
            MessageFormat format = in.getNextFormat();
            if (format == MessageFormat.NEVER_USED) {
                throw new MalformedException("msgpack: reserved byte 0xc1");
            }
            return switch (format.getValueType()) {
                case NIL -> {
                    in.unpackNil();
                    yield SaltValue.nil();
                }
                case BOOLEAN -> SaltValue.bool(in.unpackBoolean());
                case INTEGER -> {
                    if (format == MessageFormat.UINT64) {
                        BigInteger big = in.unpackBigInteger();
                        yield new SaltValue.Int(big.longValue(), big.bitLength() > 63);
                    }
                    yield SaltValue.integer(in.unpackLong());
                }
                case FLOAT -> new SaltValue.Float(in.unpackDouble());
                case STRING -> {
                    byte[] raw = payload(in.unpackRawStringHeader());
                    yield SaltValue.utf8(raw)
                            .<SaltValue>map(SaltValue.Str::new)
                            .orElseGet(() -> new SaltValue.Raw(raw));
                }
                case BINARY -> new SaltValue.Bin(payload(in.unpackBinaryHeader()));
                case ARRAY -> array(depth);
                case MAP -> map(depth);
                case EXTENSION -> {
                    if (!limits.opaqueExtensions()) {
                        throw new MalformedException("msgpack: extension types are not accepted");
                    }
                    yield new SaltValue.Bin(
                            payload(in.unpackExtensionTypeHeader().getLength()));
                }
                default -> throw new MalformedException("msgpack: unknown type");
            };
        }

        private SaltValue array(int depth) throws IOException, MalformedException {
            int count = in.unpackArrayHeader();
            checkContainer(depth, count, 1);
            List<SaltValue> items = new ArrayList<>(Math.min(count, MAX_PRESIZE));
            for (int i = 0; i < count; i++) {
                items.add(value(depth + 1));
            }
            return new SaltValue.Array(items);
        }

        private SaltValue map(int depth) throws IOException, MalformedException {
            int count = in.unpackMapHeader();
            checkContainer(depth, count, 2);
            List<SaltValue.Entry> entries = new ArrayList<>(Math.min(count, MAX_PRESIZE));
            Set<Object> seen = new HashSet<>(Math.min(count, MAX_PRESIZE) * 2);
            for (int i = 0; i < count; i++) {
                SaltValue key = value(depth + 1);
                if (key instanceof SaltValue.Array || key instanceof SaltValue.Map) {
                    throw new MalformedException("msgpack: a map key is a " + key.kind());
                }
                Object identity = key.bytes().<Object>map(ByteBuffer::wrap).orElse(key);
                if (!seen.add(identity)) {
                    throw new MalformedException("msgpack: a map repeats a key");
                }
                entries.add(new SaltValue.Entry(key, value(depth + 1)));
            }
            return new SaltValue.Map(entries);
        }

        /** Depth is checked before a container's items are read; every item takes at least one byte. */
        private void checkContainer(int depth, int count, int minBytesEach) throws MalformedException {
            if (depth > limits.maxDepth()) {
                throw new MalformedException("msgpack: nested deeper than " + limits.maxDepth());
            }
            if ((long) count * minBytesEach > remaining()) {
                throw new MalformedException(
                        "msgpack: a container declares " + count + " items, more than the input holds");
            }
        }

        private byte[] payload(int size) throws IOException, MalformedException {
            if (size < 0 || size > remaining()) {
                throw new MalformedException(
                        "msgpack: a string declares " + size + " bytes, more than the input holds");
            }
            return in.readPayload(size);
        }
    }

    /**
     * Whether a msgpack value starting with byte {@code first} is a map (fixmap, map16, map32): how a Salt payload or
     * a Salt TCP frame is told from a brine frame (version byte 1) and from a ZMTP greeting (0xFF).
     */
    public static boolean startsMap(int first) {
        return (first & 0xF0) == 0x80 || first == 0xDE || first == 0xDF;
    }

    /** {@link #startsMap} for the first byte of {@code payload}; false for an empty one. */
    public static boolean isMap(byte[] payload) {
        return payload.length > 0 && startsMap(payload[0] & 0xFF);
    }
}

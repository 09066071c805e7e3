package io.brine.protocol.codec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Writes msgpack for the encoder. A required field that is null, or a string that is not valid Unicode, is the
 * caller's bug: {@link IllegalArgumentException} naming the field. Limits are not checked here: the encoder decodes
 * what it wrote, so one set of rules decides both directions.
 */
final class MsgWriter {

    /**
     * Frames are mostly a few hundred bytes: the default 8 KiB first buffer, allocated and zeroed per frame, was 5 %
     * of a restarted master's CPU (BENCHMARKS, issue 26). Larger frames grow by further buffers as before.
     */
    private static final MessagePack.PackerConfig PACKER = new MessagePack.PackerConfig().withBufferSize(512);

    private final MessageBufferPacker out = PACKER.newBufferPacker();

    /** Writes the version and type bytes that start a frame, an inner message or a publish load. */
    MsgWriter header(int type) {
        try {
            out.writePayload(new byte[] {(byte) Codec.version(type), (byte) type});
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    MsgWriter array(int count) {
        try {
            out.packArrayHeader(count);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    MsgWriter map(int count) {
        try {
            out.packMapHeader(count);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    MsgWriter nil() {
        try {
            out.packNil();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    MsgWriter bool(boolean value) {
        try {
            out.packBoolean(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Any integer, in msgpack's shortest form. */
    MsgWriter integer(long value) {
        try {
            out.packLong(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Always float 64. */
    MsgWriter float64(double value) {
        try {
            out.packDouble(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    MsgWriter bin(String field, byte[] value) {
        if (value == null) {
            throw new IllegalArgumentException(field + " is null");
        }
        try {
            out.packBinaryHeader(value.length);
            out.writePayload(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    MsgWriter binOrNil(String field, byte[] value) {
        return value == null ? nil() : bin(field, value);
    }

    MsgWriter str(String field, String value) {
        if (value == null) {
            throw new IllegalArgumentException(field + " is null");
        }
        byte[] utf8;
        try {
            // A fresh encoder reports unpaired surrogates; getBytes would replace them with '?'.
            ByteBuffer encoded = StandardCharsets.UTF_8.newEncoder().encode(CharBuffer.wrap(value));
            utf8 = new byte[encoded.remaining()];
            encoded.get(utf8);
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException(field + " is not valid Unicode (unpaired surrogate)");
        }
        try {
            out.packRawStringHeader(utf8.length);
            out.writePayload(utf8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    MsgWriter strOrNil(String field, String value) {
        return value == null ? nil() : str(field, value);
    }

    byte[] toByteArray() {
        return out.toByteArray();
    }
}

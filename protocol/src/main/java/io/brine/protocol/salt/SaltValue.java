package io.brine.protocol.salt;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A msgpack value as Salt sends it, read into a small typed tree. Salt's peers read everything with {@code raw=True}
 * and decode byte strings to text where they can, so the three byte-string kinds ({@link Str}, {@link Raw},
 * {@link Bin}) all answer {@link #bytes}; the kind only records what the wire said, for byte-exact re-encoding.
 * Maps keep their wire order (Salt's signed blobs depend on it).
 */
public sealed interface SaltValue {

    /** The bytes of a byte string of any kind; empty for every other value. */
    default Optional<byte[]> bytes() {
        return Optional.empty();
    }

    /** The text of a byte string that is valid UTF-8 (what Salt's {@code decode_embedded_strs} makes of it). */
    default Optional<String> text() {
        return Optional.empty();
    }

    /** The kind, for messages: {@code map}, {@code str}, ... */
    String kind();

    static SaltValue str(String text) {
        return new Str(text);
    }

    static SaltValue bin(byte[] bytes) {
        return new Bin(bytes);
    }

    static SaltValue integer(long value) {
        return new Int(value, false);
    }

    static SaltValue bool(boolean value) {
        return value ? Bool.TRUE : Bool.FALSE;
    }

    static SaltValue nil() {
        return Nil.NIL;
    }

    /** Byte strings: a str-family value holding valid UTF-8. */
    record Str(String value) implements SaltValue {
        public Str {
            Objects.requireNonNull(value);
        }

        @Override
        public Optional<byte[]> bytes() {
            return Optional.of(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public Optional<String> text() {
            return Optional.of(value);
        }

        @Override
        public String kind() {
            return "str";
        }
    }

    /** A str-family ("raw") value whose bytes are not UTF-8: a ciphertext or signature in Salt's payload dialect. */
    record Raw(byte[] value) implements SaltValue {
        public Raw {
            value = value.clone();
        }

        @Override
        public byte[] value() {
            return value.clone();
        }

        @Override
        public Optional<byte[]> bytes() {
            return Optional.of(value.clone());
        }

        @Override
        public String kind() {
            return "raw";
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Raw r && Arrays.equals(value, r.value);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(value);
        }

        @Override
        public String toString() {
            return "Raw[" + value.length + " bytes]";
        }
    }

    /** A bin-family value (msgpack-python's {@code use_bin_type=True} for Python bytes: Salt's TCP frames). */
    record Bin(byte[] value) implements SaltValue {
        public Bin {
            value = value.clone();
        }

        @Override
        public byte[] value() {
            return value.clone();
        }

        @Override
        public Optional<byte[]> bytes() {
            return Optional.of(value.clone());
        }

        @Override
        public Optional<String> text() {
            return utf8(value);
        }

        @Override
        public String kind() {
            return "bin";
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Bin b && Arrays.equals(value, b.value);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(value);
        }

        @Override
        public String toString() {
            return "Bin[" + value.length + " bytes]";
        }
    }

    /**
     * An integer. msgpack's uint64 values above {@link Long#MAX_VALUE} keep their bits in {@code value} with
     * {@code unsigned64} set; {@link #big()} gives the number either way.
     */
    record Int(long value, boolean unsigned64) implements SaltValue {
        public BigInteger big() {
            BigInteger v = BigInteger.valueOf(value);
            return unsigned64 ? v.add(BigInteger.ONE.shiftLeft(64)) : v;
        }

        @Override
        public String kind() {
            return "int";
        }
    }

    record Bool(boolean value) implements SaltValue {
        static final Bool TRUE = new Bool(true);
        static final Bool FALSE = new Bool(false);

        @Override
        public String kind() {
            return "bool";
        }
    }

    record Nil() implements SaltValue {
        static final Nil NIL = new Nil();

        @Override
        public String kind() {
            return "nil";
        }
    }

    /** A float; msgpack-python writes every Python float as float64, and so does the writer here. */
    record Float(double value) implements SaltValue {
        @Override
        public String kind() {
            return "float";
        }
    }

    record Array(List<SaltValue> items) implements SaltValue {
        public Array {
            items = List.copyOf(items);
        }

        @Override
        public String kind() {
            return "array";
        }
    }

    /** One map entry; keys are usually strings but Python dicts allow any hashable key. */
    record Entry(SaltValue key, SaltValue value) {
        public Entry {
            Objects.requireNonNull(key);
            Objects.requireNonNull(value);
        }
    }

    /** A map in wire order. A decoded map never holds two keys with the same bytes (the reader refuses that). */
    record Map(List<Entry> entries) implements SaltValue {
        public Map {
            entries = List.copyOf(entries);
        }

        /** The value of the byte-string key {@code key} (any of the three kinds), if present. */
        public Optional<SaltValue> get(String key) {
            byte[] wanted = null;
            for (Entry e : entries) {
                SaltValue k = e.key();
                if (k instanceof Str s) {
                    if (s.value().equals(key)) {
                        return Optional.of(e.value());
                    }
                } else if (k instanceof Raw || k instanceof Bin) {
                    if (wanted == null) {
                        wanted = key.getBytes(StandardCharsets.UTF_8);
                    }
                    if (Arrays.equals(k instanceof Raw r ? r.value : ((Bin) k).value, wanted)) {
                        return Optional.of(e.value());
                    }
                }
            }
            return Optional.empty();
        }

        public boolean has(String key) {
            return get(key).isPresent();
        }

        /** The keys that are text, in order (for messages and unknown-field checks). */
        public List<String> textKeys() {
            List<String> keys = new ArrayList<>(entries.size());
            for (Entry e : entries) {
                e.key().text().ifPresent(keys::add);
            }
            return Collections.unmodifiableList(keys);
        }

        /** Starts a map to be written; entries keep the order they are put in. */
        public static Builder builder() {
            return new Builder();
        }

        @Override
        public String kind() {
            return "map";
        }
    }

    /** Builds a {@link Map} with text keys, in insertion order. */
    final class Builder {
        private final List<Entry> entries = new ArrayList<>();

        private Builder() {}

        public Builder put(String key, SaltValue value) {
            entries.add(new Entry(new Str(key), value));
            return this;
        }

        public Builder put(String key, String value) {
            return put(key, new Str(value));
        }

        public Builder put(String key, byte[] value) {
            return put(key, new Bin(value));
        }

        public Builder put(String key, long value) {
            return put(key, integer(value));
        }

        public Builder put(String key, boolean value) {
            return put(key, bool(value));
        }

        public Map build() {
            return new Map(entries);
        }
    }

    /** The text of {@code bytes} when they are strict UTF-8. */
    static Optional<String> utf8(byte[] bytes) {
        try {
            return Optional.of(StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(ByteBuffer.wrap(bytes))
                    .toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }
}

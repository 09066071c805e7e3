package io.brine.protocol.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.testing.TestKeys;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Random mutations of valid frames, inner messages and loads (fixed seeds, so a failure reproduces): decoding never
 * throws, never needs its last-resort catch, and whatever decodes is something the encoder accepts again.
 */
class CodecFuzzTest {

    private static final int ROUNDS = 20_000;
    /** Bytes that mean something to msgpack: big headers, nil, reserved, ext, str/bin/array/map markers. */
    private static final int[] INTERESTING = {
        0x00, 0x7f, 0x80, 0x90, 0xa0, 0xc0, 0xc1, 0xc4, 0xc5, 0xc6, 0xcf, 0xd3, 0xd4, 0xd9, 0xdb, 0xdc, 0xdd, 0xde,
        0xdf, 0xff
    };

    @Test
    void mutatedFramesNeverMakeDecodeThrow() {
        PrivateKey master = TestKeys.pair(0).getPrivate();
        List<byte[]> seeds = List.of(
                Codec.encode(Samples.sessionFrame()),
                Codec.encodeSigned(Samples.authRequest(), TestKeys.pair(1).getPrivate()),
                Codec.encodeSigned(Samples.authReplyAccepted(), master),
                Codec.encodeSigned(Samples.authReplyPending(), master),
                Codec.encodeSigned(Samples.publish(), master),
                Codec.encodeSigned(Samples.sessionUnknown(), master));
        Random random = new Random(20240501L);
        int ok = 0;
        for (int round = 0; round < ROUNDS; round++) {
            byte[] frame = mutate(seeds.get(random.nextInt(seeds.size())), random);
            Decoded decoded;
            try {
                decoded = Codec.decode(frame, FrameLimits.MAX_FRAME);
            } catch (Throwable t) {
                throw new AssertionError("decode threw on " + HexFormat.of().formatHex(frame), t);
            }
            assertThat(decoded).isNotNull();
            if (decoded instanceof Decoded.Ok accepted) {
                ok++;
                if (accepted.message() instanceof SessionFrame frameMessage) {
                    Codec.encode(frameMessage); // what decodes, encodes
                }
            } else {
                // "undecodable" means an unexpected RuntimeException reached the safety net: a decoder bug.
                assertThat(((Decoded.Malformed) decoded).reason()).isNotBlank().doesNotStartWith("undecodable");
            }
        }
        // Some mutations (inside byte strings) stay well-formed: the loop exercised both outcomes.
        assertThat(ok).isBetween(1, ROUNDS - 1);
    }

    @Test
    void mutatedInnerMessagesAndLoadsOnlyEverFailAsMalformed() {
        List<byte[]> inner = new ArrayList<>();
        for (SessionMessage message : Samples.innerMessages()) {
            inner.add(Codec.encodeInner(message));
        }
        byte[] load = Codec.encodeLoad(Samples.load());
        Random random = new Random(7L);
        for (int round = 0; round < ROUNDS / 2; round++) {
            byte[] plaintext = mutate(inner.get(random.nextInt(inner.size())), random);
            try {
                Codec.encodeInner(Codec.decodeInner(plaintext));
            } catch (MalformedException expected) {
                assertThat(expected.getMessage()).isNotBlank().doesNotStartWith("undecodable");
            } catch (Throwable t) {
                fail("decodeInner threw " + t + " on " + HexFormat.of().formatHex(plaintext), t);
            }
            byte[] mutatedLoad = mutate(load, random);
            try {
                Codec.encodeLoad(Codec.decodeLoad(mutatedLoad));
            } catch (MalformedException expected) {
                assertThat(expected.getMessage()).isNotBlank().doesNotStartWith("undecodable");
            } catch (Throwable t) {
                fail("decodeLoad threw " + t + " on " + HexFormat.of().formatHex(mutatedLoad), t);
            }
        }
    }

    /** One to three random edits: flip a bit, overwrite, insert, delete, truncate, duplicate a slice. */
    private static byte[] mutate(byte[] original, Random random) {
        byte[] bytes = original.clone();
        int edits = 1 + random.nextInt(3);
        for (int i = 0; i < edits && bytes.length > 0; i++) {
            int at = random.nextInt(bytes.length);
            switch (random.nextInt(6)) {
                case 0 -> bytes[at] ^= (byte) (1 << random.nextInt(8));
                case 1 ->
                    bytes[at] = (byte)
                            (random.nextBoolean()
                                    ? random.nextInt(256)
                                    : INTERESTING[random.nextInt(INTERESTING.length)]);
                case 2 -> {
                    byte[] longer = new byte[bytes.length + 1];
                    System.arraycopy(bytes, 0, longer, 0, at);
                    longer[at] = (byte) INTERESTING[random.nextInt(INTERESTING.length)];
                    System.arraycopy(bytes, at, longer, at + 1, bytes.length - at);
                    bytes = longer;
                }
                case 3 -> {
                    int end = Math.min(bytes.length, at + 1 + random.nextInt(8));
                    byte[] shorter = new byte[bytes.length - (end - at)];
                    System.arraycopy(bytes, 0, shorter, 0, at);
                    System.arraycopy(bytes, end, shorter, at, bytes.length - end);
                    bytes = shorter;
                }
                case 4 -> bytes = Arrays.copyOf(bytes, at);
                default -> {
                    int end = Math.min(bytes.length, at + 1 + random.nextInt(16));
                    byte[] slice = Arrays.copyOfRange(bytes, at, end);
                    bytes = Samples.concat(
                            Arrays.copyOf(bytes, end), slice, Arrays.copyOfRange(bytes, end, bytes.length));
                }
            }
        }
        return bytes;
    }
}

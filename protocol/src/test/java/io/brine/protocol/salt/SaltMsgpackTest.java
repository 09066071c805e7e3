package io.brine.protocol.salt;

import static io.brine.protocol.testing.SaltVectors.b64;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.testing.SaltVectors;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SaltMsgpackTest {

    private static final HexFormat HEX = HexFormat.of();

    /** Every msgpack byte run of every vector: its path in the JSON and the dialect Salt wrote it in. */
    record Blob(String where, byte[] bytes, SaltDialect dialect) {}

    static List<Blob> blobs() {
        List<Blob> blobs = new ArrayList<>();
        for (String path : SaltVectors.all()) {
            if (path.endsWith("zmtp-handshakes") || path.equals("x931")) {
                continue;
            }
            collect(path, SaltVectors.vector(path), blobs);
        }
        return blobs;
    }

    private static void collect(String where, JsonNode node, List<Blob> out) {
        for (var e : node.properties()) {
            String name = e.getKey();
            JsonNode v = e.getValue();
            String at = where + "/" + name;
            switch (name) {
                // The version-2 request was crafted by the recorders' script with use_bin_type=False.
                case "tcp_stream_b64" ->
                    out.add(new Blob(
                            at,
                            b64(v),
                            at.contains("auth-1e") && at.contains("/request/")
                                    ? SaltDialect.PAYLOAD
                                    : SaltDialect.FRAME));
                case "payload_b64", "envelope_b64", "load_b64", "msgpack_b64" ->
                    out.add(new Blob(at, b64(v), SaltDialect.PAYLOAD));
                case "zmq_frames_b64" -> {
                    byte[] last = b64(v.get(v.size() - 1));
                    out.add(new Blob(at, last, SaltDialect.PAYLOAD));
                }
                default -> {
                    if (v.isObject()) {
                        collect(at, v, out);
                    }
                }
            }
        }
    }

    @Test
    void everyRecordedMessageDecodesAndReEncodesToTheSameBytes() throws MalformedException {
        List<Blob> blobs = blobs();
        assertThat(blobs).hasSizeGreaterThan(150);
        for (Blob blob : blobs) {
            SaltValue value = SaltMsgpack.read(blob.bytes(), SaltLimits.SESSION);
            assertThat(HEX.formatHex(SaltMsgpack.write(value, blob.dialect())))
                    .as(blob.where())
                    .isEqualTo(HEX.formatHex(blob.bytes()));
        }
    }

    @Test
    void everyRequestAReplyFitsTheUnauthenticatedLimits() throws MalformedException {
        for (String path : SaltVectors.named("auth-")) {
            JsonNode v = SaltVectors.vector(path);
            JsonNode req = v.get("request");
            byte[] bytes = req.has("tcp_stream_b64") ? b64(req.get("tcp_stream_b64")) : b64(req.get("payload_b64"));
            assertThat(SaltMsgpack.read(bytes, SaltLimits.UNAUTHENTICATED)).isInstanceOf(SaltValue.Map.class);
        }
    }

    @Test
    void payloadDialectWritesRawStringsWithoutStr8AndNoBin() {
        byte[] nonce32 = "0123456789abcdef0123456789abcdef".getBytes();
        SaltValue v = SaltValue.Map.builder()
                .put("nonce", new String(nonce32))
                .put("sig", new byte[] {(byte) 0xff})
                .build();
        assertThat(HEX.formatHex(SaltMsgpack.write(v, SaltDialect.PAYLOAD)))
                .isEqualTo("82a56e6f6e6365da0020" + HEX.formatHex(nonce32) + "a3736967a1ff");
        assertThat(HEX.formatHex(SaltMsgpack.write(v, SaltDialect.FRAME)))
                .isEqualTo("82a56e6f6e6365d920" + HEX.formatHex(nonce32) + "a3736967c401ff");
    }

    @Test
    void integersTakeTheirSmallestFormAndUint64Survives() throws MalformedException {
        long[] values = {
            0,
            127,
            128,
            255,
            256,
            34505,
            65536,
            1795315684L,
            1L << 32,
            Long.MAX_VALUE,
            -1,
            -32,
            -33,
            -129,
            -32769,
            Long.MIN_VALUE
        };
        String[] expected = {
            "00",
            "7f",
            "cc80",
            "ccff",
            "cd0100",
            "cd86c9",
            "ce00010000",
            "ce6b0257e4",
            "cf0000000100000000",
            "cf7fffffffffffffff",
            "ff",
            "e0",
            "d0df",
            "d1ff7f",
            "d2ffff7fff",
            "d38000000000000000"
        };
        for (int i = 0; i < values.length; i++) {
            byte[] bytes = SaltMsgpack.write(SaltValue.integer(values[i]), SaltDialect.PAYLOAD);
            assertThat(HEX.formatHex(bytes)).as("%d", values[i]).isEqualTo(expected[i]);
            assertThat(SaltMsgpack.read(bytes, SaltLimits.SESSION)).isEqualTo(SaltValue.integer(values[i]));
        }
        byte[] max = HEX.parseHex("cfffffffffffffffff");
        SaltValue.Int big = (SaltValue.Int) SaltMsgpack.read(max, SaltLimits.SESSION);
        assertThat(big.big()).hasToString("18446744073709551615");
        assertThat(SaltMsgpack.write(big, SaltDialect.PAYLOAD)).isEqualTo(max);
    }

    @Test
    void strBinAndRawAllHandOutTheirBytes() throws MalformedException {
        SaltValue.Map m =
                (SaltValue.Map) SaltMsgpack.read(HEX.parseHex("83a16101c4016202a163a2ff00"), SaltLimits.SESSION);
        assertThat(m.entries().get(1).key()).isInstanceOf(SaltValue.Bin.class);
        assertThat(m.get("b")).contains(SaltValue.integer(2));
        assertThat(m.get("c").orElseThrow()).isInstanceOf(SaltValue.Raw.class);
        assertThat(m.get("c").orElseThrow().bytes().orElseThrow()).containsExactly(0xff, 0x00);
        assertThat(m.get("c").orElseThrow().text()).isEmpty();
        assertThat(m.textKeys()).containsExactly("a", "b", "c");
    }

    @Test
    void floatsAndIntegerKeysAreAccepted() throws MalformedException {
        SaltValue.Map m = (SaltValue.Map)
                SaltMsgpack.read(HEX.parseHex("8201cb3ff8000000000000c3ca3fc00000"), SaltLimits.SESSION);
        assertThat(m.entries().get(0).value()).isEqualTo(new SaltValue.Float(1.5));
        assertThat(m.entries().get(1).value()).isEqualTo(new SaltValue.Float(1.5));
    }

    @Test
    void inputOverTheSizeLimitIsRefusedBeforeParsing() {
        byte[] big = new byte[SaltLimits.UNAUTHENTICATED.maxBytes() + 1];
        assertThatThrownBy(() -> SaltMsgpack.read(big, SaltLimits.UNAUTHENTICATED))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("more than the limit of 65536");
    }

    @Test
    void deepNestingIsRefusedWithoutExhaustingTheStack() {
        byte[] bomb = new byte[60_000];
        Arrays.fill(bomb, (byte) 0x91); // [[[[...
        assertThatThrownBy(() -> SaltMsgpack.read(bomb, SaltLimits.UNAUTHENTICATED))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("nested deeper than 16");
        byte[] maps = new byte[7_000_000];
        for (int i = 0; i < maps.length; i += 2) {
            maps[i] = (byte) 0x81; // {0: {0: ...
        }
        assertThatThrownBy(() -> SaltMsgpack.read(maps, SaltLimits.SESSION))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("nested deeper than 100");
    }

    @Test
    void nestingUpToTheLimitIsAccepted() throws MalformedException {
        byte[] ok = new byte[16];
        Arrays.fill(ok, 0, 15, (byte) 0x91);
        ok[15] = (byte) 0xc0;
        assertThat(SaltMsgpack.read(ok, new SaltLimits(100, 15, 100))).isInstanceOf(SaltValue.Array.class);
        assertThatThrownBy(() -> SaltMsgpack.read(ok, new SaltLimits(100, 14, 100)))
                .isInstanceOf(MalformedException.class);
    }

    @Test
    void tooManyValuesAreRefused() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0xdc);
        out.write(0x13);
        out.write(0x88); // array16 of 5000 nils
        for (int i = 0; i < 5000; i++) {
            out.write(0xc0);
        }
        assertThatThrownBy(() -> SaltMsgpack.read(out.toByteArray(), SaltLimits.UNAUTHENTICATED))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("more than 4096 values");
    }

    @Test
    void declaredLengthsLargerThanTheInputAreRefusedWithoutAllocating() {
        String[] lies = {"dbffffffff", "db7fffffff", "c67fffffff", "dd7fffffff", "df7fffffff", "da0010", "dc0010c0"};
        for (String lie : lies) {
            assertThatThrownBy(() -> SaltMsgpack.read(HEX.parseHex(lie), SaltLimits.SESSION))
                    .as(lie)
                    .isInstanceOf(MalformedException.class)
                    .hasMessageContaining("more than the input holds");
        }
    }

    @Test
    void anExtensionValueIsReadAsItsBytesOnlyInAnAuthenticatedLoad() throws Exception {
        // {"opts": {"when": ext 78 of 3 bytes}}: Salt's datetime in the opts a minion sends with _master_tops.
        byte[] load = HEX.parseHex("81a46f70747381a47768656ec7034e010203");
        SaltValue.Map read = (SaltValue.Map) SaltMsgpack.read(load, SaltLimits.SESSION_LOAD);
        assertThat(((SaltValue.Map) read.get("opts").orElseThrow()).get("when"))
                .contains(SaltValue.bin(new byte[] {1, 2, 3}));
        assertThatThrownBy(() -> SaltMsgpack.read(load, SaltLimits.SESSION))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("extension types");
        assertThatThrownBy(() -> SaltMsgpack.read(HEX.parseHex("c7054e0102"), SaltLimits.SESSION_LOAD))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("more than the input holds");
    }

    @Test
    void otherMalformedInputIsRefusedWithAReason() {
        String[][] cases = {
            {"c1", "reserved byte 0xc1"},
            {"d40100", "extension types"},
            {"c7010102", "extension types"},
            {"82a161c0a161c0", "repeats a key"},
            {"82a161c0c40161c0", "repeats a key"},
            {"81" + "9100" + "c0", "map key is a array"},
            {"c0c0", "1 trailing bytes"},
            {"", "truncated"},
            {"cd01", "truncated"},
        };
        for (String[] c : cases) {
            assertThatThrownBy(() -> SaltMsgpack.read(HEX.parseHex(c[0]), SaltLimits.SESSION))
                    .as(c[0])
                    .isInstanceOf(MalformedException.class)
                    .hasMessageContaining(c[1]);
        }
    }

    @Test
    void everyTruncationAndEveryByteFlipOfARecordedRequestEndsInAValueOrAMalformedException() {
        byte[] auth = b64(SaltVectors.vector("3008.2-tcp/auth-1b-accepted-token")
                .get("request")
                .get("tcp_stream_b64"));
        for (int cut = 0; cut < auth.length; cut++) {
            byte[] head = Arrays.copyOf(auth, cut);
            assertThatThrownBy(() -> SaltMsgpack.read(head, SaltLimits.UNAUTHENTICATED))
                    .as("cut at %d", cut)
                    .isInstanceOf(MalformedException.class);
        }
        Random random = new Random(15);
        for (int i = 0; i < 20_000; i++) {
            byte[] copy = auth.clone();
            copy[random.nextInt(copy.length)] = (byte) random.nextInt(256);
            try {
                SaltMsgpack.read(copy, SaltLimits.UNAUTHENTICATED);
            } catch (MalformedException expected) {
                assertThat(expected.getMessage()).startsWith("msgpack: ");
            }
        }
    }
}

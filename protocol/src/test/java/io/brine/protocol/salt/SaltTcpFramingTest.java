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

class SaltTcpFramingTest {

    private static final HexFormat HEX = HexFormat.of();

    /** Every frame recorded on Salt's TCP transport, in both directions. */
    private static List<byte[]> recordedFrames() {
        List<byte[]> frames = new ArrayList<>();
        for (String name : SaltVectors.names("3008.2-tcp")) {
            JsonNode v = SaltVectors.vector("3008.2-tcp/" + name);
            for (JsonNode side : List.of(v, v.path("request"), v.path("reply"))) {
                if (side.has("tcp_stream_b64")) {
                    frames.add(b64(side.get("tcp_stream_b64")));
                }
            }
        }
        return frames;
    }

    @Test
    void aStreamOfEveryRecordedFrameSplitsAtTheRecordedBoundariesWhicheverWayItArrives() throws Exception {
        List<byte[]> frames = recordedFrames();
        assertThat(frames).hasSize(34);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        frames.forEach(all::writeBytes);
        byte[] stream = all.toByteArray();
        for (int chunk : new int[] {1, 7, 300, stream.length}) {
            assertThat(split(stream, chunk))
                    .as("chunks of %d", chunk)
                    .hasSize(frames.size())
                    .zipSatisfy(frames, (got, want) -> assertThat(got).isEqualTo(want));
        }
    }

    /** Feeds {@code stream} in chunks of {@code chunk} bytes to one scanner, as a connection would. */
    private static List<byte[]> split(byte[] stream, int chunk) throws MalformedException {
        SaltStreamScanner scanner = new SaltStreamScanner(SaltLimits.SESSION);
        List<byte[]> out = new ArrayList<>();
        int frameStart = 0;
        int buffered = 0;
        while (buffered < stream.length) {
            buffered = Math.min(stream.length, buffered + chunk);
            int length;
            while (frameStart < buffered && (length = scanner.scan(stream, frameStart, buffered - frameStart)) > 0) {
                out.add(Arrays.copyOfRange(stream, frameStart, frameStart + length));
                SaltTcpFrame.decode(stream, frameStart, length, SaltLimits.SESSION);
                frameStart += length;
                scanner.reset();
            }
        }
        assertThat(frameStart).isEqualTo(stream.length);
        return out;
    }

    @Test
    void requestsKeepTheirMessageIdAndTheReplyEchoesTheHead() throws Exception {
        JsonNode v = SaltVectors.vector("3008.2-tcp/return-test.ping");
        SaltTcpFrame request = SaltTcpFrame.decode(b64(v.get("request").get("tcp_stream_b64")), SaltLimits.SESSION);
        assertThat(request.mid())
                .contains(v.get("request").get("head_view").get("mid").asText());
        SaltTcpFrame reply = SaltTcpFrame.decode(b64(v.get("reply").get("tcp_stream_b64")), SaltLimits.SESSION);
        assertThat(reply.head()).isEqualTo(request.head());
        assertThat(SaltTcpFrame.encode(request.reply(reply.body())))
                .isEqualTo(b64(v.get("reply").get("tcp_stream_b64")));
    }

    @Test
    void aFrameDeclaredOverTheLimitIsRefusedFromItsHeaderBeforeItIsBuffered() {
        // {"head": {}, "body": bin32 of 1 MiB}: refused after 20 bytes, long before the body arrives.
        byte[] start = HEX.parseHex("82a46865616480a4626f6479c600100000");
        SaltStreamScanner scanner = new SaltStreamScanner(SaltLimits.UNAUTHENTICATED);
        assertThatThrownBy(() -> scanner.scan(start, 0, start.length))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("longer than the limit of 65536");
    }

    @Test
    void aFrameThatNeverEndsIsRefusedAtTheLimit() throws Exception {
        byte[] nils = new byte[SaltLimits.UNAUTHENTICATED.maxBytes()];
        Arrays.fill(nils, (byte) 0xc0);
        byte[] head = HEX.parseHex("82a46865616480a4626f6479dd00100000");
        System.arraycopy(head, 0, nils, 0, head.length);
        SaltStreamScanner scanner = new SaltStreamScanner(new SaltLimits(65536, 16, 1_000_000_000));
        assertThat(scanner.scan(nils, 0, 1000)).isEqualTo(-1);
        assertThatThrownBy(() -> scanner.scan(nils, 0, nils.length))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("longer than the limit");
    }

    @Test
    void nestingCountsAndTypesAreBoundedAsInTheReader() {
        byte[] deep = new byte[100];
        Arrays.fill(deep, (byte) 0x81);
        String[][] cases = {
            {HEX.formatHex(deep), "nested deeper than 16"},
            {"81c0".repeat(16) + "80", "nested deeper than 16"}, // an empty map as the 17th level: the reader's count
            {"91c0", "does not start with a map"},
            {"81c1c0", "reserved byte 0xc1"},
            {"81d40100c0", "extension types"},
            {"81a161dfffffffff", "more than 4096 values"},
        };
        for (String[] c : cases) {
            SaltStreamScanner scanner = new SaltStreamScanner(SaltLimits.UNAUTHENTICATED);
            byte[] bytes = HEX.parseHex(c[0]);
            assertThatThrownBy(() -> scanner.scan(bytes, 0, bytes.length))
                    .as(c[1])
                    .isInstanceOf(MalformedException.class)
                    .hasMessageContaining(c[1]);
        }
    }

    @Test
    void theScannerAgreesWithTheReaderOnRandomDamage() throws Exception {
        byte[] frame = b64(SaltVectors.vector("3008.2-tcp/auth-1b-accepted-token")
                .get("request")
                .get("tcp_stream_b64"));
        Random random = new Random(1);
        for (int i = 0; i < 5_000; i++) {
            byte[] copy = frame.clone();
            copy[random.nextInt(copy.length)] = (byte) random.nextInt(256);
            SaltStreamScanner scanner = new SaltStreamScanner(SaltLimits.UNAUTHENTICATED);
            int length;
            try {
                length = scanner.scan(copy, 0, copy.length);
            } catch (MalformedException e) {
                continue;
            }
            if (length > 0) {
                try {
                    SaltMsgpack.read(copy, 0, length, SaltLimits.UNAUTHENTICATED);
                } catch (MalformedException e) {
                    // Only what the scanner does not look at: duplicate keys, key types.
                    assertThat(e.getMessage()).containsAnyOf("repeats a key", "map key is");
                }
            }
        }
    }
}

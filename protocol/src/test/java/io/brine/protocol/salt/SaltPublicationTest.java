package io.brine.protocol.salt;

import static io.brine.protocol.testing.SaltVectors.b64;
import static io.brine.protocol.testing.SaltVectors.viewBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.testing.SaltVectors;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SaltPublicationTest {

    private static final HexFormat HEX = HexFormat.of();

    @Test
    void everyRecordedPublicationIsReproducedByteForByteOnItsTransport() throws Exception {
        int checked = 0;
        for (String path : SaltVectors.named("publish-")) {
            JsonNode v = SaltVectors.vector(path);
            JsonNode d = v.get("load_decrypted");
            Crypticle aes = Crypticle.of(d.get("key_string").asText());
            SaltPublication pub = SaltPublication.decode(
                    (SaltValue.Map) SaltMsgpack.read(b64(d.get("msgpack_b64")), SaltLimits.SESSION));
            assertThat(SaltMsgpack.write(pub.load(), SaltDialect.PAYLOAD)).isEqualTo(b64(d.get("msgpack_b64")));
            byte[] sealedLoad = aes.encrypt(Crypticle.plaintext(pub.load(), null), b64(d.get("iv_b64")));
            SaltRsa.Signing signing = SaltRsa.Signing.named(
                            v.get("envelope_view").get("sig_algo").asText())
                    .orElseThrow();
            byte[] envelope = SaltPublication.envelope(
                    sealedLoad, SaltVectors.pair("master").getPrivate(), signing);
            assertThat(HEX.formatHex(envelope)).as(path).isEqualTo(HEX.formatHex(b64(v.get("envelope_b64"))));
            if (SaltVectors.isTcp(path)) {
                assertThat(SaltPublication.tcpFrame(envelope)).isEqualTo(b64(v.get("tcp_stream_b64")));
            } else {
                JsonNode frames = v.get("zmq_frames_b64");
                boolean filtering = frames.size() == 2;
                Optional<List<String>> resolved =
                        pub.tgtType().equals("glob") ? Optional.of(List.of("vec-minion-1")) : Optional.empty();
                List<List<byte[]>> messages = SaltPublication.zmqMessages(envelope, filtering, resolved);
                assertThat(messages).hasSize(1);
                assertThat(messages.get(0)).hasSize(frames.size());
                for (int i = 0; i < frames.size(); i++) {
                    assertThat(messages.get(0).get(i)).isEqualTo(b64(frames.get(i)));
                }
            }
            assertThat(SaltPublication.open(
                            envelope, SaltVectors.pub("master"), aes, pub.serial() - 1, SaltLimits.SESSION))
                    .contains(pub);
            assertThat(SaltPublication.open(envelope, SaltVectors.pub("master"), aes, pub.serial(), SaltLimits.SESSION))
                    .isEmpty();
            checked++;
        }
        assertThat(checked).isEqualTo(15);
        assertThat(SaltPublication.topic("vec-minion-1")).isEqualTo("fa23c82ffda268269e788373f27970fa27a864e1");
    }

    @Test
    void keywordArgumentsTravelAsATrailingMapInArg() throws Exception {
        JsonNode d = SaltVectors.vector("3008.2-zeromq/publish-test.arg").get("load_decrypted");
        SaltPublication pub =
                SaltPublication.decode((SaltValue.Map) SaltMsgpack.read(b64(d.get("msgpack_b64")), SaltLimits.SESSION));
        List<SaltValue> args = ((SaltValue.Array) pub.arg()).items();
        assertThat(args).hasSize(3);
        SaltValue.Map kwargs = (SaltValue.Map) args.get(2);
        assertThat(kwargs.get("__kwarg__")).contains(SaltValue.bool(true));
        assertThat(kwargs.get("kw")).contains(SaltValue.str("val"));
        assertThat(pub.extra()).isEmpty();
    }

    @Test
    void aMinionRefusesAnUnsignedOrForgedOrForeignPublication() throws Exception {
        Crypticle aes = Crypticle.generate();
        SaltPublication pub = new SaltPublication(
                "test.ping",
                new SaltValue.Array(List.of()),
                SaltValue.str("*"),
                "20261125000000000001",
                "",
                "glob",
                "root",
                List.of(),
                7);
        byte[] envelope = pub.envelope(aes, SaltVectors.pair("master").getPrivate(), SaltRsa.Signing.PKCS1V15_SHA1);
        assertThat(SaltPublication.open(envelope, SaltVectors.pub("master"), aes, 0, SaltLimits.SESSION))
                .contains(pub);
        assertThatThrownBy(() -> SaltPublication.open(envelope, SaltVectors.pub("minion1"), aes, 0, SaltLimits.SESSION))
                .isInstanceOf(CryptoException.class);
        assertThatThrownBy(() -> SaltPublication.open(
                        envelope, SaltVectors.pub("master"), Crypticle.generate(), 0, SaltLimits.SESSION))
                .isInstanceOf(CryptoException.class);
        SaltValue.Map env = (SaltValue.Map) SaltMsgpack.read(envelope, SaltLimits.SESSION);
        byte[] unsigned = SaltMsgpack.write(
                SaltValue.Map.builder()
                        .put("enc", "aes")
                        .put("load", env.get("load").orElseThrow())
                        .build(),
                SaltDialect.PAYLOAD);
        assertThatThrownBy(() -> SaltPublication.open(unsigned, SaltVectors.pub("master"), aes, 0, SaltLimits.SESSION))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("sig_algo");
    }

    @Test
    void theTcpPublishHelloOpensWithTheSharedAesKey() throws Exception {
        JsonNode v = SaltVectors.vector("3008.2-tcp/pub-connection-id-frame");
        Crypticle aes = Crypticle.of(v.get("load_decrypted").get("key_string").asText());
        SaltTcpFrame frame = SaltTcpFrame.decode(b64(v.get("tcp_stream_b64")), SaltLimits.UNAUTHENTICATED);
        assertThat(frame.head().entries()).isEmpty();
        SaltPublishHello hello = SaltPublishHello.open(frame.body(), aes, SaltLimits.UNAUTHENTICATED);
        assertThat(hello.id()).isEqualTo("vec-minion-1");
        assertThat(SaltRsa.x931Verify(SaltVectors.pub("minion1"), "salt".getBytes(), hello.tok()))
                .isTrue();
        assertThat(hello.tok())
                .isEqualTo(viewBytes(v.get("load_decrypted").get("view").get("tok")));
        assertThatThrownBy(() -> SaltPublishHello.open(frame.body(), Crypticle.generate(), SaltLimits.UNAUTHENTICATED))
                .isInstanceOf(CryptoException.class);
        SaltPublishHello again = SaltPublishHello.open(hello.seal(aes), aes, SaltLimits.UNAUTHENTICATED);
        assertThat(again.id()).isEqualTo("vec-minion-1");
    }
}

package io.brine.protocol.salt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.testing.SaltVectors;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class SaltRequestsTest {

    private static final HexFormat HEX = HexFormat.of();

    @Test
    void everyRecordedAuthRequestDecodesAndReEncodesByteForByte() throws Exception {
        int checked = 0;
        for (String path : SaltVectors.named("auth-")) {
            JsonNode req = SaltVectors.vector(path).get("request");
            JsonNode view = req.get("view");
            SaltRequest.Auth auth = (SaltRequest.Auth) SaltRequest.decode(SaltVectors.payload(req));
            SaltAuthRequest load = auth.load();
            JsonNode lv = view.get("load");
            assertThat(auth.version()).isEqualTo(view.get("version").asInt());
            assertThat(load.id()).isEqualTo(lv.get("id").asText());
            assertThat(load.nonce()).isEqualTo(lv.get("nonce").asText());
            assertThat(load.pub()).isEqualTo(lv.get("pub").asText());
            assertThat(load.encryption().orElseThrow().wireName())
                    .isEqualTo(lv.get("enc_algo").asText());
            assertThat(load.signing().orElseThrow().wireName())
                    .isEqualTo(lv.get("sig_algo").asText());
            assertThat(load.token().isPresent()).isEqualTo(lv.has("token"));
            if (lv.has("token")) {
                byte[] token = SaltRsa.decrypt(
                        SaltVectors.pair("master").getPrivate(),
                        load.encryption().get(),
                        load.token().get());
                assertThat(new String(token, StandardCharsets.US_ASCII))
                        .isEqualTo(req.get("token_plaintext").asText());
            }
            SaltValue again = SaltValue.Map.builder()
                    .put("enc", "clear")
                    .put("load", load.encode())
                    .put("version", auth.version())
                    .build();
            byte[] expected = SaltVectors.wire(req);
            byte[] actual = SaltVectors.encodeLike(req, again);
            if (path.contains("auth-1e") && SaltVectors.isTcp(path)) {
                // Crafted by the recorders' own script, in the payload dialect (no str8).
                SaltTcpFrame frame = SaltTcpFrame.decode(expected, SaltLimits.SESSION);
                actual = SaltMsgpack.write(
                        SaltValue.Map.builder()
                                .put("head", frame.head())
                                .put("body", again)
                                .build(),
                        SaltDialect.PAYLOAD);
            }
            assertThat(HEX.formatHex(actual)).as(path).isEqualTo(HEX.formatHex(expected));
            checked++;
        }
        assertThat(checked).isEqualTo(23);
    }

    @Test
    void everyRecordedSessionRequestOpensWithItsSessionKeyAndCarriesAValidTok() throws Exception {
        int checked = 0;
        for (String path : SaltVectors.all()) {
            JsonNode req = SaltVectors.vector(path).path("request");
            if (!req.has("load_decrypted")) {
                continue;
            }
            SaltRequest.Encrypted enc = (SaltRequest.Encrypted) SaltRequest.decode(SaltVectors.payload(req));
            assertThat(enc.id()).isEqualTo("vec-minion-1");
            assertThat(enc.version()).isEqualTo(3);
            Crypticle session =
                    Crypticle.of(req.get("load_decrypted").get("key_string").asText());
            SaltSessionRequest opened = SaltSessionRequest.open(enc, session, SaltLimits.SESSION);
            JsonNode view = req.get("load_decrypted").get("view");
            assertThat(opened.id()).isEqualTo("vec-minion-1");
            assertThat(opened.nonce()).isEqualTo(view.get("nonce").asText());
            assertThat(opened.ts()).isEqualTo(view.get("ts").asLong());
            assertThat(opened.command().cmd()).isEqualTo(view.get("cmd").asText());
            assertThat(SaltRsa.x931Verify(SaltVectors.pub("minion1"), "salt".getBytes(), opened.tok()))
                    .isTrue();
            if (opened.command() instanceof SaltCommand.Return r) {
                assertThat(r.jid()).isEqualTo(view.get("jid").asText());
                assertThat(r.fun()).isEqualTo(view.get("fun").asText());
                assertThat(r.retcode()).contains(0L);
                assertThat(r.success()).contains(true);
                if (r.fun().equals("test.ping")) {
                    assertThat(r.ret()).isEqualTo(SaltValue.bool(true));
                }
            } else if (opened.command() instanceof SaltCommand.MinionEvent e) {
                assertThat(e.tag()).contains("minion_start");
            } else if (opened.command() instanceof SaltCommand.RegisterResources rr) {
                assertThat(rr.resources()).isEqualTo(SaltValue.Map.builder().build());
            } else {
                throw new AssertionError(path + ": " + opened.command());
            }
            assertThat(HEX.formatHex(SaltVectors.encodeLike(req, enc.encode())))
                    .as(path)
                    .isEqualTo(HEX.formatHex(SaltVectors.wire(req)));
            Crypticle other = Crypticle.generate();
            assertThatThrownBy(() -> SaltSessionRequest.open(enc, other, SaltLimits.SESSION))
                    .isInstanceOf(CryptoException.class);
            checked++;
        }
        assertThat(checked).isEqualTo(21);
    }

    @Test
    void aLoadWhoseIdIsNotTheEnvelopesIsRefused() throws Exception {
        Crypticle session = Crypticle.generate();
        byte[] sealed = SaltSessionRequest.seal(
                session,
                SaltValue.Map.builder()
                        .put("cmd", "_return")
                        .put("jid", "1")
                        .put("fun", "test.ping")
                        .put("return", true)
                        .build(),
                "web2",
                "0".repeat(32),
                1,
                new byte[] {1});
        SaltRequest.Encrypted asWeb1 = new SaltRequest.Encrypted("web1", sealed, 3, "OAEP-SHA1", "PKCS1v15-SHA1");
        assertThatThrownBy(() -> SaltSessionRequest.open(asWeb1, session, SaltLimits.SESSION))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("not the envelope's");
        SaltRequest.Encrypted asWeb2 = new SaltRequest.Encrypted("web2", sealed, 3, "OAEP-SHA1", "PKCS1v15-SHA1");
        assertThat(SaltSessionRequest.open(asWeb2, session, SaltLimits.SESSION).command())
                .isInstanceOf(SaltCommand.Return.class);
    }

    @Test
    void aReturnWithAJidBrineCannotFileIsRefused() throws Exception {
        Crypticle session = Crypticle.generate();
        for (String jid : new String[] {"../../etc/passwd", "", "-x", "a".repeat(65)}) {
            byte[] sealed = SaltSessionRequest.seal(
                    session,
                    SaltValue.Map.builder()
                            .put("cmd", "_return")
                            .put("jid", jid)
                            .put("fun", "test.ping")
                            .put("return", true)
                            .build(),
                    "web1",
                    "0".repeat(32),
                    1,
                    new byte[] {1});
            SaltRequest.Encrypted request = new SaltRequest.Encrypted("web1", sealed, 3, "OAEP-SHA1", "PKCS1v15-SHA1");
            assertThatThrownBy(() -> SaltSessionRequest.open(request, session, SaltLimits.SESSION))
                    .as(jid)
                    .isInstanceOf(MalformedException.class)
                    .hasMessageStartingWith("jid: ");
        }
    }

    @Test
    void everyRecordedRequestReadsAsItArrives() throws Exception {
        for (String path : SaltVectors.all()) {
            JsonNode req = SaltVectors.vector(path).path("request");
            if (!req.has("payload_b64") && !req.has("tcp_stream_b64")) {
                continue;
            }
            byte[] wire = SaltVectors.wire(req);
            SaltRequest r = SaltVectors.isTcp(path)
                    ? SaltTcpFrame.decodeRequest(wire, 0, wire.length).request()
                    : SaltRequest.read(wire, 0, wire.length);
            assertThat(r.version())
                    .as(path)
                    .isEqualTo(req.get("view").get("version").asInt());
        }
    }

    @Test
    void aRequestOverTheUnauthenticatedSizeIsReadOnlyAsAFlatAesEnvelope() throws Exception {
        byte[] big = new byte[100_000];
        SaltRequest.Encrypted aes = new SaltRequest.Encrypted("web1", big, 3, "OAEP-SHA1", "PKCS1v15-SHA1");
        byte[] zmq = SaltMsgpack.write(aes.encode(), SaltDialect.PAYLOAD);
        assertThat(SaltRequest.read(zmq, 0, zmq.length)).isInstanceOf(SaltRequest.Encrypted.class);
        SaltValue.Map head = SaltValue.Map.builder().put("mid", "m1").build();
        byte[] tcp = SaltTcpFrame.encode(new SaltTcpFrame(head, aes.encode()));
        SaltTcpFrame.Request request = SaltTcpFrame.decodeRequest(tcp, 0, tcp.length);
        assertThat(request.request()).isInstanceOf(SaltRequest.Encrypted.class);
        assertThat(request.frame().mid()).contains("m1");

        SaltValue.Builder grains = SaltValue.Map.builder();
        for (int i = 0; i < 5_000; i++) {
            grains.put("grain" + i, "value" + i);
        }
        SaltValue.Map load = SaltValue.Map.builder()
                .put("cmd", "_auth")
                .put("id", "web1")
                .put("nonce", "0123456789abcdef0123456789abcdef")
                .put("autosign_grains", grains.build())
                .put("pub", "P")
                .build();
        SaltValue clear = SaltValue.Map.builder()
                .put("enc", "clear")
                .put("load", load)
                .put("version", 3)
                .build();
        byte[] bigClear = SaltMsgpack.write(clear, SaltDialect.PAYLOAD);
        assertThat(bigClear.length).isGreaterThan(SaltLimits.UNAUTHENTICATED.maxBytes());
        assertThatThrownBy(() -> SaltRequest.read(bigClear, 0, bigClear.length))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("nested deeper than 1");
        byte[] bigClearTcp = SaltTcpFrame.encode(new SaltTcpFrame(head, clear));
        assertThatThrownBy(() -> SaltTcpFrame.decodeRequest(bigClearTcp, 0, bigClearTcp.length))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("nested deeper than 2");
    }

    @Test
    void theClearPublishOfTheSaltCliIsAClearRequest() throws Exception {
        for (String path : SaltVectors.named("cli-publish")) {
            SaltRequest r = SaltRequest.decode(
                    SaltVectors.payload(SaltVectors.vector(path).get("request")));
            assertThat(r).isInstanceOf(SaltRequest.Clear.class);
            assertThat(((SaltRequest.Clear) r).cmd()).isEqualTo("publish");
        }
    }

    @Test
    void malformedRequestsAreRefusedWithTheFieldNamed() {
        String nonce = "0123456789abcdef0123456789abcdef";
        SaltValue.Map goodLoad = SaltValue.Map.builder()
                .put("cmd", "_auth")
                .put("id", "web1")
                .put("nonce", nonce)
                .put("pub", "PEM")
                .build();
        Object[][] cases = {
            {SaltValue.str("bad"), "request: expected a map"},
            {SaltValue.Map.builder().put("load", goodLoad).build(), "enc: missing"},
            {SaltValue.Map.builder().put("enc", "rsa").put("load", goodLoad).build(), "enc: neither"},
            {SaltValue.Map.builder().put("enc", "clear").put("load", "x").build(), "load: expected a map"},
            {
                SaltValue.Map.builder()
                        .put("enc", "clear")
                        .put("load", goodLoad)
                        .put("version", "3")
                        .build(),
                "version: expected an integer"
            },
            {
                SaltValue.Map.builder()
                        .put("enc", "clear")
                        .put("load", goodLoad)
                        .put("version", -1)
                        .build(),
                "version: -1"
            },
            {
                clear(SaltValue.Map.builder()
                        .put("cmd", "_auth")
                        .put("nonce", nonce)
                        .put("pub", "P")
                        .build()),
                "id: missing"
            },
            {
                clear(SaltValue.Map.builder()
                        .put("cmd", "_auth")
                        .put("id", "a\u0000b")
                        .put("nonce", nonce)
                        .put("pub", "P")
                        .build()),
                "id: contains a NUL"
            },
            {
                clear(SaltValue.Map.builder()
                        .put("cmd", "_auth")
                        .put("id", "web1")
                        .put("nonce", "ABC")
                        .put("pub", "P")
                        .build()),
                "nonce: not 32"
            },
            {
                clear(SaltValue.Map.builder()
                        .put("cmd", "_auth")
                        .put("id", "web1")
                        .put("nonce", nonce)
                        .put("pub", "P")
                        .put("token", 5)
                        .build()),
                "token: expected bytes"
            },
            {
                clear(SaltValue.Map.builder()
                        .put("cmd", "_auth")
                        .put("id", "web1")
                        .put("nonce", nonce)
                        .put("pub", "P")
                        .put("autosign_grains", "x")
                        .build()),
                "autosign_grains: expected a map"
            },
            {
                clear(SaltValue.Map.builder()
                        .put("cmd", "_auth")
                        .put("id", new SaltValue.Raw(new byte[] {(byte) 0xff}))
                        .put("nonce", nonce)
                        .put("pub", "P")
                        .build()),
                "id: not valid UTF-8"
            },
            {SaltValue.Map.builder().put("enc", "aes").put("load", new byte[64]).build(), "id: missing"},
            {
                SaltValue.Map.builder()
                        .put("enc", "aes")
                        .put("id", "web1")
                        .put("load", 1)
                        .build(),
                "load: expected bytes"
            },
            {
                SaltValue.Map.builder()
                        .put("enc", "aes")
                        .put("id", "../web1")
                        .put("load", new byte[64])
                        .build(),
                "id: not a valid minion id"
            },
            {
                SaltValue.Map.builder()
                        .put("enc", "aes")
                        .put("id", "Web1")
                        .put("load", new byte[64])
                        .build(),
                "id: not a valid minion id"
            },
        };
        for (Object[] c : cases) {
            assertThatThrownBy(() -> SaltRequest.decode((SaltValue) c[0]))
                    .as((String) c[1])
                    .isInstanceOf(MalformedException.class)
                    .hasMessageContaining((String) c[1]);
        }
    }

    @Test
    void unknownAlgorithmsDecodeSoTheMasterCanAnswerAsSaltDoes() throws Exception {
        SaltValue req = clear(SaltValue.Map.builder()
                .put("cmd", "_auth")
                .put("id", "web1")
                .put("nonce", "0123456789abcdef0123456789abcdef")
                .put("enc_algo", "OAEP-SHA256")
                .put("pub", "P")
                .build());
        SaltAuthRequest load = ((SaltRequest.Auth) SaltRequest.decode(req)).load();
        assertThat(load.encryption()).isEmpty();
        assertThat(load.signing()).contains(SaltRsa.Signing.PKCS1V15_SHA1);
        assertThat(load.version()).isEqualTo(3);
    }

    private static SaltValue clear(SaltValue.Map load) {
        return SaltValue.Map.builder()
                .put("enc", "clear")
                .put("load", load)
                .put("version", 3)
                .build();
    }
}

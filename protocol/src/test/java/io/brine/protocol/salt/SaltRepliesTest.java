package io.brine.protocol.salt;

import static io.brine.protocol.testing.SaltVectors.b64;
import static io.brine.protocol.testing.SaltVectors.viewBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.testing.SaltVectors;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.util.HexFormat;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SaltRepliesTest {

    private static final HexFormat HEX = HexFormat.of();
    private static final PrivateKey MASTER = SaltVectors.pair("master").getPrivate();

    /** The reply a recorded auth exchange got, rebuilt from its parts (OAEP is randomized: its outputs are reused). */
    private static SaltAuthReply rebuilt(String path) {
        JsonNode v = SaltVectors.vector(path);
        JsonNode reply = v.get("reply");
        if (reply.get("view").isTextual()) {
            return new SaltAuthReply.BadLoad();
        }
        JsonNode load = reply.get("load_view");
        SaltRsa.Signing signing = SaltRsa.Signing.named(
                        v.get("request").get("view").get("load").get("sig_algo").asText())
                .orElseThrow();
        String nonce = load.get("nonce").asText();
        if (load.has("ret")) {
            return new SaltAuthReply.Answer(SaltValue.bool(load.get("ret").asBoolean()), nonce, signing);
        }
        return new SaltAuthReply.Accepted(
                load.get("pub_key").asText(),
                load.get("publish_port").asInt(),
                load.has("token") ? Optional.of(viewBytes(load.get("token"))) : Optional.empty(),
                viewBytes(load.get("aes")),
                viewBytes(load.get("session")),
                viewBytes(load.get("sig")),
                nonce,
                signing);
    }

    @Test
    void everyRecordedAuthReplyIsReproducedByteForByte() {
        int checked = 0;
        for (String path : SaltVectors.named("auth-")) {
            JsonNode reply = SaltVectors.vector(path).get("reply");
            byte[] actual = SaltVectors.encodeLike(reply, rebuilt(path).encode(MASTER));
            assertThat(HEX.formatHex(actual)).as(path).isEqualTo(HEX.formatHex(SaltVectors.wire(reply)));
            checked++;
        }
        assertThat(checked).isEqualTo(23);
    }

    @Test
    void theMinionSideCheckAcceptsEveryRecordedReplyAsARealMinionDid() throws Exception {
        for (String path : SaltVectors.named("auth-")) {
            JsonNode v = SaltVectors.vector(path);
            JsonNode req = v.get("request");
            JsonNode lv = req.get("view").get("load");
            Optional<byte[]> token = req.has("token_plaintext")
                    ? Optional.of(req.get("token_plaintext").asText().getBytes(StandardCharsets.US_ASCII))
                    : Optional.empty();
            String key = path.contains("1c-") || path.contains("1d-") ? "minion2" : "minion1";
            Optional<RSAPublicKey> pinned =
                    token.isPresent() ? Optional.of(SaltVectors.pub("master")) : Optional.empty();
            SaltSignIn.Outcome outcome = SaltSignIn.check(
                    SaltVectors.payload(v.get("reply")),
                    lv.get("nonce").asText(),
                    token,
                    SaltVectors.pair(key).getPrivate(),
                    SaltRsa.Encryption.named(lv.get("enc_algo").asText()).orElseThrow(),
                    SaltRsa.Signing.named(lv.get("sig_algo").asText()).orElseThrow(),
                    pinned,
                    SaltLimits.SESSION);
            String name = path.substring(path.indexOf('/') + 1);
            if (name.startsWith("auth-1a")) {
                assertThat(outcome).as(path).isInstanceOf(SaltSignIn.Waiting.class);
            } else if (name.startsWith("auth-1b")) {
                SaltSignIn.Accepted a = (SaltSignIn.Accepted) outcome;
                assertThat(a.aes().keyString())
                        .isEqualTo(v.get("derived").get("aes_plaintext").asText());
                assertThat(a.session().keyString())
                        .isEqualTo(v.get("derived").get("session_plaintext").asText());
                assertThat(a.publishPort())
                        .isEqualTo(v.get("reply")
                                .get("load_view")
                                .get("publish_port")
                                .asInt());
                assertThat(a.master()).isEqualTo(SaltVectors.pub("master"));
            } else if (name.startsWith("auth-1e")) {
                assertThat(outcome).as(path).isInstanceOf(SaltSignIn.BadLoad.class);
            } else {
                assertThat(outcome).as(path).isInstanceOf(SaltSignIn.Refused.class);
            }
        }
    }

    @Test
    void theMinionSideCheckRefusesWhatAStockMinionRefuses() {
        String path = "3008.2-zeromq/auth-1b-accepted-token";
        JsonNode v = SaltVectors.vector(path);
        String nonce = v.get("request").get("view").get("load").get("nonce").asText();
        byte[] token = v.get("request").get("token_plaintext").asText().getBytes(StandardCharsets.US_ASCII);
        SaltValue reply = SaltVectors.payload(v.get("reply"));
        PrivateKey minion = SaltVectors.pair("minion1").getPrivate();
        SaltRsa.Encryption enc = SaltRsa.Encryption.OAEP_SHA1;
        SaltRsa.Signing sig = SaltRsa.Signing.PKCS1V15_SHA1;
        Optional<RSAPublicKey> master = Optional.of(SaltVectors.pub("master"));
        assertThatThrownBy(() -> SaltSignIn.check(
                        reply, "0".repeat(32), Optional.of(token), minion, enc, sig, master, SaltLimits.SESSION))
                .isInstanceOf(CryptoException.class)
                .hasMessageContaining("nonce");
        assertThatThrownBy(() -> SaltSignIn.check(
                        reply, nonce, Optional.of("other".getBytes()), minion, enc, sig, master, SaltLimits.SESSION))
                .isInstanceOf(CryptoException.class)
                .hasMessageContaining("token");
        assertThatThrownBy(() -> SaltSignIn.check(
                        reply,
                        nonce,
                        Optional.of(token),
                        minion,
                        enc,
                        sig,
                        Optional.of(SaltVectors.pub("minion2")),
                        SaltLimits.SESSION))
                .isInstanceOf(CryptoException.class)
                .hasMessageContaining("master key has changed");
        assertThatThrownBy(() -> SaltSignIn.check(
                        reply,
                        nonce,
                        Optional.of(token),
                        minion,
                        enc,
                        SaltRsa.Signing.PKCS1V15_SHA224,
                        master,
                        SaltLimits.SESSION))
                .isInstanceOf(CryptoException.class)
                .hasMessageContaining("signature");
        SaltValue.Map env = (SaltValue.Map) reply;
        byte[] load = env.get("load").orElseThrow().bytes().orElseThrow();
        load[load.length - 40] ^= 1;
        SaltValue tampered = SaltValue.Map.builder()
                .put("enc", "clear")
                .put("load", load)
                .put("sig", env.get("sig").orElseThrow())
                .build();
        assertThatThrownBy(() -> SaltSignIn.check(
                        tampered, nonce, Optional.of(token), minion, enc, sig, master, SaltLimits.SESSION))
                .isInstanceOf(CryptoException.class);
    }

    @Test
    void everyRecordedSessionReplyIsReproducedByteForByteAndOpensWithTheRequestsNonce() throws Exception {
        int checked = 0;
        for (String path : SaltVectors.all()) {
            JsonNode reply = SaltVectors.vector(path).path("reply");
            if (!reply.has("decrypted")) {
                continue;
            }
            JsonNode d = reply.get("decrypted");
            Crypticle session = Crypticle.of(d.get("key_string").asText());
            String nonce = d.get("embedded_nonce").asText();
            SaltValue value = SaltMsgpack.read(b64(d.get("msgpack_b64")), SaltLimits.SESSION);
            byte[] blob = session.encrypt(Crypticle.plaintext(value, nonce), b64(d.get("iv_b64")));
            byte[] actual = SaltVectors.encodeLike(reply, SaltValue.bin(blob));
            assertThat(HEX.formatHex(actual)).as(path).isEqualTo(HEX.formatHex(SaltVectors.wire(reply)));
            assertThat(SaltReplies.openSealed(SaltVectors.payload(reply), session, nonce, SaltLimits.SESSION))
                    .isEqualTo(value);
            SaltValue fresh = SaltReplies.sealed(session, nonce, value);
            assertThat(SaltReplies.openSealed(fresh, session, nonce, SaltLimits.SESSION))
                    .isEqualTo(value);
            checked++;
        }
        assertThat(checked).isEqualTo(21);
    }

    @Test
    void recordedPillarRepliesOpenAndTheirSignedDataIsReproduced() throws Exception {
        int checked = 0;
        for (String path : SaltVectors.named("req-pillar")) {
            JsonNode v = SaltVectors.vector(path);
            JsonNode reply = v.get("reply");
            JsonNode pr = reply.get("private_reply");
            SaltRsa.Encryption enc =
                    SaltRsa.Encryption.named(pr.get("key_alg").asText()).orElseThrow();
            SaltRsa.Signing sig =
                    path.endsWith("sha224") ? SaltRsa.Signing.PKCS1V15_SHA224 : SaltRsa.Signing.PKCS1V15_SHA1;
            String nonce = pr.get("data_view").get("nonce").asText();
            SaltValue pillar = SaltReplies.openPrivately(
                    SaltVectors.payload(reply),
                    "pillar",
                    nonce,
                    SaltVectors.pair("minion1").getPrivate(),
                    enc,
                    SaltVectors.pub("master"),
                    sig,
                    SaltLimits.SESSION);
            assertThat(pillar).isEqualTo(SaltValue.Map.builder().build());
            // data = dumps({key, pillar, nonce}) and its signature, byte for byte.
            byte[] key = viewBytes(pr.get("data_view").get("key"));
            byte[] data = SaltMsgpack.write(
                    SaltValue.Map.builder()
                            .put("key", key)
                            .put("pillar", pillar)
                            .put("nonce", nonce)
                            .build(),
                    SaltDialect.PAYLOAD);
            JsonNode pd = pr.get("pillar_decrypted");
            assertThat(data).isEqualTo(viewBytes(pd.get("view").get("data")));
            assertThat(SaltRsa.sign(MASTER, sig, data))
                    .isEqualTo(viewBytes(pd.get("view").get("sig")));
            assertThatThrownBy(() -> SaltReplies.openPrivately(
                            SaltVectors.payload(reply),
                            "pillar",
                            "f".repeat(32),
                            SaltVectors.pair("minion1").getPrivate(),
                            enc,
                            SaltVectors.pub("master"),
                            sig,
                            SaltLimits.SESSION))
                    .isInstanceOf(CryptoException.class)
                    .hasMessageContaining("nonce");
            checked++;
        }
        assertThat(checked).isEqualTo(6);
    }

    @Test
    void aPrivateReplyMadeHereOpensAsAMinionOpensIt() throws Exception {
        SaltValue pillar = SaltValue.Map.builder().put("role", "web").build();
        String nonce = "abcdef0123456789abcdef0123456789";
        for (SaltRsa.Encryption enc : SaltRsa.Encryption.values()) {
            for (SaltRsa.Signing sig : SaltRsa.Signing.values()) {
                SaltValue reply =
                        SaltReplies.privately("pillar", pillar, nonce, SaltVectors.pub("minion1"), enc, MASTER, sig);
                assertThat(SaltReplies.openPrivately(
                                reply,
                                "pillar",
                                nonce,
                                SaltVectors.pair("minion1").getPrivate(),
                                enc,
                                SaltVectors.pub("master"),
                                sig,
                                SaltLimits.SESSION))
                        .isEqualTo(pillar);
                assertThatThrownBy(() -> SaltReplies.openPrivately(
                                reply,
                                "pillar",
                                nonce,
                                SaltVectors.pair("minion1").getPrivate(),
                                enc,
                                SaltVectors.pub("minion2"),
                                sig,
                                SaltLimits.SESSION))
                        .isInstanceOf(CryptoException.class)
                        .hasMessageContaining("signature");
            }
        }
    }
}

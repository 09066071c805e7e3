package io.brine.protocol.salt;

import static io.brine.protocol.testing.SaltVectors.b64;
import static io.brine.protocol.testing.SaltVectors.viewBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.SaltVectors;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class SaltCryptoTest {

    private static final HexFormat HEX = HexFormat.of();

    /** Every Crypticle object of every vector (key string, IV, MAC, plaintext, blob length). */
    private static List<JsonNode> crypticles() {
        List<JsonNode> found = new ArrayList<>();
        for (String path : SaltVectors.all()) {
            collect(SaltVectors.vector(path), found);
        }
        return found;
    }

    private static void collect(JsonNode node, List<JsonNode> out) {
        if (node.has("key_string") && node.has("plaintext_b64")) {
            out.add(node);
        }
        node.elements().forEachRemaining(child -> {
            if (child.isContainerNode()) {
                collect(child, out);
            }
        });
    }

    @Test
    void reEncryptingEveryRecordedPlaintextWithItsIvReproducesTheRecordedBlob() throws Exception {
        List<JsonNode> all = crypticles();
        assertThat(all).hasSizeGreaterThan(60);
        for (JsonNode c : all) {
            Crypticle key = Crypticle.of(c.get("key_string").asText());
            byte[] plaintext = b64(c.get("plaintext_b64"));
            byte[] blob = key.encrypt(plaintext, b64(c.get("iv_b64")));
            assertThat(blob).hasSize(c.get("blob_len").asInt());
            assertThat(Arrays.copyOfRange(blob, blob.length - 32, blob.length)).isEqualTo(b64(c.get("hmac_b64")));
            assertThat(key.decrypt(blob)).isEqualTo(plaintext);
        }
    }

    @Test
    void recordedRequestsAndRepliesDecryptAndLoadWithTheirNonces() throws Exception {
        int checked = 0;
        for (String path : SaltVectors.all()) {
            JsonNode v = SaltVectors.vector(path);
            JsonNode req = v.path("request");
            if (req.has("load_decrypted")) {
                JsonNode d = req.get("load_decrypted");
                Crypticle session = Crypticle.of(d.get("key_string").asText());
                SaltValue load = session.loads(viewBytes(req.get("view").get("load")), null, SaltLimits.SESSION);
                assertThat(SaltMsgpack.write(load, SaltDialect.PAYLOAD)).isEqualTo(b64(d.get("msgpack_b64")));
                checked++;
            }
            JsonNode rep = v.path("reply");
            if (rep.has("decrypted")) {
                JsonNode d = rep.get("decrypted");
                Crypticle session = Crypticle.of(d.get("key_string").asText());
                byte[] blob = viewBytes(rep.get("view"));
                String nonce = d.get("embedded_nonce").asText();
                SaltValue value = session.loads(blob, nonce, SaltLimits.SESSION);
                assertThat(SaltMsgpack.write(value, SaltDialect.PAYLOAD)).isEqualTo(b64(d.get("msgpack_b64")));
                String other = "0".repeat(32);
                assertThatThrownBy(() -> session.loads(blob, other, SaltLimits.SESSION))
                        .isInstanceOf(CryptoException.class)
                        .hasMessageContaining("nonce");
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(40);
    }

    @Test
    void aCrypticleRefusesAnotherKeysBlobATamperedBlobAndBadKeyStrings() throws Exception {
        Crypticle a = Crypticle.generate();
        Crypticle b = Crypticle.generate();
        byte[] blob = a.dumps(SaltValue.str("hello"), null);
        assertThat(a.loads(blob, null, SaltLimits.SESSION)).isEqualTo(SaltValue.str("hello"));
        assertThatThrownBy(() -> b.decrypt(blob))
                .isInstanceOf(CryptoException.class)
                .hasMessage("message authentication failed");
        byte[] tampered = blob.clone();
        tampered[20] ^= 1;
        assertThatThrownBy(() -> a.decrypt(tampered)).isInstanceOf(CryptoException.class);
        assertThatThrownBy(() -> a.decrypt(new byte[63])).isInstanceOf(CryptoException.class);
        assertThatThrownBy(() -> a.decrypt(new byte[65])).isInstanceOf(CryptoException.class);
        assertThatThrownBy(() -> Crypticle.of("x".repeat(75))).isInstanceOf(CryptoException.class);
        assertThatThrownBy(() -> Crypticle.of("!".repeat(76))).isInstanceOf(CryptoException.class);
        byte[] noPrefix = a.encrypt("pickle:x".getBytes(StandardCharsets.US_ASCII));
        assertThatThrownBy(() -> a.loads(noPrefix, null, SaltLimits.SESSION)).isInstanceOf(MalformedException.class);
        assertThat(a.toString()).doesNotContain(a.keyString());
        assertThat(a.keyString()).hasSize(76);
    }

    @Test
    void authTokensAesAndSessionKeysUnwrapWithTheAlgorithmTheMinionNamed() throws Exception {
        int checked = 0;
        for (String path : SaltVectors.named("auth-1b")) {
            JsonNode v = SaltVectors.vector(path);
            JsonNode load = v.get("request").get("view").get("load");
            SaltRsa.Encryption enc =
                    SaltRsa.Encryption.named(load.get("enc_algo").asText()).orElseThrow();
            if (load.has("token")) {
                byte[] token =
                        SaltRsa.decrypt(SaltVectors.pair("master").getPrivate(), enc, viewBytes(load.get("token")));
                assertThat(new String(token, StandardCharsets.US_ASCII))
                        .isEqualTo(v.get("request").get("token_plaintext").asText());
            }
            JsonNode inner = v.get("reply").get("load_view");
            JsonNode derived = v.get("derived");
            var minion = SaltVectors.pair("minion1").getPrivate();
            assertThat(new String(SaltRsa.decrypt(minion, enc, viewBytes(inner.get("aes"))), StandardCharsets.US_ASCII))
                    .isEqualTo(derived.get("aes_plaintext").asText());
            assertThat(new String(
                            SaltRsa.decrypt(minion, enc, viewBytes(inner.get("session"))), StandardCharsets.US_ASCII))
                    .isEqualTo(derived.get("session_plaintext").asText());
            SaltRsa.Encryption other =
                    enc == SaltRsa.Encryption.OAEP_SHA1 ? SaltRsa.Encryption.OAEP_SHA224 : SaltRsa.Encryption.OAEP_SHA1;
            assertThatThrownBy(() -> SaltRsa.decrypt(minion, other, viewBytes(inner.get("aes"))))
                    .isInstanceOf(CryptoException.class);
            checked++;
        }
        assertThat(checked).isEqualTo(11);
    }

    @Test
    void everyAuthReplySignatureIsRecomputedByteForByte() {
        int checked = 0;
        for (String path : SaltVectors.named("auth-1")) {
            JsonNode reply = SaltVectors.vector(path).get("reply");
            if (!reply.has("sig_b64")) {
                continue;
            }
            String sigAlgo = SaltVectors.vector(path)
                    .get("request")
                    .get("view")
                    .get("load")
                    .get("sig_algo")
                    .asText();
            SaltRsa.Signing algorithm = SaltRsa.Signing.named(sigAlgo).orElseThrow();
            byte[] load = b64(reply.get("load_b64"));
            byte[] sig = SaltRsa.sign(SaltVectors.pair("master").getPrivate(), algorithm, load);
            assertThat(sig).as(path).isEqualTo(b64(reply.get("sig_b64")));
            assertThat(SaltRsa.verify(SaltVectors.pub("master"), algorithm, load, sig))
                    .isTrue();
            assertThat(SaltRsa.verify(SaltVectors.pub("minion1"), algorithm, load, sig))
                    .isFalse();
            checked++;
        }
        assertThat(checked).isEqualTo(20);
    }

    @Test
    void everyPublicationSignatureCoversTheEncryptedLoadAndIsRecomputed() {
        int checked = 0;
        for (String path : SaltVectors.named("publish-")) {
            JsonNode env = SaltVectors.vector(path).get("envelope_view");
            SaltRsa.Signing algorithm =
                    SaltRsa.Signing.named(env.get("sig_algo").asText()).orElseThrow();
            byte[] sig = SaltRsa.sign(SaltVectors.pair("master").getPrivate(), algorithm, viewBytes(env.get("load")));
            assertThat(sig).as(path).isEqualTo(viewBytes(env.get("sig")));
            checked++;
        }
        assertThat(checked).isEqualTo(15);
    }

    @Test
    void x931MatchesEveryRecordedCaseBothWays() throws Exception {
        for (JsonNode c : SaltVectors.json("x931.json").get("cases")) {
            String key = c.get("private_key").asText().replace("keys/", "").replace(".pem", "");
            byte[] input = c.get("input_ascii").asText().getBytes(StandardCharsets.US_ASCII);
            byte[] expected = b64(c.get("expected_output_b64"));
            assertThat(SaltRsa.x931Sign(SaltVectors.pair(key).getPrivate(), input))
                    .as(c.get("name").asText())
                    .isEqualTo(expected);
            assertThat(SaltRsa.x931Recover(SaltVectors.pub(key), expected)).isEqualTo(input);
            assertThat(SaltRsa.x931Verify(SaltVectors.pub(key), input, expected))
                    .isTrue();
            if (c.has("aes_plaintext")) {
                byte[] digest = MessageDigest.getInstance("SHA-256")
                        .digest(c.get("aes_plaintext").asText().getBytes(StandardCharsets.US_ASCII));
                assertThat(HEX.formatHex(digest)).isEqualTo(c.get("input_ascii").asText());
            }
        }
    }

    @Test
    void x931RefusesOtherKeysAndNonSignatures() {
        byte[] tok = SaltRsa.x931Sign(SaltVectors.pair("minion1").getPrivate(), "salt".getBytes());
        assertThat(SaltRsa.x931Verify(SaltVectors.pub("minion2"), "salt".getBytes(), tok))
                .isFalse();
        assertThat(SaltRsa.x931Verify(SaltVectors.pub("minion1"), "salr".getBytes(), tok))
                .isFalse();
        assertThatThrownBy(() -> SaltRsa.x931Recover(SaltVectors.pub("minion1"), new byte[255]))
                .isInstanceOf(CryptoException.class);
        byte[] ones = new byte[256];
        Arrays.fill(ones, (byte) 0xff);
        assertThatThrownBy(() -> SaltRsa.x931Recover(SaltVectors.pub("minion1"), ones))
                .isInstanceOf(CryptoException.class);
        assertThatThrownBy(() -> SaltRsa.x931Recover(SaltVectors.pub("minion1"), new byte[256]))
                .isInstanceOf(CryptoException.class);
    }

    @Test
    void algorithmNamesAreSaltsAndNothingElse() {
        assertThat(SaltRsa.Encryption.named("OAEP-SHA224")).contains(SaltRsa.Encryption.OAEP_SHA224);
        assertThat(SaltRsa.Signing.named("PKCS1v15-SHA1")).contains(SaltRsa.Signing.PKCS1V15_SHA1);
        assertThat(SaltRsa.Encryption.named("OAEP-SHA256")).isEmpty();
        assertThat(SaltRsa.Signing.named("pkcs1v15-sha1")).isEmpty();
    }

    @Test
    void theWireFormOfAKeyIsSaltsCleanKeyOfItsFile() {
        String masterFile = SaltVectors.text("keys/master.pub");
        JsonNode reply = SaltVectors.vector("3008.2-zeromq/auth-1b-accepted-first")
                .get("reply")
                .get("load_view");
        assertThat(SaltPem.wireForm(SaltVectors.pub("master")))
                .isEqualTo(reply.get("pub_key").asText())
                .isEqualTo(SaltPem.cleanKey(masterFile))
                .hasSize(450);
        String pub = SaltVectors.vector("3008.2-zeromq/auth-1a-pending")
                .get("request")
                .get("view")
                .get("load")
                .get("pub")
                .asText();
        assertThat(SaltPem.wireForm(SaltVectors.pub("minion1"))).isEqualTo(pub);
        assertThat(SaltPem.sameKey(
                        masterFile.replace("\n", "\r\n"), reply.get("pub_key").asText()))
                .isTrue();
        assertThat(SaltPem.sameKey(masterFile, pub)).isFalse();
    }

    @Test
    void fingerprintsFollowPemFinger() throws Exception {
        String file = SaltVectors.text("keys/master.pub");
        String[] lines = file.split("\n");
        String body = String.join("\n", Arrays.copyOfRange(lines, 1, lines.length - 1)) + "\n";
        String expected = SaltPem.textFinger(body);
        assertThat(SaltPem.fileFinger(file)).isEqualTo(expected).matches("([0-9a-f]{2}:){31}[0-9a-f]{2}");
        assertThat(SaltPem.fileFinger(file.replace("\n", "\r\n"))).isEqualTo(expected);
        assertThat(SaltPem.fileFinger("\n" + file + "\n\n")).isEqualTo(expected);
        assertThat(SaltPem.textFinger(file)).isNotEqualTo(expected);
        assertThat(expected).isEqualTo(Fingerprints.of(SaltVectors.pub("master")));
    }
}

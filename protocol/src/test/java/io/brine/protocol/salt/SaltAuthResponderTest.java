package io.brine.protocol.salt;

import static io.brine.protocol.testing.SaltVectors.viewBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.testing.SaltVectors;
import io.brine.protocol.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.util.HexFormat;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SaltAuthResponderTest {

    private static final HexFormat HEX = HexFormat.of();
    private static final KeyPair MASTER = SaltVectors.pair("master");

    private static SaltRequest.Auth request(String path) throws Exception {
        return (SaltRequest.Auth)
                SaltRequest.decode(SaltVectors.payload(SaltVectors.vector(path).get("request")));
    }

    private static SaltAuthResponder responder(String path) throws Exception {
        JsonNode v = SaltVectors.vector(path);
        Crypticle aes = v.has("derived") && v.get("derived").has("aes_plaintext")
                ? Crypticle.of(v.get("derived").get("aes_plaintext").asText())
                : Crypticle.generate();
        return new SaltAuthResponder(MASTER, aes, 34505);
    }

    @Test
    void everyRecordedRefusalPendingAndBadLoadIsReproducedByteForByte() throws Exception {
        int checked = 0;
        for (String path : SaltVectors.named("auth-1")) {
            if (path.contains("auth-1b")) {
                continue;
            }
            SaltAuthResponder.Decision decision = path.contains("1a-")
                    ? SaltAuthResponder.Decision.PENDING
                    : path.contains("1c-") ? SaltAuthResponder.Decision.REJECTED : SaltAuthResponder.Decision.DENIED;
            SaltAuthReply reply = responder(path).respond(request(path), decision, Crypticle.generate());
            JsonNode recorded = SaltVectors.vector(path).get("reply");
            byte[] actual = SaltVectors.encodeLike(recorded, reply.encode(MASTER.getPrivate()));
            assertThat(HEX.formatHex(actual)).as(path).isEqualTo(HEX.formatHex(SaltVectors.wire(recorded)));
            checked++;
        }
        assertThat(checked).isEqualTo(12);
    }

    @Test
    void everyAcceptedReplyIsAcceptedByTheMinionSideCheckWithTheRecordedMinionKey() throws Exception {
        int checked = 0;
        for (String path : SaltVectors.named("auth-1b")) {
            JsonNode v = SaltVectors.vector(path);
            SaltRequest.Auth request = request(path);
            Crypticle session =
                    Crypticle.of(v.get("derived").get("session_plaintext").asText());
            SaltAuthResponder responder = responder(path);
            SaltAuthReply.Accepted reply =
                    (SaltAuthReply.Accepted) responder.respond(request, SaltAuthResponder.Decision.ACCEPTED, session);
            byte[] bytes = SaltVectors.encodeLike(v.get("reply"), reply.encode(MASTER.getPrivate()));
            SaltValue wire = SaltVectors.isTcp(path)
                    ? SaltTcpFrame.decode(bytes, SaltLimits.SESSION).body()
                    : SaltMsgpack.read(bytes, SaltLimits.SESSION);
            Optional<byte[]> token = request.load().token().isPresent()
                    ? Optional.of(
                            v.get("request").get("token_plaintext").asText().getBytes(StandardCharsets.US_ASCII))
                    : Optional.empty();
            Optional<RSAPublicKey> pinned =
                    token.isPresent() ? Optional.of(SaltVectors.pub("master")) : Optional.empty();
            SaltSignIn.Accepted accepted = (SaltSignIn.Accepted) SaltSignIn.check(
                    wire,
                    request.load().nonce(),
                    token,
                    SaltVectors.pair("minion1").getPrivate(),
                    request.load().encryption().orElseThrow(),
                    request.load().signing().orElseThrow(),
                    pinned,
                    SaltLimits.SESSION);
            assertThat(accepted.aes()).isEqualTo(responder.aes());
            assertThat(accepted.session()).isEqualTo(session);
            assertThat(accepted.publishPort()).isEqualTo(34505);
            // What is deterministic is what the real master sent: the key, the X9.31 sig, the nonce, the field order.
            JsonNode recorded = v.get("reply").get("load_view");
            assertThat(reply.pubKey()).isEqualTo(recorded.get("pub_key").asText());
            assertThat(reply.sig()).isEqualTo(viewBytes(recorded.get("sig")));
            assertThat(reply.nonce()).isEqualTo(recorded.get("nonce").asText());
            assertThat(reply.token().isPresent()).isEqualTo(recorded.has("token"));
            SaltValue.Map load = (SaltValue.Map) SaltMsgpack.read(
                    ((SaltValue.Map) wire).get("load").orElseThrow().bytes().orElseThrow(), SaltLimits.SESSION);
            assertThat(load.textKeys()).containsExactlyElementsOf(() -> recorded.fieldNames());
            checked++;
        }
        assertThat(checked).isEqualTo(11);
    }

    /**
     * master_sign_pubkey (SALT.md 4.1): every recorded accepted request (SHA-1 and SHA-224, with and without a
     * token) gets a pub_sig, made beforehand by the signing key, that a minion with verify_master_pubkey_sign checks as
     * salt/crypt.py does: it takes the master's new key in place of the one it cached (a rotation), and refuses it
     * without the switch, with another signing key, or when the master sends no pub_sig.
     */
    @Test
    void aPubSigMadeOfflineLetsAMinionThatVerifiesItFollowANewMasterKeyAndNoOtherMinion() throws Exception {
        KeyPair signer = TestKeys.pair(0);
        RSAPublicKey cachedBefore = (RSAPublicKey) TestKeys.pair(1).getPublic();
        SaltPubkeySignature pubSig = SaltPubkeySignature.sign(signer.getPrivate(), MASTER.getPublic());
        assertThat(SaltPubkeySignature.parse(pubSig.text())).isEqualTo(pubSig);
        int checked = 0;
        for (String path : SaltVectors.named("auth-1b")) {
            SaltRequest.Auth request = request(path);
            SaltRsa.Signing signing = request.load().signing().orElseThrow();
            Optional<byte[]> token = request.load().token().isPresent()
                    ? Optional.of(SaltVectors.vector(path)
                            .get("request")
                            .get("token_plaintext")
                            .asText()
                            .getBytes(StandardCharsets.US_ASCII))
                    : Optional.empty();
            SaltAuthResponder signed = new SaltAuthResponder(MASTER, Crypticle.generate(), 34505, Optional.of(pubSig));
            SaltValue reply = signed.respond(request, SaltAuthResponder.Decision.ACCEPTED, Crypticle.generate())
                    .encode(MASTER.getPrivate());
            SaltSignIn.Accepted accepted = (SaltSignIn.Accepted) SaltSignIn.check(
                    reply,
                    request.load().nonce(),
                    token,
                    SaltVectors.pair("minion1").getPrivate(),
                    request.load().encryption().orElseThrow(),
                    signing,
                    Optional.of(cachedBefore),
                    SaltLimits.SESSION,
                    Optional.of(signer.getPublic()));
            assertThat(accepted.master()).as(path).isEqualTo(MASTER.getPublic());
            assertThatThrownBy(() -> SaltSignIn.check(
                            reply,
                            request.load().nonce(),
                            token,
                            SaltVectors.pair("minion1").getPrivate(),
                            request.load().encryption().orElseThrow(),
                            signing,
                            Optional.of(cachedBefore),
                            SaltLimits.SESSION,
                            Optional.of(TestKeys.pair(2).getPublic())))
                    .as(path)
                    .isInstanceOf(CryptoException.class)
                    .hasMessageContaining("verification failed");
            assertThatThrownBy(() -> SaltSignIn.check(
                            reply,
                            request.load().nonce(),
                            token,
                            SaltVectors.pair("minion1").getPrivate(),
                            request.load().encryption().orElseThrow(),
                            signing,
                            Optional.of((RSAPublicKey) MASTER.getPublic()),
                            SaltLimits.SESSION,
                            Optional.empty()))
                    .as(path)
                    .isInstanceOf(CryptoException.class)
                    .hasMessageContaining("not enabled on the minion");
            SaltValue unsigned = new SaltAuthResponder(MASTER, Crypticle.generate(), 34505)
                    .respond(request, SaltAuthResponder.Decision.ACCEPTED, Crypticle.generate())
                    .encode(MASTER.getPrivate());
            assertThatThrownBy(() -> SaltSignIn.check(
                            unsigned,
                            request.load().nonce(),
                            token,
                            SaltVectors.pair("minion1").getPrivate(),
                            request.load().encryption().orElseThrow(),
                            signing,
                            Optional.of(cachedBefore),
                            SaltLimits.SESSION,
                            Optional.of(signer.getPublic())))
                    .as(path)
                    .isInstanceOf(CryptoException.class)
                    .hasMessageContaining("did not send");
            checked++;
        }
        assertThat(checked).isEqualTo(11);
        // Refusals carry no key and no pub_sig, as Salt's.
        SaltRequest.Auth pending = request("3008.2-zeromq/auth-1a-pending");
        assertThat(new SaltAuthResponder(MASTER, Crypticle.generate(), 34505, Optional.of(pubSig))
                        .respond(pending, SaltAuthResponder.Decision.PENDING, Crypticle.generate()))
                .isInstanceOf(SaltAuthReply.Answer.class);
    }

    @Test
    void aVersion2RequestGetsSaltsBareBadLoadWhateverTheDecision() throws Exception {
        for (String path : SaltVectors.named("auth-1e")) {
            SaltAuthReply reply =
                    responder(path).respond(request(path), SaltAuthResponder.Decision.ACCEPTED, Crypticle.generate());
            assertThat(reply).isInstanceOf(SaltAuthReply.BadLoad.class);
            JsonNode recorded = SaltVectors.vector(path).get("reply");
            assertThat(SaltVectors.encodeLike(recorded, reply.encode(MASTER.getPrivate())))
                    .isEqualTo(SaltVectors.wire(recorded));
        }
    }

    @Test
    void anIdBrineDoesNotAcceptIsRefusedEvenWhenTheStoreSaysAccepted() throws Exception {
        SaltRequest.Auth request = withLoad(request("3008.2-zeromq/auth-1a-pending"), "id", "Vec-Minion-1");
        SaltAuthReply reply = responder("3008.2-zeromq/auth-1a-pending")
                .respond(request, SaltAuthResponder.Decision.ACCEPTED, Crypticle.generate());
        assertThat(reply)
                .isEqualTo(SaltAuthReply.Answer.refused(request.load().nonce(), SaltRsa.Signing.PKCS1V15_SHA1));
    }

    @Test
    void unknownAlgorithmsGetSaltsUnsignedAnswers() throws Exception {
        SaltAuthResponder responder = responder("3008.2-zeromq/auth-1a-pending");
        SaltRequest.Auth badSig = withLoad(request("3008.2-zeromq/auth-1a-pending"), "sig_algo", "PSS-SHA256");
        assertThat(responder.respond(badSig, SaltAuthResponder.Decision.PENDING, Crypticle.generate()))
                .isEqualTo(new SaltAuthReply.BadAlgorithm("bad sig algo"));
        SaltRequest.Auth badEnc = withLoad(request("3008.2-zeromq/auth-1a-pending"), "enc_algo", "OAEP-SHA256");
        assertThat(responder.respond(badEnc, SaltAuthResponder.Decision.ACCEPTED, Crypticle.generate()))
                .isEqualTo(new SaltAuthReply.BadAlgorithm("bad enc algo"));
        assertThat(responder.respond(badEnc, SaltAuthResponder.Decision.PENDING, Crypticle.generate()))
                .isInstanceOf(SaltAuthReply.Answer.class);
        SaltValue encoded = new SaltAuthReply.BadAlgorithm("bad enc algo").encode(MASTER.getPrivate());
        assertThat(SaltSignIn.check(
                        encoded,
                        "0".repeat(32),
                        Optional.empty(),
                        MASTER.getPrivate(),
                        SaltRsa.Encryption.OAEP_SHA1,
                        SaltRsa.Signing.PKCS1V15_SHA1,
                        Optional.empty(),
                        SaltLimits.SESSION))
                .isEqualTo(new SaltSignIn.BadAlgorithm("bad enc algo"));
    }

    @Test
    void aFullMasterSaysSoSigned() throws Exception {
        String path = "3008.2-zeromq/auth-1b-accepted-token";
        SaltRequest.Auth request = request(path);
        SaltValue wire = responder(path)
                .respond(request, SaltAuthResponder.Decision.FULL, Crypticle.generate())
                .encode(MASTER.getPrivate());
        assertThat(SaltSignIn.check(
                        wire,
                        request.load().nonce(),
                        Optional.empty(),
                        SaltVectors.pair("minion1").getPrivate(),
                        SaltRsa.Encryption.OAEP_SHA1,
                        SaltRsa.Signing.PKCS1V15_SHA1,
                        Optional.of(SaltVectors.pub("master")),
                        SaltLimits.SESSION))
                .isInstanceOf(SaltSignIn.Full.class);
    }

    @Test
    void aTokenThatDoesNotDecryptIsLeftOutAndTheMinionRefusesTheReplyAsWithSalt() throws Exception {
        String path = "3008.2-zeromq/auth-1b-accepted-token";
        SaltRequest.Auth request = request(path);
        SaltRequest.Auth forged = withLoad(
                request,
                "token",
                SaltValue.bin(
                        SaltRsa.encrypt(SaltVectors.pub("minion2"), SaltRsa.Encryption.OAEP_SHA1, "x".getBytes())));
        SaltAuthReply.Accepted reply = (SaltAuthReply.Accepted)
                responder(path).respond(forged, SaltAuthResponder.Decision.ACCEPTED, Crypticle.generate());
        assertThat(reply.token()).isEmpty();
        byte[] token = SaltVectors.vector(path)
                .get("request")
                .get("token_plaintext")
                .asText()
                .getBytes(StandardCharsets.US_ASCII);
        assertThatThrownBy(() -> SaltSignIn.check(
                        reply.encode(MASTER.getPrivate()),
                        request.load().nonce(),
                        Optional.of(token),
                        SaltVectors.pair("minion1").getPrivate(),
                        SaltRsa.Encryption.OAEP_SHA1,
                        SaltRsa.Signing.PKCS1V15_SHA1,
                        Optional.of(SaltVectors.pub("master")),
                        SaltLimits.SESSION))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("token");
    }

    @Test
    void aReplyForAnotherMinionsKeyIsUselessToThisOne() throws Exception {
        String path = "3008.2-zeromq/auth-1b-accepted-first";
        SaltRequest.Auth request = request(path);
        SaltValue wire = responder(path)
                .respond(request, SaltAuthResponder.Decision.ACCEPTED, Crypticle.generate())
                .encode(MASTER.getPrivate());
        assertThatThrownBy(() -> SaltSignIn.check(
                        wire,
                        request.load().nonce(),
                        Optional.empty(),
                        SaltVectors.pair("minion2").getPrivate(),
                        SaltRsa.Encryption.OAEP_SHA1,
                        SaltRsa.Signing.PKCS1V15_SHA1,
                        Optional.empty(),
                        SaltLimits.SESSION))
                .isInstanceOf(CryptoException.class);
    }

    /** {@code request} with one load field replaced (or added). */
    private static SaltRequest.Auth withLoad(SaltRequest.Auth request, String field, Object value) throws Exception {
        SaltValue v = value instanceof SaltValue sv ? sv : SaltValue.str((String) value);
        SaltValue.Map load = request.load().encode();
        SaltValue.Builder b = SaltValue.Map.builder();
        boolean replaced = false;
        for (SaltValue.Entry e : load.entries()) {
            String key = e.key().text().orElseThrow();
            if (key.equals(field)) {
                b.put(key, v);
                replaced = true;
            } else {
                b.put(key, e.value());
            }
        }
        if (!replaced) {
            b.put(field, v);
        }
        return (SaltRequest.Auth) SaltRequest.decode(SaltValue.Map.builder()
                .put("enc", "clear")
                .put("load", b.build())
                .put("version", request.version())
                .build());
    }
}

package io.brine.protocol.salt;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.testing.SaltVectors;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Damaged recordings, fed to every decoder a master or minion runs on what a peer sends: each ends in a value or in
 * a {@link MalformedException} or {@link CryptoException}, never in another exception.
 */
class SaltDecoderFuzzTest {

    private interface Decoder {
        void decode(byte[] bytes) throws MalformedException, CryptoException;
    }

    @Test
    void damagedRequestsRepliesAndPublicationsEndInTypedExceptions() throws Exception {
        List<byte[]> requests = new ArrayList<>();
        List<byte[]> authReplies = new ArrayList<>();
        List<byte[]> publications = new ArrayList<>();
        for (String path : SaltVectors.all()) {
            JsonNode v = SaltVectors.vector(path);
            if (v.path("request").has("payload_b64") || v.path("request").has("tcp_stream_b64")) {
                requests.add(SaltVectors.wire(v.get("request")));
            }
            if (path.contains("/auth-1b") && !SaltVectors.isTcp(path)) {
                authReplies.add(SaltVectors.wire(v.get("reply")));
            }
            if (v.has("envelope_b64")) {
                publications.add(SaltVectors.b64(v.get("envelope_b64")));
            }
        }
        Crypticle session = Crypticle.of(SaltVectors.vector("3008.2-zeromq/return-test.ping")
                .get("request")
                .get("load_decrypted")
                .get("key_string")
                .asText());
        Decoder request = bytes -> {
            SaltValue payload = bytes[0] == (byte) 0x82 && bytes[1] == (byte) 0xa4
                    ? SaltTcpFrame.decode(bytes, SaltLimits.UNAUTHENTICATED).body()
                    : SaltMsgpack.read(bytes, SaltLimits.UNAUTHENTICATED);
            SaltRequest r = SaltRequest.decode(payload);
            if (r instanceof SaltRequest.Encrypted e) {
                SaltSessionRequest.open(e, session, SaltLimits.SESSION);
            }
        };
        Decoder authReply = bytes -> SaltSignIn.check(
                SaltMsgpack.read(bytes, SaltLimits.SESSION),
                "0".repeat(32),
                Optional.empty(),
                SaltVectors.pair("minion1").getPrivate(),
                SaltRsa.Encryption.OAEP_SHA1,
                SaltRsa.Signing.PKCS1V15_SHA1,
                Optional.empty(),
                SaltLimits.SESSION);
        Decoder publication =
                bytes -> SaltPublication.open(bytes, SaltVectors.pub("master"), session, 0, SaltLimits.SESSION);
        Random random = new Random(15);
        int decoded = fuzz(requests, request, random, 1_000)
                + fuzz(authReplies, authReply, random, 100)
                + fuzz(publications, publication, random, 500);
        assertThat(decoded).isPositive();
    }

    /** Damages each input {@code rounds} times (one to three bytes); returns how many still decoded. */
    private static int fuzz(List<byte[]> inputs, Decoder decoder, Random random, int rounds) {
        int decoded = 0;
        for (byte[] input : inputs) {
            for (int i = 0; i < rounds; i++) {
                byte[] copy = input.clone();
                for (int n = random.nextInt(3); n >= 0; n--) {
                    copy[random.nextInt(copy.length)] = (byte) random.nextInt(256);
                }
                try {
                    decoder.decode(copy);
                    decoded++;
                } catch (MalformedException | CryptoException expected) {
                    assertThat(expected.getMessage()).isNotBlank();
                }
            }
        }
        return decoded;
    }
}

package io.brine.protocol.codec;

import static io.brine.protocol.codec.Samples.hex;
import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.FrameType;
import io.brine.protocol.message.Message;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.TestKeys;
import java.security.KeyPair;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CodecRoundTripTest {

    private static final KeyPair MASTER = TestKeys.pair(0);
    private static final KeyPair MINION = TestKeys.pair(1);

    // Hand-derived from PROTOCOL.md: change these only together with the spec.
    private static final String AUTH_REQUEST_PAYLOAD = "98" + "01" + "a4776562 31" + "c404deadbeef"
            + "c420" + hex(Samples.NONCE) + "cf0000018bcfe56800"
            + "82 a26f73 a56c696e7578 a463707573 04" + "c0" + "a374306b";
    private static final String AUTH_REPLY_PAYLOAD = "98" + "01" + "00" + "c420" + hex(Samples.NONCE)
            + "cf0000018bcfe56800" + "c404cafebabe" + "a26f6b" + "00"
            + "96 c410" + hex(Samples.SID) + "03 c4020102 c4020304 cd1199 cd01f4";
    private static final String PUBLISH_PAYLOAD =
            "96 01 03 cd03e8 cf0000018bcfe56800 b4" + hex("20240101120000123456".getBytes()) + "c41c" + "aa".repeat(28);
    private static final String SESSION_UNKNOWN_PAYLOAD = "93 c410" + hex(Samples.SID) + "07 cf0000018bcfe56800";

    @Test
    void sessionFrameHasTheDocumentedBytes() {
        byte[] frame = Codec.encode(Samples.sessionFrame());
        assertThat(hex(frame)).isEqualTo(hex(hex("01 04 94 c410" + hex(Samples.SID) + "00 07 c41c" + "aa".repeat(28))));
    }

    @Test
    void authRequestFrameHasTheDocumentedLayout() {
        assertSignedLayout(Samples.authRequest(), MINION, "0101", AUTH_REQUEST_PAYLOAD);
    }

    @Test
    void authReplyFrameHasTheDocumentedLayout() {
        assertSignedLayout(Samples.authReplyAccepted(), MASTER, "0102", AUTH_REPLY_PAYLOAD);
    }

    @Test
    void publishFrameHasTheDocumentedLayout() {
        // Version 2: a Publish carries its issue time since then (PROTOCOL.md 11).
        assertSignedLayout(Samples.publish(), MASTER, "0203", PUBLISH_PAYLOAD);
    }

    @Test
    void sessionUnknownFrameHasTheDocumentedLayout() {
        assertSignedLayout(Samples.sessionUnknown(), MASTER, "0105", SESSION_UNKNOWN_PAYLOAD);
    }

    /** {@code header || 92 || c4 len payload || c5 0100 || 256-byte RSA-2048 signature}. */
    private static void assertSignedLayout(Message message, KeyPair signer, String header, String payloadHex) {
        byte[] payload = hex(payloadHex);
        assertThat(payload.length).isLessThan(256);
        byte[] frame = Codec.encodeSigned(message, signer.getPrivate());
        String expectedPrefix =
                hex(hex(header + "92 c4" + String.format("%02x", payload.length))) + hex(payload) + "c50100";
        assertThat(hex(frame)).startsWith(expectedPrefix);
        assertThat(frame).hasSize(expectedPrefix.length() / 2 + 256);
        Decoded.Ok ok = (Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_FRAME);
        assertThat(ok.signedPayload()).isEqualTo(payload);
        assertThat(ok.verify(signer.getPublic())).isTrue();
    }

    @Test
    void innerMessagesHaveTheDocumentedBytes() {
        List<SessionMessage> all = Samples.innerMessages();
        assertThat(hex(Codec.encodeInner(all.get(0))))
                .isEqualTo(hex(hex("0110 96 b4" + hex(Samples.JID.getBytes()) + "a9746573742e70696e67 c3 00 c3 0c")));
        assertThat(hex(Codec.encodeInner(all.get(2))))
                .isEqualTo(hex(hex("0111 91 82 a26f73 a56c696e7578 a469707634 91 a831302e302e302e31")));
        assertThat(hex(Codec.encodeInner(all.get(3)))).isEqualTo("01129104");
        assertThat(hex(Codec.encodeInner(all.get(4)))).isEqualTo("01139104");
        assertThat(hex(Codec.encodeInner(all.get(5)))).isEqualTo(hex(hex("0120 91 92 a26a31 a26a32")));
        assertThat(hex(Codec.encodeInner(all.get(6)))).isEqualTo("01219304c420" + "11".repeat(32) + "cd0384");
        assertThat(hex(Codec.encodeInner(all.get(7)))).isEqualTo("01229104");
    }

    @Test
    void publishLoadHasTheDocumentedBytes() {
        assertThat(hex(Codec.encodeLoad(Samples.load())))
                .isEqualTo(hex(hex(
                        "0130 97 a26a31 92 a4676c6f62 a12a a9746573742e70696e67 92 a161 01 81 a16b c0 1e a4726f6f74")));
    }

    @Test
    void everyOuterMessageRoundTrips() {
        assertRoundTrip(Codec.encode(Samples.sessionFrame()), Samples.sessionFrame());
        for (Message signed : List.of(
                Samples.authReplyAccepted(), Samples.authReplyPending(), Samples.publish(), Samples.sessionUnknown())) {
            assertRoundTrip(Codec.encodeSigned(signed, MASTER.getPrivate()), signed);
        }
        assertRoundTrip(Codec.encodeSigned(Samples.authRequest(), MINION.getPrivate()), Samples.authRequest());
        assertRoundTrip(Codec.encodeSigned(Samples.clientAuth(), MINION.getPrivate()), Samples.clientAuth());
    }

    @Test
    void aPublisherSessionCarriesNoPublishKey() {
        AuthReply reply = new AuthReply(
                Suite.RSA_OAEP_PSS_AES256GCM,
                AuthStatus.ACCEPTED,
                Samples.NONCE,
                Samples.TS,
                Samples.seq(294),
                "accepted",
                0,
                new AuthReply.Session(Samples.SID, 0, new byte[0], Samples.seq(256), 0, 0));
        assertRoundTrip(Codec.encodeSigned(reply, MASTER.getPrivate()), reply);
    }

    @Test
    void aRealisticAuthRequestRoundTripsAndVerifiesWithTheKeyItCarries() throws Exception {
        AuthRequest request = new AuthRequest(
                Suite.RSA_OAEP_PSS_AES256GCM,
                "db-01.eu.example.com",
                MINION.getPublic().getEncoded(),
                Samples.NONCE,
                Samples.TS,
                Samples.map(
                        "os",
                        "Debian",
                        "mem_mb",
                        16384L,
                        "roles",
                        List.of("db", "primary"),
                        "virtual",
                        false,
                        "load",
                        0.25,
                        "nothing",
                        null,
                        "nested",
                        Samples.map("a", Samples.map("b", List.of()))),
                Samples.hex("0badc0de"),
                null);
        byte[] frame = Codec.encodeSigned(request, MINION.getPrivate());
        Decoded.Ok ok = assertRoundTrip(frame, request);
        AuthRequest decoded = (AuthRequest) ok.message();
        assertThat(ok.verify(RsaKeys.publicKeyFromDer(decoded.publicKey()))).isTrue();
        assertThat(decoded.claims().keySet())
                .containsExactly("os", "mem_mb", "roles", "virtual", "load", "nothing", "nested");
    }

    @Test
    void everyInnerMessageRoundTrips() throws Exception {
        for (SessionMessage message : Samples.innerMessages()) {
            assertThat(Codec.decodeInner(Codec.encodeInner(message)))
                    .usingRecursiveComparison()
                    .withStrictTypeChecking()
                    .isEqualTo(message);
        }
    }

    @Test
    void theGenericValueRoundTripsEveryAllowedType() throws Exception {
        Map<String, Object> value = Samples.map(
                "nil",
                null,
                "t",
                true,
                "f",
                false,
                "min",
                Long.MIN_VALUE,
                "max",
                Long.MAX_VALUE,
                "neg",
                -33L,
                "pi",
                3.14159,
                "s",
                "zoë ✓ 𝄞",
                "empty",
                "",
                "bin",
                hex("00ff7f80"),
                "list",
                Arrays.asList(null, 1L, List.of(List.of())),
                "map",
                Samples.map("", Map.of()));
        SessionMessage.Return ret = new SessionMessage.Return("j1", "x.y", value, 0, true, 0);
        SessionMessage.Return decoded = (SessionMessage.Return) Codec.decodeInner(Codec.encodeInner(ret));
        assertThat(decoded).usingRecursiveComparison().withStrictTypeChecking().isEqualTo(ret);
        @SuppressWarnings("unchecked")
        Map<String, Object> decodedMap = (Map<String, Object>) decoded.returnValue();
        assertThat(decodedMap.keySet()).containsExactlyElementsOf(value.keySet());
    }

    @Test
    void nanAndInfinitiesSurvive() throws Exception {
        SessionMessage.Return ret = new SessionMessage.Return(
                "j1", "x.y", List.of(Double.NaN, Double.POSITIVE_INFINITY, -0.0d), 0, true, 0);
        SessionMessage.Return decoded = (SessionMessage.Return) Codec.decodeInner(Codec.encodeInner(ret));
        assertThat((List<?>) decoded.returnValue()).isEqualTo(ret.returnValue());
    }

    @Test
    void javaIntegersAndFloatsWidenToLongAndDouble() throws Exception {
        SessionMessage.Return ret =
                new SessionMessage.Return("j1", "x.y", List.of(1, (short) 2, (byte) 3, 1.5f), 0, true, 0);
        SessionMessage.Return decoded = (SessionMessage.Return) Codec.decodeInner(Codec.encodeInner(ret));
        assertThat((List<?>) decoded.returnValue()).isEqualTo(List.of(1L, 2L, 3L, 1.5d));
    }

    @Test
    void publishLoadRoundTrips() throws Exception {
        assertThat(Codec.decodeLoad(Codec.encodeLoad(Samples.load())))
                .usingRecursiveComparison()
                .withStrictTypeChecking()
                .isEqualTo(Samples.load());
    }

    @Test
    void decodedGenericContainersAreUnmodifiable() throws Exception {
        SessionMessage.Grains grains = (SessionMessage.Grains)
                Codec.decodeInner(Codec.encodeInner(new SessionMessage.Grains(Samples.map("ips", List.of("a")))));
        assertThat(grains.grains()).isUnmodifiable();
        assertThat((List<?>) grains.grains().get("ips")).isUnmodifiable();
    }

    @Test
    void maxFrameLengthIsSmallOnlyForAuthRequests() {
        assertThat(Codec.maxFrameLength(FrameType.AUTH_REQUEST)).isEqualTo(FrameLimits.MAX_UNAUTHENTICATED);
        assertThat(Codec.maxFrameLength(FrameType.SESSION)).isEqualTo(FrameLimits.MAX_FRAME);
    }

    private static Decoded.Ok assertRoundTrip(byte[] frame, Message expected) {
        Decoded decoded = Codec.decode(frame, FrameLimits.MAX_FRAME);
        assertThat(decoded).isInstanceOf(Decoded.Ok.class);
        Decoded.Ok ok = (Decoded.Ok) decoded;
        assertThat(ok.message())
                .usingRecursiveComparison()
                .withStrictTypeChecking()
                .isEqualTo(expected);
        assertThat(ok.signature() != null).isEqualTo(expected.type().signed());
        return ok;
    }
}

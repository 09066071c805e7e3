package io.brine.protocol.codec;

import static io.brine.protocol.codec.Samples.concat;
import static io.brine.protocol.codec.Samples.hex;
import static io.brine.protocol.codec.Samples.signedFrame;
import static io.brine.protocol.codec.Samples.unsignedFrame;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.FrameType;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.TestKeys;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class CodecMalformedTest {

    private static final PrivateKey MASTER = TestKeys.pair(0).getPrivate();
    private static final byte[] SIG = new byte[256];
    private static final String SID = "c410" + hex(Samples.SID);
    private static final String NONCE = "c420" + hex(Samples.NONCE);
    private static final String BOX = "c41c" + "aa".repeat(28);
    private static List<byte[]> validFrames;

    @BeforeAll
    static void signOnce() {
        validFrames = List.of(
                Codec.encode(Samples.sessionFrame()),
                Codec.encodeSigned(Samples.authRequest(), TestKeys.pair(1).getPrivate()),
                Codec.encodeSigned(Samples.authReplyAccepted(), MASTER),
                Codec.encodeSigned(Samples.authReplyPending(), MASTER),
                Codec.encodeSigned(Samples.publish(), MASTER),
                Codec.encodeSigned(Samples.sessionUnknown(), MASTER));
    }

    private static String malformed(byte[] frame) {
        return malformed(frame, FrameLimits.MAX_FRAME);
    }

    private static String malformed(byte[] frame, int max) {
        Decoded decoded = Codec.decode(frame, max);
        assertThat(decoded).isInstanceOf(Decoded.Malformed.class);
        String reason = ((Decoded.Malformed) decoded).reason();
        assertThat(reason).as("a recognised problem, not the last-resort catch").doesNotStartWith("undecodable");
        return reason;
    }

    /** A SESSION frame with this body (hex). */
    private static byte[] session(String body) {
        return unsignedFrame(FrameType.SESSION, hex(body));
    }

    /** An AUTH_REQUEST frame around this payload (hex), with a dummy signature. */
    private static byte[] authRequest(String payload) {
        return signedFrame(FrameType.AUTH_REQUEST, hex(payload), SIG);
    }

    /** The sample AuthRequest payload with {@code claims} (hex) in place of its claims. */
    private static String authRequestWithClaims(String claims) {
        return "98 01 a4776562 31 c404deadbeef" + NONCE + "cf0000018bcfe56800" + claims + "c0 c0";
    }

    private static byte[] authReply(String payload) {
        return signedFrame(FrameType.AUTH_REPLY, hex(payload), SIG);
    }

    // ---- the frame header

    @Test
    void noFrameAndTooShortFramesAreMalformed() {
        assertThat(malformed(null)).isEqualTo("no frame");
        assertThat(malformed(new byte[0])).contains("too short");
        assertThat(malformed(hex("01"))).contains("too short");
        assertThat(malformed(hex("0104"))).contains("too short");
    }

    @Test
    void anOversizedFrameIsRefusedBeforeItIsParsed() {
        byte[] garbage = new byte[101];
        garbage[0] = 9; // would be "unsupported version" if anything were parsed
        assertThat(malformed(garbage, 100)).isEqualTo("frame of 101 bytes exceeds the limit of 100");
        assertThat(Codec.decode(validFrames.get(0), validFrames.get(0).length)).isInstanceOf(Decoded.Ok.class);
        assertThat(malformed(validFrames.get(0), validFrames.get(0).length - 1)).contains("exceeds the limit");
    }

    @Test
    void anAuthRequestIsHeldToTheUnauthenticatedLimitWhateverTheCallerAllows() {
        byte[] big = new byte[FrameLimits.MAX_UNAUTHENTICATED + 1];
        big[0] = 1;
        big[1] = (byte) FrameType.AUTH_REQUEST.code();
        assertThat(malformed(big, FrameLimits.MAX_FRAME)).contains("AUTH_REQUEST frame of 65537 bytes exceeds");
    }

    @Test
    void wrongVersionsAreMalformed() {
        for (int version : new int[] {0, 2, 0xff}) {
            byte[] frame = validFrames.get(0).clone();
            frame[0] = (byte) version;
            assertThat(malformed(frame)).isEqualTo("frame: unsupported version " + version);
        }
    }

    @Test
    void unknownTypesAndInnerTypesAreNotFrameTypes() {
        for (int type : new int[] {0x00, 0x07, 0x10, 0x20, 0x22, 0x30, 0x7f, 0xff}) {
            byte[] frame = validFrames.get(0).clone();
            frame[1] = (byte) type;
            assertThat(malformed(frame)).isEqualTo("frame: unknown type 0x" + Integer.toHexString(type));
        }
    }

    @Test
    void everyTruncationOfEveryValidFrameIsMalformed() {
        for (byte[] frame : validFrames) {
            for (int length = 0; length < frame.length; length++) {
                malformed(Arrays.copyOf(frame, length));
            }
        }
    }

    @Test
    void trailingBytesAfterTheBodyAreMalformed() {
        for (byte[] frame : validFrames) {
            assertThat(malformed(concat(frame, hex("00")))).contains("1 trailing bytes");
        }
    }

    @Test
    void trailingBytesInsideASignedPayloadAreMalformed() {
        byte[] payload = concat(hex("93" + SID + "07 cf0000018bcfe56800"), hex("c0"));
        assertThat(malformed(signedFrame(FrameType.SESSION_UNKNOWN, payload, SIG)))
                .contains("trailing");
    }

    @Test
    void typeBytesSwappedBetweenFramesAreMalformed() {
        byte[] frame = validFrames.get(4).clone(); // a PUBLISH relabelled as AUTH_REPLY
        frame[0] = (byte) Codec.VERSION; // relabelled with the version of its new type too
        frame[1] = (byte) FrameType.AUTH_REPLY.code();
        assertThat(malformed(frame)).contains("AuthReply");
        byte[] session = validFrames.get(0).clone(); // an unsigned body read as a signed envelope
        session[0] = (byte) Codec.PUBLISH_VERSION;
        session[1] = (byte) FrameType.PUBLISH.code();
        assertThat(malformed(session)).contains("PUBLISH body: expected 2 items, got 4");
    }

    // ---- the signed envelope

    @Test
    void aSignedFrameNeedsExactlyPayloadAndSignature() {
        byte[] payload = hex("93" + SID + "07 cf0000018bcfe56800");
        byte[] one = new MsgWriter()
                .header(FrameType.SESSION_UNKNOWN.code())
                .array(1)
                .bin("p", payload)
                .toByteArray();
        assertThat(malformed(one)).isEqualTo("SESSION_UNKNOWN body: expected 2 items, got 1");
        byte[] three = new MsgWriter()
                .header(FrameType.SESSION_UNKNOWN.code())
                .array(3)
                .bin("p", payload)
                .bin("s", SIG)
                .bin("x", SIG)
                .toByteArray();
        assertThat(malformed(three)).contains("expected 2 items, got 3");
        assertThat(malformed(signedFrame(FrameType.SESSION_UNKNOWN, new byte[0], SIG)))
                .contains("payload: 0 bytes");
        assertThat(malformed(signedFrame(FrameType.SESSION_UNKNOWN, payload, new byte[1025])))
                .contains("signature: 1025 bytes");
        byte[] strSignature = concat(
                new MsgWriter()
                        .header(FrameType.SESSION_UNKNOWN.code())
                        .array(2)
                        .bin("p", payload)
                        .toByteArray(),
                hex("a3616263"));
        assertThat(malformed(strSignature)).contains("signature: expected bin, got str");
    }

    // ---- declared lengths and nesting

    @Test
    void hugeDeclaredLengthsAreRefusedWithoutAllocating() {
        assertThat(malformed(session("ddffffffff"))).contains("SESSION: invalid msgpack"); // array32 of 4 G
        assertThat(malformed(session("94 c6 7fffffff"))).contains("sessionId: 2147483647 bytes, expected 16");
        assertThat(malformed(session("94" + SID + "00 07 c6 7fffffff")))
                .isEqualTo("SessionFrame.box: declares 2147483647 bytes, more than the input holds");
        assertThat(malformed(session("94 c6 ffffffff"))).contains("SESSION: invalid msgpack"); // bin32 of 4 G
        assertThat(malformed(signedFrame(FrameType.AUTH_REQUEST, hex("98 01 db7ffffffe"), SIG)))
                .contains("AuthRequest.id: longer than 253 bytes");
        assertThat(malformed(authRequest(authRequestWithClaims("df7fffffff"))))
                .contains("AuthRequest.claims: declares 2147483647 items");
        assertThat(malformed(authRequest(authRequestWithClaims("81 a161 dd7fffffff"))))
                .contains("declares 2147483647 items");
        assertThat(malformed(authRequest(authRequestWithClaims("81 a161 db7fffffff"))))
                .contains("declares 2147483647 bytes");
        // The envelope's own payload length is checked against the frame too.
        assertThat(malformed(hex("0105 92 c6 7fffffff 00"))).contains("payload: declares 2147483647 bytes");
    }

    @Test
    void claimsNestedDeeperThan32AreMalformedAnd32AreFine() {
        assertThat(Codec.decode(authRequest(authRequestWithClaims(nestedMaps(32))), FrameLimits.MAX_FRAME))
                .isInstanceOf(Decoded.Ok.class);
        assertThat(malformed(authRequest(authRequestWithClaims(nestedMaps(33)))))
                .contains("nested deeper than 32");
    }

    /** {@code depth} maps, each the value of key "a" in the one around it. */
    private static String nestedMaps(int depth) {
        return "81a161".repeat(depth - 1) + "80";
    }

    @Test
    void aNestingBombIsMalformedWithoutOverflowingTheStack() throws Exception {
        byte[] bomb = concat(hex("0110 96 a26a31 a3782e79"), Samples.filled(500_000, 0x91), hex("90 00 c3 00"));
        assertThatThrownBy(() -> Codec.decodeInner(bomb))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("nested deeper than 32");
    }

    @Test
    void moreThanTheElementBudgetIsMalformed() {
        List<Object> nils = new ArrayList<>(Collections.nCopies(FieldLimits.MAX_VALUE_ELEMENTS, null));
        byte[] ok = Codec.encodeInner(new SessionMessage.Return("j1", "x.y", nils, 0, true, 0));
        // One more element than the budget, in a second list inside the same value.
        byte[] over = concat(
                hex("0110 96 a26a31 a3782e79 92"), Arrays.copyOfRange(ok, 10, ok.length - 3), hex("91c0 00 c3 00"));
        assertThatThrownBy(() -> Codec.decodeInner(over))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("more than " + FieldLimits.MAX_VALUE_ELEMENTS + " elements");
    }

    // ---- array shapes and types

    @Test
    void wrongArrayLengthsAreMalformed() {
        assertThat(malformed(session("93" + SID + "00 07"))).isEqualTo("SessionFrame: expected 4 items, got 3");
        assertThat(malformed(session("95" + SID + "00 07" + BOX + "c0"))).contains("expected 4 items, got 5");
        assertThat(malformed(authReply("98 01 00" + NONCE + "00 c401aa a0 00 95" + SID + "03 c40101 c40101 00")))
                .contains("AuthReply.session: expected 6 items, got 5");
        assertThat(malformed(session("80"))).contains("SessionFrame: expected array, got map");
    }

    @Test
    void fieldsOfTheWrongTypeAreMalformed() {
        assertThat(malformed(session("94 b0" + hex(Samples.SID) + "00 07" + BOX)))
                .contains("SessionFrame.sessionId: expected bin, got str");
        assertThat(malformed(session("94" + SID + "c2 07" + BOX))).contains("direction: expected int, got bool");
        assertThat(malformed(session("94" + SID + "00 cb3ff0000000000000" + BOX)))
                .contains("counter: expected int, got float");
        assertThat(malformed(session("94" + SID + "00 07 c0"))).contains("box: expected bin, got nil");
        assertThat(malformed(session("94" + SID + "00 07 c1"))).contains("reserved msgpack byte 0xc1");
    }

    @Test
    void integersOutOfRangeAreMalformed() {
        assertThat(malformed(session("94" + SID + "00 cfffffffffffffffff" + BOX)))
                .contains("integer out of range");
        assertThat(malformed(session("94" + SID + "00 ff" + BOX))).contains("counter: -1 is outside");
        assertThat(malformed(session("94" + SID + "00 00" + BOX))).contains("counter: 0 is outside");
        assertThat(malformed(session("94" + SID + "02 07" + BOX))).contains("direction: 2 is outside 0..1");
        String acceptedWithPort = "98 01 00" + NONCE + "00 c401aa a0 00 96" + SID + "03 c40101 c40101 %s 00";
        assertThat(malformed(authReply(String.format(acceptedWithPort, "ce00011170"))))
                .contains("Session.publishPort: 70000 is outside 0..65535");
        assertThat(malformed(authReply(String.format(acceptedWithPort, "ff")))).contains("publishPort: -1");
        assertThat(malformed(authReply("98 01 01" + NONCE + "00 c401aa a0 ff c0")))
                .contains("AuthReply.retryAfterSeconds: -1 is outside");
        assertThat(malformed(authReply("98 01 01" + NONCE + "ff c401aa a0 00 c0")))
                .contains("timestampMs: -1");
        assertThat(malformed(signedFrame(FrameType.PUBLISH, hex("96 01 ff 01 00 a26a31" + BOX), SIG)))
                .contains("Publish.generation: -1");
        assertThat(malformed(signedFrame(FrameType.PUBLISH, hex("96 01 00 01 ff a26a31" + BOX), SIG)))
                .contains("Publish.issuedMs: -1");
    }

    @Test
    void aPublishOfVersionOneWithoutItsIssueTimeIsMalformed() {
        // What a master before version 2 sent: the minion cannot tell its age, so it is not a publication to it.
        byte[] frame = signedFrame(FrameType.PUBLISH, hex("95 01 00 01 a26a31" + BOX), SIG);
        frame[0] = 1;
        assertThat(malformed(frame)).contains("unsupported version 1");
        frame = signedFrame(FrameType.PUBLISH, hex("96 01 00 01 00 a26a31" + BOX), SIG);
        assertThat(Codec.decode(frame, FrameLimits.MAX_FRAME)).isInstanceOf(Decoded.Ok.class);
        frame[0] = 1;
        assertThat(malformed(frame)).contains("unsupported version 1");
    }

    @Test
    void unknownSuitesStatusesAndTargetTypesAreMalformed() {
        assertThat(malformed(authReply("98 02 00" + NONCE + "00 c401aa a0 00 c0")))
                .contains("AuthReply.suite: unknown suite 2");
        assertThat(malformed(authReply("98 01 09" + NONCE + "00 c401aa a0 00 c0")))
                .contains("AuthReply.status: unknown code 9");
        byte[] load = hex("0130 97 a26a31 92 a3666f6f a12a a3782e79 90 80 00 a0");
        assertThatThrownBy(() -> Codec.decodeLoad(load)).hasMessageContaining("Target.type: not one of");
    }

    @Test
    void aSessionComesWithAcceptedAndOnlyThen() {
        assertThat(malformed(authReply("98 01 00" + NONCE + "00 c401aa a0 00 c0")))
                .contains("present with ACCEPTED and only then");
        assertThat(malformed(authReply("98 01 01" + NONCE + "00 c401aa a0 00 96" + SID + "03 c40101 c40101 00 00")))
                .contains("present with ACCEPTED and only then");
    }

    @Test
    void fixedLengthFieldsMustHaveTheirLength() {
        assertThat(malformed(session("94 c40f" + hex(Samples.SID).substring(2) + "00 07" + BOX)))
                .contains("SessionFrame.sessionId: 15 bytes, expected 16");
        assertThat(malformed(authRequest("98 01 a4776562 31 c404deadbeef c41f"
                        + hex(Samples.NONCE).substring(2) + "00 80 c0 c0")))
                .contains("AuthRequest.nonce: 31 bytes, expected 32");
        assertThat(malformed(session("94" + SID + "00 07 c41b" + "aa".repeat(27))))
                .contains("SessionFrame.box: 27 bytes, expected 28..");
        byte[] bigKey = new MsgWriter()
                .array(8)
                .integer(1)
                .str("id", "web1")
                .bin("k", new byte[2049])
                .bin("n", Samples.NONCE)
                .integer(0)
                .map(0)
                .nil()
                .nil()
                .toByteArray();
        assertThat(malformed(signedFrame(FrameType.AUTH_REQUEST, bigKey, SIG)))
                .contains("AuthRequest.publicKey: 2049 bytes, expected 1..2048");
        byte[] keyUpdate = hex("0121 93 04 c41f" + "11".repeat(31) + "00");
        assertThatThrownBy(() -> Codec.decodeInner(keyUpdate)).hasMessageContaining("publishKey: 31 bytes");
    }

    // ---- strings

    @Test
    void badUtf8IsMalformed() {
        // Invalid start byte, an overlong '/', an encoded surrogate (CESU-8).
        for (String bad : new String[] {"a2ff61", "a2c0af", "a3eda080"}) {
            assertThat(malformed(authRequest(authRequestWithClaims("81" + bad + "c0"))))
                    .contains("not valid UTF-8");
        }
        assertThat(malformed(authReply("98 01 01" + NONCE + "00 c401aa a2c0af 00 c0")))
                .contains("AuthReply.reason: not valid UTF-8");
    }

    @Test
    void invalidMinionIdsAreMalformed() {
        for (String id : new String[] {"Web1", "../x", "a..b", "-rf", "", "web 1", "x".repeat(64)}) {
            byte[] payload = new MsgWriter()
                    .array(8)
                    .integer(1)
                    .str("id", id)
                    .bin("k", hex("00"))
                    .bin("n", Samples.NONCE)
                    .integer(0)
                    .map(0)
                    .nil()
                    .nil()
                    .toByteArray();
            assertThat(malformed(signedFrame(FrameType.AUTH_REQUEST, payload, SIG)))
                    .startsWith("AuthRequest.id: id ");
        }
    }

    @Test
    void invalidJidsAreMalformed() {
        for (String jid : new String[] {"", "../etc", ".hidden", "a/b", "j 1", "x".repeat(65), "jé"}) {
            byte[] payload = new MsgWriter()
                    .array(6)
                    .integer(1)
                    .integer(1)
                    .integer(1)
                    .integer(1)
                    .str("jid", jid)
                    .bin("box", new byte[28])
                    .toByteArray();
            assertThat(malformed(signedFrame(FrameType.PUBLISH, payload, SIG))).contains("Publish.jid: ");
        }
    }

    @Test
    void textFieldsRefuseControlCharacters() {
        assertThat(malformed(authReply("98 01 01" + NONCE + "00 c401aa a3610a62 00 c0")))
                .contains("AuthReply.reason: control character at position 1");
        byte[] ret = hex("0110 96 a26a31 a3780079 c0 00 c3 00");
        assertThatThrownBy(() -> Codec.decodeInner(ret)).hasMessageContaining("Return.fun: control character");
        byte[] emptyFun = hex("0110 96 a26a31 a0 c0 00 c3 00");
        assertThatThrownBy(() -> Codec.decodeInner(emptyFun)).hasMessageContaining("Return.fun: empty");
    }

    // ---- the generic value

    @Test
    void extTypesNonStringKeysAndDuplicateKeysAreMalformed() {
        assertThat(malformed(authRequest(authRequestWithClaims("81 a161 d40100"))))
                .contains("msgpack ext types are not allowed");
        assertThat(malformed(authRequest(authRequestWithClaims("81 d6ff00000000 c0"))))
                .contains("ext"); // a timestamp is an ext type too
        assertThat(malformed(authRequest(authRequestWithClaims("81 01 c0"))))
                .contains("AuthRequest.claims key: expected str, got int");
        assertThat(malformed(authRequest(authRequestWithClaims("82 a161 01 a161 02"))))
                .contains("duplicate map key");
        assertThat(malformed(authRequest(authRequestWithClaims("81 a161 cfffffffffffffffff"))))
                .contains("integer out of range");
        assertThat(malformed(authRequest(authRequestWithClaims("c0")))).contains("expected map, got nil");
    }

    // ---- inner messages and loads

    @Test
    void innerMessagesCheckTheirHeader() {
        assertThatThrownBy(() -> Codec.decodeInner(hex("0104 9104"))).hasMessage("inner message: unknown type 0x4");
        assertThatThrownBy(() -> Codec.decodeInner(hex("0212 9104"))).hasMessageContaining("unsupported version 2");
        assertThatThrownBy(() -> Codec.decodeInner(hex("0112"))).hasMessageContaining("too short");
        assertThatThrownBy(() -> Codec.decodeInner(hex("0112 9104 00"))).hasMessageContaining("trailing");
        assertThatThrownBy(() -> Codec.decodeInner(null)).isInstanceOf(MalformedException.class);
        assertThatThrownBy(() -> Codec.decodeLoad(hex("0112 9104"))).hasMessageContaining("is not 0x30");
        assertThatThrownBy(() -> Codec.decodeLoad(hex("0130"))).hasMessageContaining("too short");
    }

    @Test
    void anAckWithTooManyJidsIsMalformed() {
        List<String> jids = Collections.nCopies(FieldLimits.MAX_ACK_JIDS, "j1");
        byte[] ok = Codec.encodeInner(new SessionMessage.Ack(jids));
        byte[] over = concat(hex("0120 91 dc1001"), Arrays.copyOfRange(ok, 6, ok.length), hex("a26a31"));
        assertThatThrownBy(() -> Codec.decodeInner(over)).hasMessageContaining("Ack.jids: more than 4096 items");
    }

    @Test
    void anAckCarriesItsJidsAndAtMostOneReason() throws Exception {
        // Without a reason, byte for byte the form minions before the reason field decode: [["j1"]].
        assertThat(Codec.encodeInner(new SessionMessage.Ack(List.of("j1")))).isEqualTo(hex("0120 91 91 a26a31"));
        assertThat(Codec.decodeInner(hex("0120 92 91 a26a31 a3626967")))
                .isEqualTo(new SessionMessage.Ack(List.of("j1"), "big"));
        assertThatThrownBy(() -> Codec.decodeInner(hex("0120 93 91 a26a31 a3626967 c0")))
                .hasMessageContaining("Ack: expected 1 to 2 items, got 3");
        assertThatThrownBy(() -> Codec.decodeInner(hex("0120 92 91 a26a31 a0"))).isInstanceOf(MalformedException.class);
        assertThatThrownBy(() -> Codec.decodeInner(hex("0120 92 91 a26a31 c0"))).isInstanceOf(MalformedException.class);
    }

    @Test
    void anAcksReasonIsMadeWhatTheDecoderTakes() throws Exception {
        // A control character would get the whole Ack dropped as malformed by the minion; so would 1,025 bytes.
        SessionMessage.Ack ack = new SessionMessage.Ack(List.of("j1"), "line one\nline\u0085two");
        assertThat(ack.reason()).isEqualTo("line one?line?two");
        assertThat(Codec.decodeInner(Codec.encodeInner(ack))).isEqualTo(ack);

        String euros = "\u20ac".repeat(400); // 3 bytes each: 1,200 bytes
        SessionMessage.Ack long_ = new SessionMessage.Ack(List.of("j1"), euros);
        assertThat(long_.reason()).isEqualTo("\u20ac".repeat(341)); // 1,023 bytes: one more would pass 1,024
        assertThat(Codec.decodeInner(Codec.encodeInner(long_))).isEqualTo(long_);
        String ascii = "x".repeat(1025);
        assertThat(new SessionMessage.Ack(List.of("j1"), ascii).reason()).hasSize(1024);
        assertThat(new SessionMessage.Ack(List.of("j1"), "").reason()).isNull();
    }

    // ---- the encoder refuses what the decoder would refuse

    @Test
    void encodeRefusesSignedTypesAndEncodeSignedRefusesUnsignedOnes() {
        assertThatThrownBy(() -> Codec.encode(Samples.publish()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("use encodeSigned");
        assertThatThrownBy(() -> Codec.encodeSigned(Samples.sessionFrame(), MASTER))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("use encode");
    }

    @Test
    void encodeRefusesInvalidFields() {
        AuthRequest badId = new AuthRequest(1, "Web1", hex("00"), Samples.NONCE, 0, Map.of(), null, null);
        assertThatThrownBy(() -> Codec.encodeSigned(badId, MASTER))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("AuthRequest.id");
        AuthRequest shortNonce = new AuthRequest(1, "web1", hex("00"), new byte[8], 0, Map.of(), null, null);
        assertThatThrownBy(() -> Codec.encodeSigned(shortNonce, MASTER)).hasMessageContaining("nonce: 8 bytes");
        AuthRequest nullId = new AuthRequest(1, null, hex("00"), Samples.NONCE, 0, Map.of(), null, null);
        assertThatThrownBy(() -> Codec.encodeSigned(nullId, MASTER)).hasMessage("AuthRequest.id is null");
        SessionFrame zeroCounter =
                new SessionFrame(Samples.SID, SessionFrame.Direction.MASTER_TO_MINION, 0, new byte[28]);
        assertThatThrownBy(() -> Codec.encode(zeroCounter)).hasMessageContaining("counter: 0 is outside");
        Publish badJid = new Publish(Suite.RSA_OAEP_PSS_AES256GCM, 1, 1, 0, "a/b", new byte[28]);
        assertThatThrownBy(() -> Codec.encodeSigned(badJid, MASTER)).hasMessageContaining("Publish.jid");
        AuthReply otherSuite = new AuthReply(7, AuthStatus.PENDING, Samples.NONCE, 0, hex("00"), "", 0, null);
        assertThatThrownBy(() -> Codec.encodeSigned(otherSuite, MASTER)).hasMessageContaining("unknown suite 7");
        PublishLoad badTarget =
                new PublishLoad("j1", new PublishLoad.Target("regex", "*"), "f", List.of(), Map.of(), 0, "");
        assertThatThrownBy(() -> Codec.encodeLoad(badTarget)).hasMessageContaining("Target.type");
    }

    @Test
    void encodeRefusesAnAuthRequestOverTheUnauthenticatedLimit() {
        AuthRequest big = new AuthRequest(
                1,
                "web1",
                hex("00"),
                Samples.NONCE,
                0,
                Map.of("blob", new byte[FrameLimits.MAX_UNAUTHENTICATED]),
                null,
                null);
        assertThatThrownBy(() -> Codec.encodeSigned(big, MASTER)).hasMessageContaining("exceed the limit of 65536");
    }

    @Test
    void encodeRefusesValuesOutsideTheGenericModel() {
        assertThatThrownBy(() -> Codec.encodeInner(new SessionMessage.Return("j1", "f", new Object(), 0, true, 0)))
                .hasMessageContaining("cannot encode a java.lang.Object");
        assertThatThrownBy(() -> Codec.encodeInner(new SessionMessage.Return("j1", "f", Map.of(1, 2), 0, true, 0)))
                .hasMessageContaining("map keys must be strings");
        assertThatThrownBy(() -> Codec.encodeInner(new SessionMessage.Return("j1", "f", "\ud800", 0, true, 0)))
                .hasMessageContaining("unpaired surrogate");
        List<Object> cyclic = new ArrayList<>();
        cyclic.add(cyclic);
        assertThatThrownBy(() -> Codec.encodeInner(new SessionMessage.Return("j1", "f", cyclic, 0, true, 0)))
                .hasMessageContaining("nested deeper than 32");
    }
}

package io.brine.protocol.codec;

import static io.brine.protocol.codec.Samples.hex;
import static io.brine.protocol.codec.Samples.signedFrame;
import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.FrameType;
import io.brine.protocol.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import org.junit.jupiter.api.Test;

class SignatureTest {

    private static final KeyPair MASTER = TestKeys.pair(0);
    private static final KeyPair OTHER = TestKeys.pair(2);
    private static final String SESSION_UNKNOWN_PAYLOAD = "93 c410" + hex(Samples.SID) + "07 cf0000018bcfe56800";

    private static Decoded.Ok ok(byte[] frame) {
        Decoded decoded = Codec.decode(frame, FrameLimits.MAX_FRAME);
        assertThat(decoded).isInstanceOf(Decoded.Ok.class);
        return (Decoded.Ok) decoded;
    }

    @Test
    void theSignatureCoversContextVersionTypeAndPayload() {
        byte[] payload = hex(SESSION_UNKNOWN_PAYLOAD);
        byte[] input = Codec.signatureInput(FrameType.SESSION_UNKNOWN, payload);
        assertThat(hex(input))
                .isEqualTo(hex("brine-sig-v1".getBytes(StandardCharsets.US_ASCII)) + "0105" + hex(payload));
        assertThat(hex(input)).startsWith("6272696e652d7369672d7631" + "0105");
        byte[] frame = signedFrame(FrameType.SESSION_UNKNOWN, payload, Rsa.sign(MASTER.getPrivate(), input));
        assertThat(ok(frame).verify(MASTER.getPublic())).isTrue();
    }

    @Test
    void aTamperedPayloadDoesNotVerify() {
        byte[] frame = Codec.encodeSigned(Samples.sessionUnknown(), MASTER.getPrivate());
        byte[] tampered = frame.clone();
        tampered[10] ^= 0x01; // 01 05 92 c4 len 93 c4 10 <session id>: inside the id, still well-formed
        Decoded.Ok decoded = ok(tampered);
        assertThat(decoded.message()).usingRecursiveComparison().isNotEqualTo(Samples.sessionUnknown());
        assertThat(decoded.verify(MASTER.getPublic())).isFalse();
    }

    @Test
    void aTamperedSignatureDoesNotVerify() {
        byte[] frame = Codec.encodeSigned(Samples.authReplyPending(), MASTER.getPrivate());
        frame[frame.length - 1] ^= 0x01;
        assertThat(ok(frame).verify(MASTER.getPublic())).isFalse();
    }

    @Test
    void anotherSignersSignatureDoesNotVerify() {
        byte[] frame = Codec.encodeSigned(Samples.publish(), OTHER.getPrivate());
        assertThat(ok(frame).verify(MASTER.getPublic())).isFalse();
        assertThat(ok(frame).verify(OTHER.getPublic())).isTrue();
    }

    @Test
    void aMissingSignatureIsWellFormedButNeverVerifies() {
        byte[] frame = signedFrame(FrameType.SESSION_UNKNOWN, hex(SESSION_UNKNOWN_PAYLOAD), new byte[0]);
        Decoded.Ok decoded = ok(frame);
        assertThat(decoded.signature()).isEmpty();
        assertThat(decoded.verify(MASTER.getPublic())).isFalse();
        assertThat(decoded.verify(null)).isFalse();
    }

    @Test
    void aSignatureMadeForAnotherTypeDoesNotVerify() {
        // The same payload bytes signed as if they were a different frame type.
        byte[] payload = hex(SESSION_UNKNOWN_PAYLOAD);
        byte[] wrongType = Rsa.sign(MASTER.getPrivate(), Codec.signatureInput(FrameType.PUBLISH, payload));
        assertThat(ok(signedFrame(FrameType.SESSION_UNKNOWN, payload, wrongType))
                        .verify(MASTER.getPublic()))
                .isFalse();
        byte[] bare = Rsa.sign(MASTER.getPrivate(), payload); // no context, version or type
        assertThat(ok(signedFrame(FrameType.SESSION_UNKNOWN, payload, bare)).verify(MASTER.getPublic()))
                .isFalse();
    }

    @Test
    void verificationUsesTheReceivedBytesNotAReEncoding() {
        // Counter 7 as int8 (d0 07) instead of the shortest fixint: well-formed, and the signature over these very
        // bytes verifies; a receiver that re-encoded before verifying would fail here.
        byte[] payload = hex("93 c410" + hex(Samples.SID) + "d007 cf0000018bcfe56800");
        byte[] sig = Rsa.sign(MASTER.getPrivate(), Codec.signatureInput(FrameType.SESSION_UNKNOWN, payload));
        Decoded.Ok decoded = ok(signedFrame(FrameType.SESSION_UNKNOWN, payload, sig));
        assertThat(decoded.signedPayload()).isEqualTo(payload);
        assertThat(decoded.verify(MASTER.getPublic())).isTrue();
    }

    @Test
    void unsignedFramesNeverVerify() {
        Decoded.Ok decoded = ok(Codec.encode(Samples.sessionFrame()));
        assertThat(decoded.signedPayload()).isNull();
        assertThat(decoded.signature()).isNull();
        assertThat(decoded.verify(MASTER.getPublic())).isFalse();
    }

    @Test
    void refusalsAreSignedToo() {
        AuthReply refused = new AuthReply(1, AuthStatus.REFUSED, Samples.NONCE, 1, hex("00"), "rate limited", 10, null);
        assertThat(ok(Codec.encodeSigned(refused, MASTER.getPrivate())).verify(MASTER.getPublic()))
                .isTrue();
    }
}

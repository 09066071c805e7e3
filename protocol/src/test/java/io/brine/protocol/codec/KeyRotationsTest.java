package io.brine.protocol.codec;

import static io.brine.protocol.codec.Samples.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.message.SessionMessage;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The key rotation's two session messages (PROTOCOL.md 6.3): their bytes, their bounds, what is signed. */
class KeyRotationsTest {

    private static final byte[] SID = Samples.SID;

    @Test
    void aRotationRequestAndItsAnswerHaveTheDocumentedBytes() {
        byte[] request = Codec.encodeInner(new SessionMessage.KeyRotate(hex("0a0b"), hex("01"), hex("02")));
        assertThat(hex(request)).isEqualTo("011793c4020a0bc40101c40102");
        byte[] reply = Codec.encodeInner(new SessionMessage.KeyRotateReply(false, "ab", "no", hex("03")));
        assertThat(hex(reply)).isEqualTo("012794c2a26162a26e6fc40103");
    }

    @Test
    void aNewKeyOnePastTheSpkiBoundOrAnEmptySignatureIsMalformed() throws Exception {
        byte[] longest = new byte[FieldLimits.MAX_SPKI];
        assertThat(Codec.decodeInner(Codec.encodeInner(new SessionMessage.KeyRotate(longest, hex("01"), hex("02")))))
                .isInstanceOf(SessionMessage.KeyRotate.class);
        assertThatThrownBy(() -> Codec.encodeInner(
                        new SessionMessage.KeyRotate(new byte[FieldLimits.MAX_SPKI + 1], hex("01"), hex("02"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("KeyRotate.newKey");
        assertThatThrownBy(() -> Codec.encodeInner(new SessionMessage.KeyRotate(hex("0a"), new byte[0], hex("02"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("KeyRotate.oldSignature");
    }

    @Test
    void whatIsSignedNamesTheSessionTheIdAndBothKeys() {
        byte[] signed = KeyRotations.request(SID, "web1", hex("0a"), hex("0b0c"));
        assertThat(hex(signed))
                .isEqualTo(hex("brine-key-rotate-v1".getBytes(StandardCharsets.US_ASCII)) + hex(SID) + "0004"
                        + hex("web1".getBytes(StandardCharsets.US_ASCII)) + "00010a" + "00020b0c");
        byte[] otherSession = SID.clone();
        otherSession[0] ^= 1;
        assertThat(KeyRotations.request(otherSession, "web1", hex("0a"), hex("0b0c")))
                .isNotEqualTo(signed);
        assertThat(hex(KeyRotations.reply(SID, true, "ab", "ok")))
                .isEqualTo(hex("brine-key-rotate-reply-v1".getBytes(StandardCharsets.US_ASCII)) + hex(SID) + "01"
                        + "00026162" + "00026f6b");
    }

    @Test
    void aPendingAnswerHasAFifthItemAndItsOwnSignedOutcome() throws Exception {
        SessionMessage.KeyRotateReply pending = new SessionMessage.KeyRotateReply(false, "ab", "no", hex("03"), true);
        byte[] reply = Codec.encodeInner(pending);
        assertThat(hex(reply)).isEqualTo("012795c2a26162a26e6fc40103c3");
        assertThat(Codec.decodeInner(reply))
                .isInstanceOf(SessionMessage.KeyRotateReply.class)
                .extracting(m -> ((SessionMessage.KeyRotateReply) m).pending())
                .isEqualTo(true);
        assertThat(hex(KeyRotations.reply(SID, pending)))
                .isEqualTo(hex("brine-key-rotate-reply-v1".getBytes(StandardCharsets.US_ASCII)) + hex(SID) + "02"
                        + "00026162" + "00026e6f");
        // Both rotated and pending: malformed.
        assertThatThrownBy(() -> Codec.decodeInner(hex("012795c3a26162a26e6fc40103c3")))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("both rotated and pending");
    }

    @Test
    void anAdminsAskNamesTheKeyToRotateAndAFingerprintOnePastItsLengthIsMalformed() throws Exception {
        byte[] ask = Codec.encodeInner(new SessionMessage.KeyRotateAsk("ab"));
        assertThat(hex(ask)).isEqualTo("012991a26162");
        String longest = "ab:".repeat(31) + "ab";
        assertThat(Codec.decodeInner(Codec.encodeInner(new SessionMessage.KeyRotateAsk(longest))))
                .isEqualTo(new SessionMessage.KeyRotateAsk(longest));
        assertThatThrownBy(() -> Codec.encodeInner(new SessionMessage.KeyRotateAsk(longest + "a")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("KeyRotateAsk.fingerprint");
        assertThatThrownBy(() -> Codec.decodeInner(hex("012991d960" + "61".repeat(96))))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("KeyRotateAsk.fingerprint");
    }
}

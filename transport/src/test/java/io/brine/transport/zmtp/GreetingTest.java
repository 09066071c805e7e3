package io.brine.transport.zmtp;

import static io.brine.transport.zmtp.Wire.concat;
import static io.brine.transport.zmtp.Wire.decoder;
import static io.brine.transport.zmtp.Wire.feed;
import static io.brine.transport.zmtp.Wire.greeting;
import static io.brine.transport.zmtp.Wire.hex;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class GreetingTest {

    private static final ZmtpLimits LIMITS = Wire.roomy();

    @Test
    void ourGreetingIsZmtp31NullWithZeroPaddingAndFiller() {
        assertThat(hex(ByteBufUtil.getBytes(ZmtpEncoder.greeting())))
                .isEqualTo("ff00000000000000007f0301" + "4e554c4c" + "00".repeat(16) + "00" + "00".repeat(31));
    }

    @Test
    void zmtp31GreetingIsAccepted() {
        assertThat(feed(decoder(LIMITS), greeting(3, 1, "NULL", 0))).containsExactly("Greeting[3.1 NULL]");
    }

    @Test
    void zmtp30GreetingIsAccepted() {
        assertThat(feed(decoder(LIMITS), greeting(3, 0, "NULL", 0))).containsExactly("Greeting[3.0 NULL]");
    }

    @Test
    void paddingAndFillerAreNotLookedAt() {
        byte[] g = greeting(3, 1, "NULL", 0);
        Arrays.fill(g, 1, 9, (byte) 0x5a); // libzmq writes its identity length + 1 here
        Arrays.fill(g, 33, 64, (byte) 0xee);
        assertThat(feed(decoder(LIMITS), g)).containsExactly("Greeting[3.1 NULL]");
    }

    @Test
    void aGreetingThatArrivesInPiecesIsOneGreeting() {
        EmbeddedChannel channel = decoder(LIMITS);
        byte[] g = greeting(3, 1, "NULL", 0);
        // RFC 23's version detection: the signature first, then the major version, then the rest.
        assertThat(feed(channel, Arrays.copyOfRange(g, 0, 10))).isEmpty();
        assertThat(feed(channel, Arrays.copyOfRange(g, 10, 11))).isEmpty();
        assertThat(feed(channel, Arrays.copyOfRange(g, 11, 63))).isEmpty();
        assertThat(feed(channel, Arrays.copyOfRange(g, 63, 64))).containsExactly("Greeting[3.1 NULL]");
    }

    @Test
    void aBadFirstByteIsRefusedAtOnce() {
        // An HTTP client, say: refused on its first byte, without waiting for 64.
        assertThat(feed(decoder(LIMITS), Wire.ascii("G")))
                .containsExactly("Refused[reason=not a ZMTP greeting (first byte 0x47)]");
    }

    @Test
    void aSignatureWithoutItsClosing7fIsRefusedAtByteTen() {
        EmbeddedChannel channel = decoder(LIMITS);
        assertThat(feed(channel, hex("ff 00 00 00 00 00 00 00 05"))).isEmpty();
        assertThat(feed(channel, hex("00"))).containsExactly("Refused[reason=not a ZMTP 3 signature (byte 9 is 0x00)]");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4, 0xff})
    void aMajorVersionOtherThan3IsRefusedAtByteEleven(int major) {
        byte[] start = Arrays.copyOf(greeting(major, 0, "NULL", 0), 11);
        assertThat(feed(decoder(LIMITS), start))
                .containsExactly("Refused[reason=ZMTP version " + major + ".x (only 3.0 and 3.1 are served)]");
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 0xff})
    void aMinorVersionAbove1IsRefused(int minor) {
        assertThat(feed(decoder(LIMITS), greeting(3, minor, "NULL", 0)))
                .containsExactly("Refused[reason=ZMTP version 3." + minor + " (only 3.0 and 3.1 are served)]");
    }

    @ParameterizedTest
    @ValueSource(strings = {"PLAIN", "CURVE", "GSSAPI", "NUL", "NULLX"})
    void anyMechanismButNullIsRefused(String mechanism) {
        assertThat(feed(decoder(LIMITS), greeting(3, 1, mechanism, 0)))
                .containsExactly("Refused[reason=security mechanism " + mechanism + " (only NULL is served)]");
    }

    @Test
    void aNullMechanismWithBytesAfterItsPaddingIsRefused() {
        byte[] g = greeting(3, 1, "NULL", 0);
        g[31] = 'X';
        assertThat(feed(decoder(LIMITS), g))
                .containsExactly(
                        "Refused[reason=security mechanism NULL\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
                                + "\\x00\\x00\\x00\\x00X (only NULL is served)]");
    }

    @Test
    void theMechanismIsJudgedBeforeTheRestArrives() {
        byte[] g = greeting(3, 1, "CURVE", 0);
        assertThat(feed(decoder(LIMITS), Arrays.copyOf(g, 32)))
                .containsExactly("Refused[reason=security mechanism CURVE (only NULL is served)]");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void asServerSetIsRefusedWithNull(int asServer) {
        assertThat(feed(decoder(LIMITS), greeting(3, 1, "NULL", asServer)))
                .containsExactly("Refused[reason=as-server " + asServer + " with NULL (RFC 37: it MUST be 0)]");
    }

    @Test
    void bytesAfterARefusedGreetingAreDiscarded() {
        EmbeddedChannel channel = decoder(LIMITS);
        assertThat(feed(channel, greeting(2, 0, "NULL", 0))).hasSize(1);
        assertThat(feed(channel, concat(greeting(3, 1, "NULL", 0), Wire.message("hi"))))
                .isEmpty();
    }

    @Test
    void framesRightBehindTheGreetingInTheSameReadAreDecoded() {
        assertThat(feed(decoder(LIMITS), concat(greeting(3, 1, "NULL", 0), Wire.message("a", "b"))))
                .isEqualTo(List.of("Greeting[3.1 NULL]", "Message[a, b]"));
    }
}

package io.brine.transport.zmtp;

import static io.brine.transport.zmtp.Wire.COMMAND;
import static io.brine.transport.zmtp.Wire.LONG;
import static io.brine.transport.zmtp.Wire.MORE;
import static io.brine.transport.zmtp.Wire.ascii;
import static io.brine.transport.zmtp.Wire.concat;
import static io.brine.transport.zmtp.Wire.feed;
import static io.brine.transport.zmtp.Wire.frame;
import static io.brine.transport.zmtp.Wire.greeting31;
import static io.brine.transport.zmtp.Wire.hex;
import static io.brine.transport.zmtp.Wire.longFrame;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Frame headers and bodies, byte by byte, against the decoder alone. */
class FrameTest {

    private static final int LIMIT = 300;

    /** A decoder past its greeting, with a frame limit of 300 and roomy message bounds. */
    private static EmbeddedChannel decoder(ZmtpLimits limits) {
        EmbeddedChannel channel = Wire.decoder(limits);
        assertThat(feed(channel, greeting31())).hasSize(1);
        return channel;
    }

    private static EmbeddedChannel decoder() {
        return decoder(ZmtpLimits.fixed(LIMIT, 16, 1 << 20));
    }

    @Test
    void shortFinalFrameIsAOnePartMessage() {
        assertThat(feed(decoder(), hex("00 03 616263"))).containsExactly("Message[abc]");
    }

    @Test
    void emptyFrameIsAnEmptyPart() {
        assertThat(feed(decoder(), hex("01 00 00 01 78"))).containsExactly("Message[, x]");
    }

    @Test
    void longFrameCarriesItsSizeInEightBigEndianBytes() {
        byte[] body = new byte[256];
        body[0] = 'a';
        body[255] = 'z';
        EmbeddedChannel channel = decoder();
        channel.writeInbound(Unpooled.wrappedBuffer(concat(hex("02 0000000000000100"), body)));
        ZmtpEvent.Message message = channel.readInbound();
        assertThat(message.parts()).singleElement().isEqualTo(body);
    }

    @Test
    void longFrameOf255BytesOrFewerIsAcceptedThoughNotCanonical() {
        // The grammar allows a long size for any body; only commands SHOULD use the short form.
        assertThat(feed(decoder(), hex("03 0000000000000002 6869 02 0000000000000000")))
                .containsExactly("Message[hi, ]");
    }

    @Test
    void moreFlagJoinsFramesIntoOneMessage() {
        assertThat(feed(decoder(), concat(frame(MORE, ascii("t")), longFrame(MORE, ascii("u")), frame(0, ascii("v")))))
                .containsExactly("Message[t, u, v]");
    }

    @Test
    void commandFramesShortAndLongAreParsed() {
        byte[] longPing = longFrame(COMMAND, Wire.commandBody("PING", hex("0001 cafe")));
        assertThat(feed(decoder(), concat(Wire.command("SUBSCRIBE", ascii("b/")), longPing)))
                .hasSize(2)
                .allMatch(e -> e.startsWith("Subscribe[") || e.startsWith("Ping["));
    }

    @ParameterizedTest
    @ValueSource(ints = {0x08, 0x10, 0x20, 0x40, 0x80, 0xff})
    void reservedFlagBitsAreRefusedOnTheFlagsByteAlone(int flags) {
        assertThat(feed(decoder(), new byte[] {(byte) flags}))
                .containsExactly(
                        String.format("Refused[reason=a frame with reserved flag bits set (flags 0x%02x)]", flags));
    }

    @Test
    void commandWithMoreIsRefused() {
        assertThat(feed(decoder(), hex("05"))).containsExactly("Refused[reason=a command frame with the MORE flag]");
    }

    @Test
    void frameExactlyAtTheLimitPasses() {
        byte[] body = new byte[LIMIT];
        EmbeddedChannel channel = decoder();
        channel.writeInbound(Unpooled.wrappedBuffer(longFrame(0, body)));
        assertThat(channel.<ZmtpEvent.Message>readInbound().parts().get(0)).hasSize(LIMIT);
    }

    @Test
    void frameOneBytePastTheLimitIsRefusedOnItsHeader() {
        // Only the 9 header bytes are sent: the refusal does not wait for the body.
        assertThat(feed(decoder(), hex("02 000000000000012d")))
                .containsExactly("Refused[reason=a frame over the limit of 300 bytes, detail=301 bytes announced]");
    }

    @Test
    void shortFrameOverASmallLimitIsRefused() {
        assertThat(feed(decoder(ZmtpLimits.fixed(10, 16, 100)), hex("00 0b")))
                .containsExactly("Refused[reason=a frame over the limit of 10 bytes, detail=11 bytes announced]");
    }

    @Test
    void allOnesSizeIsRefused() {
        assertThat(feed(decoder(), hex("02 ffffffffffffffff")))
                .containsExactly(
                        "Refused[reason=a frame over the limit of 300 bytes, detail=18446744073709551615 bytes announced]");
    }

    @Test
    void sizeWithTheTopBitSetIsRefusedEvenWhenTheLimitIsTheLargestInt() {
        EmbeddedChannel channel = decoder(ZmtpLimits.fixed(Integer.MAX_VALUE, 16, Integer.MAX_VALUE));
        assertThat(feed(channel, hex("02 8000000000000001")))
                .containsExactly("Refused[reason=a frame over the limit of 2147483647 bytes,"
                        + " detail=9223372036854775809 bytes announced]");
    }

    @Test
    void commandSizeWithTheTopBitSetIsRefused() {
        assertThat(feed(decoder(), hex("06 8000000000000000")))
                .containsExactly(
                        "Refused[reason=a command over the limit of 300 bytes, detail=9223372036854775808 bytes announced]");
    }

    @Test
    void commandsAreHeldTo64KiBWhateverTheFrameLimit() {
        EmbeddedChannel channel = decoder(ZmtpLimits.fixed(1 << 23, 16, 1 << 23));
        assertThat(feed(channel, hex("06 0000000000010001")))
                .containsExactly(
                        "Refused[reason=a command over the limit of 65536 bytes, detail=65537 bytes announced]");
    }

    @Test
    void limitIsReadWhenTheHeaderCompletes() {
        AtomicInteger limit = new AtomicInteger(100);
        EmbeddedChannel channel = decoder(new ZmtpLimits(limit::get, () -> 16, () -> 1 << 20));
        assertThat(feed(channel, hex("02 00000000"))).isEmpty();
        limit.set(40); // lowered while the header is half in: the new limit applies
        assertThat(feed(channel, hex("00000032")))
                .containsExactly("Refused[reason=a frame over the limit of 40 bytes, detail=50 bytes announced]");
    }

    @Test
    void raisedLimitAppliesToTheNextFrame() {
        AtomicInteger limit = new AtomicInteger(4);
        EmbeddedChannel channel = decoder(new ZmtpLimits(limit::get, () -> 16, () -> 1 << 20));
        assertThat(feed(channel, Wire.message("abcd"))).containsExactly("Message[abcd]");
        limit.set(8);
        assertThat(feed(channel, Wire.message("abcdefgh"))).containsExactly("Message[abcdefgh]");
    }

    @Test
    void everyByteAfterARefusalIsDiscarded() {
        EmbeddedChannel channel = decoder();
        assertThat(feed(channel, concat(hex("02 ffffffffffffffff"), Wire.message("lost"))))
                .hasSize(1);
        assertThat(feed(channel, Wire.message("also lost"))).isEmpty();
        assertThat(feed(channel, Wire.command("PING", hex("0000")))).isEmpty();
    }

    @Test
    void partialFrameWaitsWithoutOutput() {
        EmbeddedChannel channel = decoder();
        assertThat(feed(channel, hex("00"))).isEmpty();
        assertThat(feed(channel, hex("05 6869"))).isEmpty();
        assertThat(feed(channel, hex("7468 65"))).containsExactly("Message[hithe]");
    }

    @Test
    void longHeaderFlagIsSeenBeforeItsSize() {
        // LONG with only 5 of its 8 size bytes: nothing yet, however small those bytes look.
        assertThat(feed(decoder(), hex("02 0000000000"))).isEmpty();
        assertThat(LONG).isEqualTo(2);
    }
}

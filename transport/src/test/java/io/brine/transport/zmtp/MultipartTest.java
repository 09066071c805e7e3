package io.brine.transport.zmtp;

import static io.brine.transport.zmtp.Wire.MORE;
import static io.brine.transport.zmtp.Wire.concat;
import static io.brine.transport.zmtp.Wire.feed;
import static io.brine.transport.zmtp.Wire.frame;
import static io.brine.transport.zmtp.Wire.greeting31;
import static io.brine.transport.zmtp.Wire.hex;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Messages bounded in parts and bytes; commands only between messages. */
class MultipartTest {

    private static EmbeddedChannel decoder(int parts, int bytes) {
        return decoder(ZmtpLimits.fixed(1000, parts, bytes));
    }

    private static EmbeddedChannel decoder(ZmtpLimits limits) {
        EmbeddedChannel channel = Wire.decoder(limits);
        feed(channel, greeting31());
        return channel;
    }

    @Test
    void messageWithExactlyTheMostPartsPasses() {
        assertThat(feed(decoder(3, 100), Wire.message("a", "b", "c"))).containsExactly("Message[a, b, c]");
    }

    @Test
    void partOnePastTheMostIsRefusedOnItsHeader() {
        EmbeddedChannel channel = decoder(3, 100);
        assertThat(feed(channel, hex("0101 61 0101 62 0101 63"))).isEmpty();
        // The fourth frame's header alone is refused, whatever its size.
        assertThat(feed(channel, hex("00"))).isEmpty();
        assertThat(feed(channel, hex("00"))).containsExactly("Refused[reason=a message of more than 3 parts]");
    }

    @Test
    void messageOfExactlyTheMostBytesPasses() {
        assertThat(feed(decoder(16, 10), Wire.message("abcde", "fghij"))).containsExactly("Message[abcde, fghij]");
    }

    @Test
    void frameThatTakesTheMessageOneBytePastTheMostIsRefusedBeforeItsBody() {
        EmbeddedChannel channel = decoder(16, 10);
        assertThat(feed(channel, frame(MORE, Wire.ascii("abcde")))).isEmpty();
        assertThat(feed(channel, hex("00 06"))).containsExactly("Refused[reason=a message of more than 10 bytes]");
    }

    @Test
    void boundsStartAfreshWithEachMessage() {
        EmbeddedChannel channel = decoder(2, 4);
        assertThat(feed(channel, concat(Wire.message("ab", "cd"), Wire.message("ef", "gh"), Wire.message("ijkl"))))
                .containsExactly("Message[ab, cd]", "Message[ef, gh]", "Message[ijkl]");
    }

    @Test
    void boundsAreReadWhenEachHeaderCompletes() {
        AtomicInteger parts = new AtomicInteger(1);
        EmbeddedChannel channel = decoder(new ZmtpLimits(() -> 100, parts::get, () -> 100));
        assertThat(feed(channel, Wire.message("one"))).containsExactly("Message[one]");
        parts.set(2);
        assertThat(feed(channel, Wire.message("one", "two"))).containsExactly("Message[one, two]");
    }

    @Test
    void commandInsideAMultipartMessageIsRefused() {
        EmbeddedChannel channel = decoder(16, 100);
        byte[] stream = concat(
                frame(MORE, Wire.ascii("first")), Wire.command("PING", hex("0000")), frame(0, Wire.ascii("last")));
        assertThat(feed(channel, stream)).containsExactly("Refused[reason=a command inside a multipart message]");
    }

    @Test
    void commandBetweenMessagesIsFine() {
        EmbeddedChannel channel = decoder(16, 100);
        byte[] stream = concat(Wire.message("a", "b"), Wire.command("PING", hex("0000")), Wire.message("c"));
        assertThat(feed(channel, stream)).hasSize(3).first().isEqualTo("Message[a, b]");
    }
}

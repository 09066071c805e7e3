package io.brine.transport.zmtp;

import static io.brine.transport.zmtp.Wire.ascii;
import static io.brine.transport.zmtp.Wire.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EncoderTest {

    private static final ByteBufAllocator ALLOC = UnpooledByteBufAllocator.DEFAULT;

    private static String hexOf(ByteBuf buf) {
        try {
            return hex(ByteBufUtil.getBytes(buf));
        } finally {
            buf.release();
        }
    }

    @Test
    void routerReadyIsRfc23sWorkedExample() {
        assertThat(hexOf(ZmtpEncoder.ready(ALLOC, SocketType.ROUTER, null)))
                .isEqualTo("041c" + "055245414459" + "0b536f636b65742d54797065" + "00000006" + "524f55544552");
    }

    @Test
    void dealerReadyWithEmptyIdentityIsRfc23sWorkedExample() {
        assertThat(hexOf(ZmtpEncoder.ready(ALLOC, SocketType.DEALER, new byte[0])))
                .isEqualTo("0429" + "055245414459" + "0b536f636b65742d54797065" + "00000006" + "4445414c4552"
                        + "084964656e74697479" + "00000000");
    }

    @Test
    void commandsHaveTheirRfcLayout() {
        assertThat(hexOf(ZmtpEncoder.subscribe(ALLOC, ascii("b/"))))
                .isEqualTo("040c 09535542534352494245 622f".replace(" ", ""));
        assertThat(hexOf(ZmtpEncoder.cancel(ALLOC, new byte[0]))).isEqualTo("0407 0643414e43454c".replace(" ", ""));
        assertThat(hexOf(ZmtpEncoder.ping(ALLOC, 300, hex("0102"))))
                .isEqualTo("0409 0450494e47 012c 0102".replace(" ", ""));
        assertThat(hexOf(ZmtpEncoder.pong(ALLOC, hex("0102")))).isEqualTo("0407 04504f4e47 0102".replace(" ", ""));
        assertThat(hexOf(ZmtpEncoder.error(ALLOC, "Invalid-Socket-Type")))
                .isEqualTo("041a 054552524f52 13".replace(" ", "") + hex(ascii("Invalid-Socket-Type")));
    }

    @Test
    void longCommandGetsALongSize() {
        byte[] topic = new byte[300];
        String encoded = hexOf(ZmtpEncoder.subscribe(ALLOC, topic));
        assertThat(encoded).startsWith("06" + "0000000000000136" + "09535542534352494245");
    }

    @Test
    void messageFramesAreShortUpTo255BytesThenLong() {
        byte[] short255 = new byte[255];
        byte[] long256 = new byte[256];
        String encoded = hexOf(ZmtpEncoder.message(ALLOC, short255, long256, new byte[0]));
        assertThat(encoded).isEqualTo("01ff" + hex(short255) + "03" + "0000000000000100" + hex(long256) + "0000");
    }

    @Test
    void onePartMessageHasNoMore() {
        assertThat(hexOf(ZmtpEncoder.message(ALLOC, ascii("hi")))).isEqualTo("00026869");
    }

    @Test
    void encodedMessageDecodesToTheSameParts() {
        EmbeddedChannel channel = Wire.decoder(Wire.roomy());
        Wire.feed(channel, Wire.greeting31());
        ByteBuf framed = ZmtpEncoder.message(ALLOC, ascii("m/web1/"), new byte[1000], new byte[0]);
        channel.writeInbound(framed);
        ZmtpEvent.Message message = channel.readInbound();
        assertThat(message.parts()).hasSize(3);
        assertThat(message.parts().get(0)).isEqualTo(ascii("m/web1/"));
        assertThat(message.parts().get(1)).hasSize(1000);
    }

    @Test
    void publicationIsEncodedOnceAndSharedByEverySubscriber() {
        ByteBuf framed = ZmtpEncoder.message(ALLOC, ascii("b/"), ascii("frame"));
        byte[] expected = ByteBufUtil.getBytes(framed);
        List<EmbeddedChannel> subscribers = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            EmbeddedChannel subscriber = new EmbeddedChannel();
            subscriber.writeAndFlush(framed.retainedDuplicate());
            subscribers.add(subscriber);
        }
        framed.release(); // the publisher's own reference
        assertThat(framed.refCnt()).isEqualTo(5);
        for (EmbeddedChannel subscriber : subscribers) {
            ByteBuf sent = subscriber.readOutbound();
            assertThat(sent.unwrap()).isSameAs(framed); // a view of the one encoding, not a copy
            assertThat(ByteBufUtil.getBytes(sent)).isEqualTo(expected);
            sent.release(); // as the transport does once the kernel has it
        }
        assertThat(framed.refCnt()).isZero();
    }

    @Test
    void wrongArgumentsAreProgrammingErrors() {
        assertThatThrownBy(() -> ZmtpEncoder.ping(ALLOC, 0, new byte[17])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ZmtpEncoder.ping(ALLOC, 65536, new byte[0]))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ZmtpEncoder.pong(ALLOC, new byte[17])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ZmtpEncoder.error(ALLOC, "has space")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ZmtpEncoder.error(ALLOC, "x".repeat(256)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ZmtpEncoder.message(ALLOC, List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void replyAndPublicationHeadersFollowedByTheFrameAreTheWholeMessage() {
        ByteBufAllocator alloc = UnpooledByteBufAllocator.DEFAULT;
        for (int size : new int[] {0, 1, 255, 256, 70_000}) {
            byte[] frame = new byte[size];
            byte[] topic = ascii("m/web1.example.com/");
            assertThat(concat(ZmtpEncoder.publicationHeader(alloc, topic, size), frame))
                    .isEqualTo(ByteBufUtil.getBytes(ZmtpEncoder.message(alloc, topic, frame)));
            assertThat(concat(ZmtpEncoder.replyHeader(alloc, false, size), frame))
                    .isEqualTo(ByteBufUtil.getBytes(ZmtpEncoder.message(alloc, frame)));
            assertThat(concat(ZmtpEncoder.replyHeader(alloc, true, size), frame))
                    .isEqualTo(ByteBufUtil.getBytes(ZmtpEncoder.message(alloc, new byte[0], frame)));
        }
    }

    private static byte[] concat(ByteBuf header, byte[] frame) {
        byte[] bytes = Wire.concat(ByteBufUtil.getBytes(header), frame);
        header.release();
        return bytes;
    }
}

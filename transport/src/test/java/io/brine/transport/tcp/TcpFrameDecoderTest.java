package io.brine.transport.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * The length prefix at the limit, byte by byte: a frame of exactly the limit passes however the stream is cut, one
 * byte more is refused on its prefix alone. The limit the decoder is built with is also its backstop, as on the
 * client, where both are {@code maxFrame}.
 */
class TcpFrameDecoderTest {

    private static final int LIMIT = 300;

    private static EmbeddedChannel decoder() {
        return new EmbeddedChannel(new TcpFrameDecoder(LIMIT, () -> LIMIT));
    }

    private static byte[] framed(int length) {
        ByteBuffer frame = ByteBuffer.allocate(TcpFrameDecoder.PREFIX + length).putInt(length);
        frame.put(TcpFrameDecoder.PREFIX, (byte) 'a');
        frame.put(TcpFrameDecoder.PREFIX + length - 1, (byte) 'z');
        return frame.array();
    }

    @Test
    void aFrameExactlyAtTheLimitPassesWhereverTheStreamIsCut() {
        byte[] stream = framed(LIMIT);
        for (int cut = 0; cut <= stream.length; cut++) {
            EmbeddedChannel channel = decoder();
            channel.writeInbound(Unpooled.wrappedBuffer(stream, 0, cut));
            channel.writeInbound(Unpooled.wrappedBuffer(stream, cut, stream.length - cut));
            ByteBuf frame = channel.readInbound();
            assertThat(frame).as("cut at %d", cut).isNotNull();
            assertThat(frame.readableBytes()).isEqualTo(LIMIT);
            assertThat(frame.getByte(0)).isEqualTo((byte) 'a');
            assertThat(frame.getByte(LIMIT - 1)).isEqualTo((byte) 'z');
            frame.release();
            assertThat(channel.finish()).isFalse();
        }
    }

    @Test
    void oneBytePastTheLimitIsRefusedOnItsPrefixWhenItsLastByteArrives() {
        byte[] prefix =
                ByteBuffer.allocate(TcpFrameDecoder.PREFIX).putInt(LIMIT + 1).array();
        for (int cut = 1; cut < prefix.length; cut++) {
            EmbeddedChannel channel = decoder();
            channel.writeInbound(Unpooled.wrappedBuffer(prefix, 0, cut));
            assertThat((Object) channel.readInbound()).isNull();
            channel.writeInbound(Unpooled.wrappedBuffer(prefix, cut, prefix.length - cut));
            assertThat((Object) channel.readInbound()).isEqualTo(new TcpFrameDecoder.Refused(LIMIT + 1, LIMIT));
            channel.writeInbound(Unpooled.wrappedBuffer(framed(1))); // discarded, as every byte after it
            assertThat((Object) channel.readInbound()).isNull();
        }
    }
}

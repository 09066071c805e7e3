package io.brine.transport.zmtp;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.transport.server.AcceptedConnections;
import io.brine.transport.server.Outbox;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A ZMTP connection's outbound queue: its writes go through its event loop's shared {@link Outbox}, which writes a
 * whole batch in order and flushes each connection once; a write past the queue bound is refused and closes it.
 */
class ZmtpConnectionQueueTest {

    /** Counts flushes reaching the channel. */
    private static final class FlushCounter extends ChannelOutboundHandlerAdapter {
        int flushes;

        @Override
        public void flush(ChannelHandlerContext ctx) {
            flushes++;
            ctx.flush();
        }
    }

    @Test
    void aBatchOfWritesIsFlushedOncePerConnectionInOrder() {
        FlushCounter counter = new FlushCounter();
        EmbeddedChannel channel = new EmbeddedChannel(counter);
        Outbox outbox = new Outbox(channel.eventLoop());
        ZmtpConnection connection = new ZmtpConnection(channel, "127.0.0.1", ZmtpConnection.Port.PUBLISH, outbox, null);
        for (int i = 0; i < 10; i++) {
            assertThat(connection.enqueue(
                            Unpooled.wrappedBuffer(new byte[] {(byte) i}),
                            Unpooled.wrappedBuffer(new byte[] {(byte) (100 + i)}),
                            null,
                            null,
                            1 << 20))
                    .isTrue();
        }
        assertThat(connection.queuedBytes()).isEqualTo(20);
        channel.runPendingTasks();

        assertThat(counter.flushes).isEqualTo(1);
        assertThat(outbox.writes()).isEqualTo(10);
        assertThat(outbox.flushes()).isEqualTo(1);
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        for (ByteBuf buf = channel.readOutbound(); buf != null; buf = channel.readOutbound()) {
            while (buf.isReadable()) {
                written.write(buf.readByte());
            }
            buf.release();
        }
        assertThat(written.toByteArray())
                .containsExactly(0, 100, 1, 101, 2, 102, 3, 103, 4, 104, 5, 105, 6, 106, 7, 107, 8, 108, 9, 109);
        assertThat(connection.queuedBytes()).isZero();
    }

    @Test
    void aWriteOverTheQueueBoundIsRefusedAndItsBuffersReleased() {
        EmbeddedChannel channel = new EmbeddedChannel();
        Outbox outbox = new Outbox(channel.eventLoop());
        AcceptedConnections owner = new AcceptedConnections(
                "test", ZmtpServerOptions.defaults(), null, LoggerFactory.getLogger(ZmtpConnectionQueueTest.class));
        ZmtpConnection connection =
                new ZmtpConnection(channel, "127.0.0.1", ZmtpConnection.Port.PUBLISH, outbox, owner);
        ByteBuf header = Unpooled.wrappedBuffer(new byte[8]);
        ByteBuf body = Unpooled.wrappedBuffer(new byte[8]);
        assertThat(connection.enqueue(header, body, "web1", new byte[8], 10)).isFalse();
        assertThat(header.refCnt()).isZero();
        assertThat(body.refCnt()).isZero();
        assertThat(channel.isOpen()).isFalse();
    }
}

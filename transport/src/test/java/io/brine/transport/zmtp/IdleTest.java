package io.brine.transport.zmtp;

import static io.brine.transport.zmtp.Wire.greeting31;
import static io.brine.transport.zmtp.Wire.handshake;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * With an idle handler after the ZMTP handlers (where {@link ZmtpPipeline} says the transport puts it), only whole
 * events count as activity: a peer that trickles a greeting, a READY or a message a byte at a time is still idle.
 * The clock is the embedded event loop's, moved by hand.
 */
class IdleTest {

    private static final int IDLE_SECONDS = 10;

    /** Counts idle events at the end of the pipeline. */
    private static final class IdleCounter extends ChannelInboundHandlerAdapter {
        int idle;

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
            if (event instanceof IdleStateEvent) {
                idle++;
            }
        }
    }

    private final IdleCounter counter = new IdleCounter();
    private final MockTicker clock = Ticker.newMockTicker();

    private EmbeddedChannel connection() {
        return EmbeddedChannel.builder()
                .ticker(clock)
                .handlers(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        ZmtpPipeline.addTo(channel.pipeline(), SocketType.ROUTER, Wire.roomy());
                        channel.pipeline().addLast("idle", new IdleStateHandler(IDLE_SECONDS, 0, 0, TimeUnit.SECONDS));
                        channel.pipeline().addLast("counter", counter);
                    }
                })
                .build();
    }

    /** Feeds one piece per second, for as many seconds as there are pieces. */
    private void trickle(EmbeddedChannel channel, byte[] stream, int piece) {
        for (int at = 0; at < stream.length && channel.isActive(); at += piece) {
            channel.writeInbound(Unpooled.wrappedBuffer(stream, at, Math.min(piece, stream.length - at)));
            clock.advance(1, TimeUnit.SECONDS);
            channel.runPendingTasks();
            Wire.drain(channel);
        }
    }

    @Test
    void greetingTrickledByteByByteIsIdle() {
        EmbeddedChannel channel = connection();
        trickle(channel, greeting31(), 1);
        assertThat(counter.idle).isGreaterThan(0);
    }

    @Test
    void readyTrickledAfterAGreetingIsIdle() {
        EmbeddedChannel channel = connection();
        trickle(channel, handshake("DEALER"), 2);
        assertThat(counter.idle).isGreaterThan(0);
    }

    @Test
    void messageTrickledFrameByFrameIsIdle() {
        EmbeddedChannel channel = connection();
        channel.writeInbound(Unpooled.wrappedBuffer(handshake("DEALER")));
        Wire.drain(channel);
        byte[] frames = Wire.message("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l");
        trickle(channel, frames, 3); // one whole frame a second, but no whole message for 12 s
        assertThat(counter.idle).isGreaterThan(0);
    }

    @Test
    void wholeMessagesNoFurtherApartThanTheTimeoutAreActivity() {
        EmbeddedChannel channel = connection();
        channel.writeInbound(Unpooled.wrappedBuffer(handshake("DEALER")));
        for (int i = 0; i < 10; i++) {
            clock.advance(IDLE_SECONDS - 1, TimeUnit.SECONDS);
            channel.runPendingTasks();
            channel.writeInbound(Unpooled.wrappedBuffer(Wire.message("tick")));
        }
        assertThat(counter.idle).isZero();
    }
}

package io.brine.transport.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.transport.zmtp.ZmtpServerOptions;
import io.netty.channel.Channel;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.local.LocalChannel;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The inbound bytes in flight at their edges: a connection is read up to and including each bound and paused one
 * byte past it, handling what it holds resumes it, and releasing more than is held counts nothing negative.
 */
class InflightBudgetTest {

    private static final class Connection extends ServerConnection {
        Connection(Channel channel) {
            super(channel, "127.0.0.1", null, null);
        }
    }

    private static InflightBudget budget(long total, long perConnection) {
        return new InflightBudget(ZmtpServerOptions.defaults().withInflightLimits(total, perConnection));
    }

    private static boolean reading(Connection connection) {
        return connection.channel().config().isAutoRead();
    }

    @Test
    void aConnectionExactlyAtItsBoundIsReadAndOneBytePastIsPausedUntilThatByteIsHandled() {
        InflightBudget budget = budget(1_000, 100);
        EmbeddedChannel channel = new EmbeddedChannel();
        Connection connection = new Connection(channel);

        budget.received(connection, 100);
        assertThat(reading(connection)).isTrue();
        budget.received(connection, 1);
        assertThat(reading(connection)).isFalse();
        assertThat(budget.bytes()).isEqualTo(101);

        budget.handled(connection, 1);
        channel.runPendingTasks(); // the resume runs on the connection's event loop
        assertThat(reading(connection)).isTrue();
        assertThat(budget.bytes()).isEqualTo(100);
        assertThat(budget.peakBytes()).isEqualTo(101);
    }

    @Test
    void theTotalBoundPausesTheConnectionThatDeliversPastItAndAHandledFrameElsewhereResumesIt() {
        InflightBudget budget = budget(150, 100);
        EmbeddedChannel channelA = new EmbeddedChannel();
        EmbeddedChannel channelB = new EmbeddedChannel();
        Connection a = new Connection(channelA);
        Connection b = new Connection(channelB);

        budget.received(a, 100);
        budget.received(b, 50);
        assertThat(reading(a)).as("the total exactly at its bound").isTrue();
        assertThat(reading(b)).isTrue();
        budget.received(b, 1);
        assertThat(reading(b)).as("one byte past the total").isFalse();
        assertThat(reading(a)).as("delivered nothing past it").isTrue();

        budget.handled(b, 1); // b's own byte: the total is back at its bound
        channelB.runPendingTasks();
        assertThat(reading(b)).isTrue();
        budget.received(b, 1);
        assertThat(reading(b)).isFalse();
        budget.handled(a, 100); // a's frames: under the total, and b is under its own bound
        channelB.runPendingTasks();
        assertThat(reading(b)).isTrue();
        assertThat(budget.bytes()).isEqualTo(51);
    }

    @Test
    void releasingMoreThanAConnectionHoldsCountsItDownToZeroAndNoFurther() {
        InflightBudget budget = budget(1_000, 100);
        Connection a = new Connection(new EmbeddedChannel());
        Connection b = new Connection(new EmbeddedChannel());
        budget.received(a, 10);
        budget.received(b, 50);

        budget.handled(a, 25); // a bug's double release, or a wrong size
        assertThat(a.inflightBytes.get()).isZero();
        assertThat(budget.bytes()).as("b's bytes still count").isEqualTo(50);
        budget.handled(a, 1);
        assertThat(budget.bytes()).isEqualTo(50);

        // No credit was left behind: a is paused one byte past its bound, as before.
        budget.received(a, 100);
        assertThat(reading(a)).isTrue();
        budget.received(a, 1);
        assertThat(reading(a)).isFalse();
    }

    @Test
    void framesReceivedOnTheEventLoopAndHandledOnAWorkerEndAtZeroWithBothConnectionsRead() throws Exception {
        InflightBudget budget = budget(64, 16);
        DefaultEventLoopGroup loop = new DefaultEventLoopGroup(1);
        try {
            LocalChannel channelA = new LocalChannel();
            LocalChannel channelB = new LocalChannel();
            loop.register(channelA).sync();
            loop.register(channelB).sync();
            Connection[] connections = {new Connection(channelA), new Connection(channelB)};
            record Frame(Connection connection, int bytes) {}
            BlockingQueue<Frame> handedOver = new LinkedBlockingQueue<>();
            int frames = 10_000;
            Thread worker = new Thread(
                    () -> {
                        try {
                            for (int i = 0; i < frames; i++) {
                                Frame frame = handedOver.take();
                                budget.handled(frame.connection(), frame.bytes());
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "inflight-worker");
            int delivered = 0;
            while (delivered < frames) {
                Connection connection = connections[delivered % 2];
                int bytes = 1 + delivered % 7;
                // As a transport does: a frame is read only while its connection is read.
                boolean read = loop.submit(() -> {
                            if (!reading(connection)) {
                                return false;
                            }
                            budget.received(connection, bytes);
                            handedOver.add(new Frame(connection, bytes));
                            return true;
                        })
                        .get(20, TimeUnit.SECONDS);
                if (read) {
                    delivered++;
                } else if (worker.getState() == Thread.State.NEW) {
                    worker.start(); // only once a connection is paused, so the bounds are reached for sure
                }
            }
            worker.join(TimeUnit.SECONDS.toMillis(20));
            assertThat(worker.isAlive()).isFalse();
            assertThat(budget.bytes()).isZero();
            assertThat(budget.peakBytes()).isGreaterThan(16);
            assertThat(connections[0].inflightBytes.get()).isZero();
            assertThat(connections[1].inflightBytes.get()).isZero();
            await().until(() -> reading(connections[0]) && reading(connections[1]));
        } finally {
            loop.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }
}

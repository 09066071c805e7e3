package io.brine.master;

import static io.brine.master.HostilePeersTest.ANSWER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.client.channel.TcpClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.master.HostilePeersTest.MinionEnd;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.ReplayWindow;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.tcp.TcpServerOptions;
import io.brine.transport.tcp.TcpServerTransport;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rotation's KeyUpdate and a burst of answers on one session (issue 23, item 5): every master-to-minion frame of a
 * session is sealed and queued under the session's lock, so the minion's replay window (64 counters) sees them in
 * counter order. The timer thread is held between sealing the KeyUpdate and queuing it while the minion's
 * heartbeats are answered on the workers: without the lock, 64 answers sealed after the KeyUpdate reach the minion
 * before it, and the minion refuses it as a replay.
 */
class RotationAmongRepliesTest {

    private static final int BURST = ReplayWindow.SIZE;

    @Test
    void aKeyUpdateSealedBeforeABurstOfAnswersReachesTheMinionFirst(@TempDir Path dir) throws Exception {
        AtomicReference<Runnable> beforeKeyUpdate = new AtomicReference<>();
        AtomicInteger answers = new AtomicInteger();
        try (WiredMaster master = WiredMaster.start(
                        dir,
                        config -> config.acceptance(MasterConfig.Acceptance.builder()
                                .autoAccept(true)
                                .build()),
                        undelivered -> new HoldingKeyUpdates(
                                new TcpServerTransport(
                                        "127.0.0.1", 0, TcpServerOptions.defaults(), null, null, undelivered),
                                beforeKeyUpdate,
                                answers));
                TcpClientChannel channel = master.connect()) {
            MinionEnd minion = HostilePeersTest.accepted(channel, "web1");
            long generation = minion.generation() + 1;
            answers.set(0);
            beforeKeyUpdate.set(() -> {
                // On the timer thread, the KeyUpdate sealed (today's code) or about to be (under the lock).
                Thread held = Thread.currentThread();
                try {
                    for (int i = 0; i < BURST; i++) {
                        minion.send(new SessionMessage.Heartbeat(generation)); // answered with a HeartbeatReply
                    }
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                // Either every answer is queued, or a worker waits for the session this thread holds.
                await().until(() -> answers.get() >= BURST || waitsFor(held));
            });
            master.master().requestRotation("test");

            ReplayWindow window = new ReplayWindow();
            List<SessionMessage> accepted = new ArrayList<>();
            for (int frames = 0; frames < BURST + 1; frames++) {
                byte[] frame = channel.receive(ANSWER);
                assertThat(frame).as("frame %d of %d", frames + 1, BURST + 1).isNotNull();
                if (((Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_FRAME)).message()
                        instanceof SessionFrame sealed) {
                    SessionMessage message =
                            Sessions.open(minion.requestKey(), sealed, SessionFrame.Direction.MASTER_TO_MINION);
                    if (window.accept(sealed.counter())) {
                        accepted.add(message);
                    }
                } else {
                    frames--; // a publication, not this session's
                }
            }
            assertThat(accepted)
                    .as("what the minion's replay window let through")
                    .filteredOn(SessionMessage.KeyUpdate.class::isInstance)
                    .singleElement()
                    .extracting(update -> ((SessionMessage.KeyUpdate) update).generation())
                    .isEqualTo(generation);
            assertThat(accepted)
                    .as("what the minion's replay window let through")
                    .filteredOn(SessionMessage.HeartbeatReply.class::isInstance)
                    .hasSize(BURST);
        }
    }

    /** Whether a thread is blocked entering a monitor {@code owner} holds. */
    private static boolean waitsFor(Thread owner) {
        return Arrays.stream(ManagementFactory.getThreadMXBean().dumpAllThreads(false, false))
                .filter(info -> info.getThreadState() == Thread.State.BLOCKED)
                .mapToLong(ThreadInfo::getLockOwnerId)
                .anyMatch(id -> id == owner.getId());
    }

    /** Runs the armed hook before the next publication (a rotation's KeyUpdate); counts the answers sent. */
    private static final class HoldingKeyUpdates extends ForwardingTransport {

        private final AtomicReference<Runnable> beforePublish;
        private final AtomicInteger sent;

        HoldingKeyUpdates(ServerTransport inner, AtomicReference<Runnable> beforePublish, AtomicInteger sent) {
            super(inner);
            this.beforePublish = beforePublish;
            this.sent = sent;
        }

        @Override
        public boolean send(Peer peer, byte[] frame) {
            boolean queued = inner.send(peer, frame);
            sent.incrementAndGet();
            return queued;
        }

        @Override
        public Set<String> publish(Collection<String> minionIds, byte[] frame) {
            Runnable hook = beforePublish.getAndSet(null);
            if (hook != null) {
                hook.run();
            }
            return inner.publish(minionIds, frame);
        }
    }
}

package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.transport.ClientTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** One transport at a time; the next master once a frame stays unanswered for the patience, on a moved clock. */
class FailoverTransportTest {

    /** A transport to one master that records what happens to it; the test plays the master's answers. */
    static final class FakeTransport implements ClientTransport {
        final String master;
        volatile Listener listener;
        final List<byte[]> sent = new CopyOnWriteArrayList<>();
        volatile boolean closed;
        final AtomicInteger reconnects = new AtomicInteger();

        FakeTransport(String master) {
            this.master = master;
        }

        @Override
        public void start(Listener l) {
            listener = l;
        }

        @Override
        public boolean send(byte[] frame) {
            sent.add(frame);
            return true;
        }

        @Override
        public void subscribe(String minionId, int publishPort) {
        }

        @Override
        public boolean reconnect() {
            reconnects.incrementAndGet();
            return true;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private final List<FakeTransport> made = new CopyOnWriteArrayList<>();
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final AtomicInteger connectedEvents = new AtomicInteger();

    private FailoverTransport failover(boolean random) throws Exception {
        FailoverTransport transport = new FailoverTransport(List.of("m1", "m2", "m3"), random, master -> {
            FakeTransport fake = new FakeTransport(master);
            made.add(fake);
            return fake;
        }, Duration.ofSeconds(6), now::get);
        transport.start(new ClientTransport.Listener() {
            @Override
            public void onReply(byte[] frame) {
            }

            @Override
            public void onPublication(byte[] frame) {
            }

            @Override
            public void onConnected() {
                connectedEvents.incrementAndGet();
            }
        });
        return transport;
    }

    @Test
    void anUnansweredFrameMovesTheMinionToTheNextMasterAndRoundAgain() throws Exception {
        try (FailoverTransport transport = failover(false)) {
            transport.send(new byte[] {1});
            now.addAndGet(Duration.ofSeconds(6).toNanos());
            await().until(() -> made.size() == 2);
            assertThat(made.get(0).closed).isTrue();
            assertThat(transport.currentMaster()).isEqualTo("m2");
            assertThat(connectedEvents.get()).isEqualTo(1); // told, so the minion checks its session there

            transport.send(new byte[] {1});
            now.addAndGet(Duration.ofSeconds(6).toNanos());
            await().until(() -> made.size() == 3);
            transport.send(new byte[] {1});
            now.addAndGet(Duration.ofSeconds(6).toNanos());
            await().until(() -> made.size() == 4);
            assertThat(made).extracting(t -> t.master).containsExactly("m1", "m2", "m3", "m1");
            assertThat(made.subList(0, 3)).allMatch(t -> t.closed);
        }
    }

    @Test
    void aNewConnectionIsAskedOfTheTransportToTheCurrentMaster() throws Exception {
        try (FailoverTransport transport = failover(false)) {
            assertThat(transport.reconnect()).isTrue();
            assertThat(made).hasSize(1);
            assertThat(made.get(0).reconnects).hasValue(1);
            assertThat(made.get(0).closed).isFalse();
        }
    }

    @Test
    void randomMasterStartsAnywhereInTheList() throws Exception {
        Set<String> starts = new HashSet<>();
        List<FailoverTransport> opened = new ArrayList<>();
        try {
            for (int i = 0; i < 60 && starts.size() < 3; i++) {
                FailoverTransport transport = failover(true);
                opened.add(transport);
                starts.add(transport.currentMaster());
            }
        } finally {
            opened.forEach(FailoverTransport::close);
        }
        assertThat(starts).containsExactlyInAnyOrder("m1", "m2", "m3");
    }
}

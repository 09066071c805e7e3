package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.transport.ClientTransport;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** One transport at a time; the next master only when the minion says a request went unanswered. */
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
        public void subscribe(String minionId, int publishPort) {}

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
    private final AtomicInteger connectedEvents = new AtomicInteger();

    private FailoverTransport failover(boolean random) throws Exception {
        FailoverTransport transport = new FailoverTransport(List.of("m1", "m2", "m3"), random, master -> {
            FakeTransport fake = new FakeTransport(master);
            made.add(fake);
            return fake;
        });
        transport.start(new ClientTransport.Listener() {
            @Override
            public void onReply(byte[] frame) {}

            @Override
            public void onPublication(byte[] frame) {}

            @Override
            public void onConnected() {
                connectedEvents.incrementAndGet();
            }
        });
        return transport;
    }

    @Test
    void anUnansweredRequestMovesTheMinionToTheNextMasterAndRoundAgain() throws Exception {
        try (FailoverTransport transport = failover(false)) {
            assertThat(transport.reconnect()).isTrue();
            assertThat(made).hasSize(2);
            assertThat(made.get(0).closed).isTrue();
            assertThat(made.get(0).reconnects).hasValue(0);
            assertThat(transport.currentMaster()).isEqualTo("m2");
            // Told by the new master's transport when its connection is up, and only then: an event of its own here
            // made the minion send twice (its resumption, then a full auth that overtook it).
            assertThat(connectedEvents.get()).isZero();
            made.get(1).listener.onConnected();
            assertThat(connectedEvents.get()).isEqualTo(1);

            transport.reconnect();
            transport.reconnect();
            assertThat(made).extracting(t -> t.master).containsExactly("m1", "m2", "m3", "m1");
            assertThat(made.subList(0, 3)).allMatch(t -> t.closed);
            assertThat(made.get(3).listener).isNotNull();
        }
    }

    @Test
    void framesThatExpectNoAnswerNeverMoveTheMinion() throws Exception {
        try (FailoverTransport transport = failover(false)) {
            for (int i = 0; i < 100; i++) {
                assertThat(transport.send(new byte[] {1})).isTrue();
            }
            assertThat(made).hasSize(1);
            assertThat(made.get(0).sent).hasSize(100);
            assertThat(made.get(0).closed).isFalse();
        }
    }

    @Test
    void aClosedTransportMovesNowhere() throws Exception {
        FailoverTransport transport = failover(false);
        transport.close();
        assertThat(transport.reconnect()).isFalse();
        assertThat(made).hasSize(1);
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

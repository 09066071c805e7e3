package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.message.SessionMessage;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The return queue's counts, as the metrics endpoint reads them. */
class ReturnQueueTest {

    private static SessionMessage.Return ret(String jid) {
        return new SessionMessage.Return(jid, "test.ping", true, 0, true, 1);
    }

    @Test
    void countsWhatWaitsWhatWasSentAgainAndWhatWasDropped() {
        ReturnQueue queue = new ReturnQueue(2);
        queue.add(ret("1"), 0);
        queue.add(ret("2"), 0);
        assertThat(queue.due(0, 100, 1_000)).hasSize(2); // first sends
        assertThat(queue.resent()).isZero();

        assertThat(queue.due(100, 100, 1_000)).hasSize(2); // unacknowledged: sent again
        assertThat(queue.resent()).isEqualTo(2);

        queue.resendAll(150); // a new session: both were sent before, so these are resends too
        assertThat(queue.resent()).isEqualTo(4);
        assertThat(queue.due(150, 100, 1_000)).hasSize(2);
        assertThat(queue.resent()).isEqualTo(4);

        queue.add(ret("3"), 200); // full: the oldest is dropped
        assertThat(queue.evicted()).isEqualTo(1);
        assertThat(queue.queued()).isEqualTo(2);

        queue.ack(List.of("2", "3"));
        assertThat(queue.queued()).isZero();
    }
}

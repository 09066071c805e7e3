package io.brine.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.transport.tcp.TcpClientOptions;
import io.brine.transport.zmq.ZmqClientOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ReconnectBackoffTest {

    private static final Duration SECOND = Duration.ofSeconds(1);

    @Test
    void theWaitDoublesUpToTheMaximumAndStartsOverOnceAConnectionWorked() {
        ReconnectBackoff backoff = new ReconnectBackoff(SECOND, Duration.ofSeconds(5), () -> 0.5);

        assertThat(waits(backoff, 6)).containsExactly(1_000L, 2_000L, 4_000L, 5_000L, 5_000L, 5_000L);
        backoff.reset();
        assertThat(backoff.nextMillis()).isEqualTo(1_000);
    }

    @Test
    void eachWaitMovesByUpToOneIntervalEitherWayAsZeroMqs() {
        ReconnectBackoff low = new ReconnectBackoff(SECOND, Duration.ofSeconds(5), () -> 0.0);
        ReconnectBackoff high = new ReconnectBackoff(SECOND, Duration.ofSeconds(5), () -> Math.nextDown(1.0));

        assertThat(waits(low, 5)).containsExactly(1L, 1_000L, 3_000L, 4_000L, 4_000L);
        assertThat(waits(high, 5)).containsExactly(1_999L, 2_999L, 4_999L, 5_999L, 5_999L);
    }

    @Test
    void theDefaultsOfBothTransportsBringEveryMinionBackWithinSixSecondsTryingTwelveTimesAMinute() {
        TcpClientOptions tcp = TcpClientOptions.defaults();
        ZmqClientOptions zmq = ZmqClientOptions.defaults();
        assertThat(tcp.reconnectInterval()).isEqualTo(zmq.reconnectInterval()).isEqualTo(SECOND);
        assertThat(tcp.reconnectIntervalMax())
                .isEqualTo(zmq.reconnectIntervalMax())
                .isEqualTo(Duration.ofSeconds(5));

        // A minion whose master stays down: past the first few attempts every wait is 4-6 s.
        Random random = new Random(26);
        ReconnectBackoff backoff =
                new ReconnectBackoff(tcp.reconnectInterval(), tcp.reconnectIntervalMax(), random::nextDouble);
        List<Long> waits = waits(backoff, 1_000);
        List<Long> capped = waits.subList(3, waits.size());
        assertThat(capped).allSatisfy(wait -> assertThat(wait).isBetween(4_000L, 5_999L));
        long total = capped.stream().mapToLong(Long::longValue).sum();
        double attemptsPerMinute = capped.size() * 60_000.0 / total;
        assertThat(attemptsPerMinute).isBetween(11.5, 12.5);
    }

    @Test
    void aMaximumBelowTheIntervalIsRefused() {
        assertThatThrownBy(() -> new ReconnectBackoff(Duration.ofSeconds(5), SECOND, () -> 0.5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reconnectIntervalMax below reconnectInterval");
    }

    private static List<Long> waits(ReconnectBackoff backoff, int count) {
        List<Long> waits = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            waits.add(backoff.nextMillis());
        }
        return waits;
    }
}

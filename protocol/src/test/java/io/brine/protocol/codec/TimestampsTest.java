package io.brine.protocol.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class TimestampsTest {

    private final Clock clock = Clock.fixed(Instant.ofEpochMilli(Samples.TS), ZoneOffset.UTC);

    @Test
    void acceptsFiveMinutesEitherWayAndNotOneMillisecondMore() {
        long fiveMinutes = 5 * 60 * 1000;
        assertThat(Timestamps.withinSkew(Samples.TS, clock)).isTrue();
        assertThat(Timestamps.withinSkew(Samples.TS - fiveMinutes, clock)).isTrue();
        assertThat(Timestamps.withinSkew(Samples.TS + fiveMinutes, clock)).isTrue();
        assertThat(Timestamps.withinSkew(Samples.TS - fiveMinutes - 1, clock)).isFalse();
        assertThat(Timestamps.withinSkew(Samples.TS + fiveMinutes + 1, clock)).isFalse();
        assertThat(Timestamps.withinSkew(Long.MAX_VALUE, clock)).isFalse();
        assertThat(Timestamps.withinSkew(0, clock)).isFalse();
    }
}

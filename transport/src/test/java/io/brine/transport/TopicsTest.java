package io.brine.transport;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TopicsTest {

    @Test
    void topicsNameOneMinionExactly() {
        assertThat(Topics.minionOf("m/web1/")).isEqualTo("web1");
        assertThat(Topics.minionOf("m/web1")).isNull();
        assertThat(Topics.minionOf("m//")).isNull();
        assertThat(Topics.minionOf("m/Web1/")).isNull();
        assertThat(Topics.minionOf("m/a/b/")).isNull();
        assertThat(Topics.minionOf("b/")).isNull();
        assertThat(Topics.minionOf("")).isNull();
        assertThat(new String(Topics.minionBytes("web1"), US_ASCII)).isEqualTo("m/web1/");
        assertThat(new String(Topics.broadcastBytes(), US_ASCII)).isEqualTo("b/");
    }

    @Test
    void oneMinionsTopicIsNotAPrefixOfAnothers() {
        assertThat(Topics.minion("web10")).doesNotStartWith(Topics.minion("web1"));
    }
}

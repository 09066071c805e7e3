package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.salt.SaltDialect;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltMsgpack;
import io.brine.protocol.salt.SaltValue;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class SaltPingTest {

    @Test
    void thePublishRequestIsLocalClientsClearPublishWithTheRootKeyAndAGlob() throws Exception {
        SaltValue.Map envelope = (SaltValue.Map)
                SaltMsgpack.read(SaltPing.publishRequest("KEY", "bench-*", "test.ping"), SaltLimits.SESSION);

        assertThat(envelope.get("enc").flatMap(SaltValue::text)).contains("clear");
        assertThat(envelope.get("version")).contains(SaltValue.integer(3));
        SaltValue.Map load = (SaltValue.Map) envelope.get("load").orElseThrow();
        assertThat(load.get("cmd").flatMap(SaltValue::text)).contains("publish");
        assertThat(load.get("key").flatMap(SaltValue::text)).contains("KEY");
        assertThat(load.get("user").flatMap(SaltValue::text)).contains("root");
        assertThat(load.get("tgt").flatMap(SaltValue::text)).contains("bench-*");
        assertThat(load.get("tgt_type").flatMap(SaltValue::text)).contains("glob");
        assertThat(load.get("fun").flatMap(SaltValue::text)).contains("test.ping");
    }

    @Test
    void theJidComesFromTheAnswersLoadOrTheAnswerItself() throws IOException {
        SaltValue.Map load = SaltValue.Map.builder()
                .put("jid", "20261128232500123456")
                .put("minions", new SaltValue.Array(List.of(SaltValue.str("bench-0"))))
                .build();

        assertThat(SaltPing.jidOf(write(SaltValue.Map.builder()
                        .put("enc", "clear")
                        .put("load", load)
                        .build())))
                .isEqualTo("20261128232500123456");
        assertThat(SaltPing.jidOf(write(load))).isEqualTo("20261128232500123456");
    }

    @Test
    void aRefusedOrUnresolvedPublishIsAnErrorThatSaysWhatTheMasterSaid() {
        SaltValue.Map refused = SaltValue.Map.builder()
                .put(
                        "error",
                        SaltValue.Map.builder()
                                .put("name", "AuthenticationError")
                                .build())
                .build();
        SaltValue.Map noJid =
                SaltValue.Map.builder().put("jid", SaltValue.nil()).build();

        assertThatThrownBy(() -> SaltPing.jidOf(write(refused)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("refused")
                .hasMessageContaining("AuthenticationError");
        assertThatThrownBy(() -> SaltPing.jidOf(write(noJid)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("no jid");
        assertThatThrownBy(() -> SaltPing.jidOf(new byte[] {(byte) 0xc1}))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not msgpack");
        assertThatThrownBy(() -> SaltPing.jidOf(write(SaltValue.str("bad load"))))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not a map")
                .hasMessageContaining("\"bad load\"");
    }

    @Test
    void theJobCacheDirectoryIsSaltsSha256JidDir() {
        // hashlib.sha256(b"20261128232500123456").hexdigest(), split after two characters as salt.utils.jid.jid_dir
        assertThat(SaltPing.jidDir(Path.of("/c"), "20261128232500123456"))
                .isEqualTo(Path.of("/c/jobs/6c/8a34beb8ea4b9496e2b5ca5a879fb6ad1b097d59b060c2258cab8c4e6e6467"));
    }

    private static byte[] write(SaltValue value) {
        return SaltMsgpack.write(value, SaltDialect.PAYLOAD);
    }

    @Test
    void theWaitForASaltMastersAnswerGrowsWithTheMinions() {
        assertThat(SaltPing.answerTimeout(0)).isEqualTo(Duration.ofSeconds(60));
        assertThat(SaltPing.answerTimeout(1000)).isEqualTo(Duration.ofSeconds(360));
        assertThat(SaltPing.answerTimeout(1001)).isEqualTo(Duration.ofMillis(360_300));
        assertThat(SaltPing.answerTimeout(10_000)).isEqualTo(Duration.ofSeconds(3060));
    }
}

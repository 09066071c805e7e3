package io.brine.protocol.salt;

import static io.brine.protocol.testing.SaltVectors.b64;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.brine.protocol.testing.SaltVectors;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SaltValuesTest {

    @Test
    void aRecordedReturnBecomesBrinesPlainValues() throws Exception {
        JsonNode d = SaltVectors.vector("3008.2-zeromq/return-test.arg")
                .get("request")
                .get("load_decrypted");
        SaltValue.Map load = (SaltValue.Map) SaltMsgpack.read(b64(d.get("msgpack_b64")), SaltLimits.SESSION);
        @SuppressWarnings("unchecked")
        Map<String, Object> plain = (Map<String, Object>) SaltValues.toPlain(load);
        assertThat(plain)
                .containsEntry("cmd", "_return")
                .containsEntry("retcode", 0L)
                .containsEntry("success", true);
        @SuppressWarnings("unchecked")
        Map<String, Object> ret = (Map<String, Object>) plain.get("return");
        assertThat(ret.get("args")).isEqualTo(List.of(42L, "two words"));
        assertThat(plain.get("tok")).isInstanceOf(byte[].class);
    }

    @Test
    void jobArgumentsAreConditionedAsSaltsPublisherDoes() throws Exception {
        JsonNode d = SaltVectors.vector("3008.2-zeromq/publish-test.arg").get("load_decrypted");
        SaltValue.Map load = (SaltValue.Map) SaltMsgpack.read(b64(d.get("msgpack_b64")), SaltLimits.SESSION);
        Map<String, Object> kwargs = new LinkedHashMap<>();
        kwargs.put("kw", "val");
        assertThat(SaltValues.jobArgs(List.of(42L, "two words"), kwargs))
                .isEqualTo(load.get("arg").orElseThrow());
        assertThat(SaltValues.jobArgs(List.of(), Map.of())).isEqualTo(new SaltValue.Array(List.of()));
    }

    @Test
    void keysAndNumbersSaltHasAndBrineDoesNotAreKeptAsText() throws Exception {
        SaltValue v = SaltMsgpack.read(HexFormat.of().parseHex("8201a16fc3cfffffffffffffffff"), SaltLimits.SESSION);
        assertThat(SaltValues.toPlain(v)).isEqualTo(Map.of("1", "o", "true", "18446744073709551615"));
        assertThat(SaltValues.fromPlain(List.of(1, 2.5, "s", new byte[] {1}, Map.of("k", true))))
                .isEqualTo(new SaltValue.Array(List.of(
                        SaltValue.integer(1),
                        new SaltValue.Float(2.5),
                        SaltValue.str("s"),
                        SaltValue.bin(new byte[] {1}),
                        SaltValue.Map.builder().put("k", true).build())));
        assertThatThrownBy(() -> SaltValues.fromPlain(new Object())).isInstanceOf(IllegalArgumentException.class);
    }
}

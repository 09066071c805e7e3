package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.salt.SaltPublication;
import io.brine.protocol.salt.SaltValue;
import java.util.List;
import org.junit.jupiter.api.Test;

class SaltSimMinionTest {

    @Test
    void aSaltMastersGlobTargetIsMatchedOnTheMinionsOwnId() {
        var targets = SaltSimMinion.targets(publication(SaltValue.str("bench-*"), "glob"));

        assertThat(targets.test("bench-17")).isTrue();
        assertThat(targets.test("warm-17")).isFalse();
    }

    @Test
    void aListTargetNamesItsMembersAsAnArrayOrAsCommaSeparatedText() {
        var array = SaltSimMinion.targets(publication(new SaltValue.Array(List.of(SaltValue.str("bench-1"),
                SaltValue.str("bench-2"))), "list"));
        var text = SaltSimMinion.targets(publication(SaltValue.str("bench-1,bench-2"), "list"));

        assertThat(array.test("bench-2")).isTrue();
        assertThat(array.test("bench-3")).isFalse();
        assertThat(text.test("bench-1")).isTrue();
        assertThat(text.test("bench-12")).isFalse();
    }

    @Test
    void aTargetTypeTheSimulationDoesNotMatchNamesNobody() {
        assertThat(SaltSimMinion.targets(publication(SaltValue.str("os:Debian"), "grain")).test("bench-1"))
                .isFalse();
        assertThat(SaltSimMinion.targets(publication(SaltValue.integer(3), "glob")).test("bench-1")).isFalse();
    }

    private static SaltPublication publication(SaltValue tgt, String type) {
        return new SaltPublication("test.ping", new SaltValue.Array(List.of()), tgt, "20261128232500123456", "",
                type, "root", List.of(), 1);
    }
}

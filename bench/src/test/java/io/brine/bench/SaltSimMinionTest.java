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
        var array = SaltSimMinion.targets(
                publication(new SaltValue.Array(List.of(SaltValue.str("bench-1"), SaltValue.str("bench-2"))), "list"));
        var text = SaltSimMinion.targets(publication(SaltValue.str("bench-1,bench-2"), "list"));

        assertThat(array.test("bench-2")).isTrue();
        assertThat(array.test("bench-3")).isFalse();
        assertThat(text.test("bench-1")).isTrue();
        assertThat(text.test("bench-12")).isFalse();
    }

    @Test
    void aTargetTypeTheSimulationDoesNotMatchNamesNobody() {
        assertThat(SaltSimMinion.targets(publication(SaltValue.str("os:Debian"), "grain"))
                        .test("bench-1"))
                .isFalse();
        assertThat(SaltSimMinion.targets(publication(SaltValue.integer(3), "glob"))
                        .test("bench-1"))
                .isFalse();
    }

    @Test
    void signingInAgainSendsTheSameRequestEveryFiveSecondsSevenTimesThenANewOneTenSecondsLater() {
        // salt/crypt.py sign_in: auth_tries 7 sends of one payload, auth_timeout 5 s each; "retry", then
        // acceptance_wait_time 10 s before a new sign-in (new nonce and token).
        assertThat(SaltSimMinion.newSignIn(0)).isTrue();
        for (int sent = 1; sent < 7; sent++) {
            assertThat(SaltSimMinion.resendDelayMs(sent)).isEqualTo(5_000);
            assertThat(SaltSimMinion.newSignIn(sent)).isFalse();
        }
        assertThat(SaltSimMinion.resendDelayMs(7)).isEqualTo(15_000);
        assertThat(SaltSimMinion.newSignIn(7)).isTrue();
        assertThat(SaltSimMinion.resendDelayMs(8)).isEqualTo(5_000);
        assertThat(SaltSimMinion.resendDelayMs(14)).isEqualTo(15_000);
    }

    private static SaltPublication publication(SaltValue tgt, String type) {
        return new SaltPublication(
                "test.ping",
                new SaltValue.Array(List.of()),
                tgt,
                "20261128232500123456",
                "",
                type,
                "root",
                List.of(),
                1);
    }
}

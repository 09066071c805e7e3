package io.brine.store.policy;

import static io.brine.store.policy.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.MasterConfig.AutosignToken;
import io.brine.protocol.testing.MovableClock;
import io.brine.store.keys.PolicyVerdict;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenPolicyTest {

    static final String TOKEN = "correct-horse-battery-staple";

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(Attempts.T0);

    private TokenPolicy policy(AutosignToken... tokens) {
        return new TokenPolicy(List.of(tokens), new SpentStore(dir.resolve("spent_tokens"), clock));
    }

    private static AuthAttempt presenting(String id, String token) {
        return attempt(id, 1, Map.of(), null, token, "10.0.0.5");
    }

    @Test
    void theSaltedHashIsSha256OfSaltThenToken() throws Exception {
        AutosignToken entry = TokenHashes.entry("web*", TOKEN, false);
        byte[] salt = HexFormat.of().parseHex(entry.salt());
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        sha.update(salt);
        sha.update(TOKEN.getBytes(StandardCharsets.UTF_8));
        assertThat(entry.sha256()).isEqualTo(HexFormat.of().formatHex(sha.digest()));
        assertThat(salt).hasSize(16);
        assertThat(TokenHashes.entry("web*", TOKEN, false).salt()).isNotEqualTo(entry.salt());
    }

    @Test
    void theRightTokenForAMatchingIdAccepts() {
        TokenPolicy policy =
                policy(TokenHashes.entry("db*", "another-token-0123", false), TokenHashes.entry("web*", TOKEN, false));
        PolicyDecision decision = policy.evaluate(presenting("web1", TOKEN));
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(decision.rule()).isEqualTo("autosign_tokens[1] (match web*)");
        assertThat(decision.toString()).doesNotContain(TOKEN);

        assertThat(policy.evaluate(presenting("db1", TOKEN)).reason())
                .isEqualTo("the token matches no entry for this id");
        assertThat(policy.evaluate(presenting("mail1", TOKEN)).reason()).isEqualTo("no entry matches this id");
        assertThat(policy.evaluate(presenting("web1", TOKEN + "x")).verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(policy.evaluate(presenting("web1", null)).reason()).isEqualTo("no token presented");
    }

    @Test
    void aSingleUseTokenIsSpentOnDiskAndStaysSpentAcrossRestarts() {
        AutosignToken entry = TokenHashes.entry("web*", TOKEN, true);
        assertThat(policy(entry).check(presenting("web1", TOKEN)).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(policy(entry).evaluate(presenting("web1", TOKEN)).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(policy(entry).evaluate(presenting("web2", TOKEN)).reason())
                .isEqualTo("the single-use token was already used");
        assertThat(policy(entry).check(presenting("web2", TOKEN)).verdict()).isEqualTo(PolicyVerdict.NONE);
    }

    @Test
    void aRolledBackSingleUseTokenIsNotSpent() {
        AutosignToken entry = TokenHashes.entry("web*", TOKEN, true);
        policy(entry).evaluate(presenting("web1", TOKEN)).rollback().run();
        assertThat(policy(entry).evaluate(presenting("web1", TOKEN)).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
    }

    @Test
    void generatedTokensAreLongAndDistinct() {
        assertThat(TokenHashes.generate()).hasSize(43).isNotEqualTo(TokenHashes.generate());
    }
}

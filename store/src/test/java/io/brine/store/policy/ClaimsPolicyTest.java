package io.brine.store.policy;

import static io.brine.store.policy.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;

import io.brine.store.keys.PolicyVerdict;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ClaimsPolicyTest {

    private static final ClaimsPolicy POLICY =
            new ClaimsPolicy(new LinkedHashMap<>(Map.of("role", List.of("web", "db"), "datacenter", List.of("eu-*"))));

    private static PolicyDecision ask(Map<String, Object> claims) {
        return POLICY.evaluate(attempt("web1", 1, claims, null, null, "10.0.0.5"));
    }

    @Test
    void everyListedClaimMustMatchOneOfItsGlobs() {
        PolicyDecision decision = ask(Map.of("role", "web", "datacenter", "eu-west", "os", "Debian"));
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(decision.reason()).startsWith("unsigned claims");
        assertThat(ask(Map.of("role", "web")).reason()).isEqualTo("claim datacenter is missing");
        assertThat(ask(Map.of("role", "mail", "datacenter", "eu-west")).verdict())
                .isEqualTo(PolicyVerdict.NONE);
        assertThat(ask(Map.of("role", "web", "datacenter", "us-east")).verdict())
                .isEqualTo(PolicyVerdict.NONE);
    }

    @Test
    void aListMatchesByAnyItemAndMapsNeverMatch() {
        assertThat(ask(Map.of("role", List.of("mail", "db"), "datacenter", "eu-1"))
                        .verdict())
                .isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(ask(Map.of("role", Map.of("web", "web"), "datacenter", "eu-1"))
                        .verdict())
                .isEqualTo(PolicyVerdict.NONE);
        assertThat(new ClaimsPolicy(Map.of("cpus", List.of("4")))
                        .evaluate(attempt("web1", 1, Map.of("cpus", 4L), null, null, "x"))
                        .verdict())
                .isEqualTo(PolicyVerdict.ACCEPT);
    }

    @Test
    void theIdClaimIsTheIdTheKeyIsOfferedForWhateverTheMinionSends() {
        ClaimsPolicy byId = new ClaimsPolicy(Map.of("id", List.of("web*")));
        AuthAttempt claimingAnother = attempt("db1", 1, Map.of("id", "web1", "role", "web"), null, null, "x");
        assertThat(claimingAnother.claims()).containsEntry("id", "db1").containsEntry("role", "web");
        assertThat(byId.evaluate(claimingAnother).verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(byId.evaluate(attempt("web2", 1, Map.of("id", "db1"), null, null, "x"))
                        .verdict())
                .isEqualTo(PolicyVerdict.ACCEPT);
    }

    @Test
    void globsAreCaseSensitive() {
        assertThat(ask(Map.of("role", "WEB", "datacenter", "eu-1")).verdict()).isEqualTo(PolicyVerdict.NONE);
    }
}

package io.brine.store.policy;

import static io.brine.store.policy.Attempts.attempt;
import static io.brine.store.policy.Attempts.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.MasterConfig;
import io.brine.protocol.testing.MovableClock;
import io.brine.store.audit.AuditLog;
import io.brine.store.audit.FileAuditLog;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.PolicyVerdict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Order (a reject wins, then any accept), the factory, dry runs, and background promotion. */
class AcceptancePoliciesTest {

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(Attempts.T0);
    KeyStore store;
    AcceptancePolicies policies;

    @BeforeEach
    void setUp() throws Exception {
        store = FileKeyStore.open(KeyStoreOptions.builder(dir.resolve("pki"))
                .masterKey(false)
                .maxPending(1)
                .pollInterval(Duration.ZERO)
                .build());
    }

    @AfterEach
    void tearDown() {
        if (policies != null) {
            policies.close();
        }
        store.close();
    }

    private Path file(String name, String content, String mode) throws Exception {
        Path file = Files.writeString(dir.resolve(name), content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    private AcceptancePolicies fromConfig(MasterConfig.Acceptance.Builder acceptance) {
        policies = AcceptancePolicies.fromConfig(
                MasterConfig.builder(dir).acceptance(acceptance.build()).build(), store, clock, AuditLog.none());
        return policies;
    }

    @Test
    void aRejectWinsOverEveryAccept() throws Exception {
        fromConfig(MasterConfig.Acceptance.builder()
                .autoAccept(true)
                .autosignFile(file("autosign.conf", "*.example.com\n", "rw-------"))
                .autorejectFile(file("autoreject.conf", "bad.example.com\n", "rw-------")));

        PolicyDecision bad = policies.evaluate(attempt("bad.example.com", 1));
        assertThat(bad.verdict()).isEqualTo(PolicyVerdict.REJECT);
        assertThat(bad.rule()).isEqualTo("autoreject_file " + dir.resolve("autoreject.conf") + ":1 bad.example.com");
        PolicyDecision good = policies.evaluate(attempt("good.example.com", 1));
        assertThat(good.verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(good.rule()).isEqualTo("auto_accept");
    }

    @Test
    void theFactoryAsksPoliciesInTheDocumentedOrder() throws Exception {
        fromConfig(MasterConfig.Acceptance.builder()
                .autoAccept(true)
                .autosignFile(dir.resolve("a"))
                .autorejectFile(dir.resolve("r"))
                .autosignPolicy(dir.resolve("p"))
                .inventoryFile(dir.resolve("i"))
                .autosignClaims(Map.of("role", List.of("web")))
                .autosignTokens(List.of(TokenHashes.entry("*", "0123456789abcdef", false))));
        assertThat(policies.all())
                .extracting(Object::getClass)
                .containsExactly(
                        IdRulePolicy.class,
                        policies.all().get(1).getClass(),
                        IdRulePolicy.class,
                        GrantPolicy.class,
                        TokenPolicy.class,
                        ClaimsPolicy.class,
                        InventoryPolicy.class,
                        ExecutablePolicy.class);
        assertThat(policies.all().get(0).toString()).startsWith("autoreject_file");
        assertThat(policies.all().get(2).toString()).startsWith("autosign_file");
    }

    @Test
    void withNothingConfiguredEveryKeyWaitsAndTheReasonSaysWhy() {
        fromConfig(MasterConfig.Acceptance.builder());
        PolicyDecision decision = policies.evaluate(attempt("web1", 1));
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(decision.rule()).isEqualTo("none");
        assertThat(decision.reason()).isEqualTo("grant: no grant presented");
    }

    @Test
    void aPolicyThatThrowsCountsAsNo() {
        policies = AcceptancePolicies.of(List.of(), List.of(attempt -> {
            throw new IllegalStateException("bug");
        }));
        assertThat(policies.evaluate(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);
    }

    @Test
    void explainListsEachPolicyAskedAndSpendsNothing() throws Exception {
        MasterConfig.AutosignToken token = TokenHashes.entry("web*", "0123456789abcdef", true);
        fromConfig(MasterConfig.Acceptance.builder()
                .autorejectFile(file("autoreject.conf", "db1\n", "rw-------"))
                .autosignTokens(List.of(token)));
        AuthAttempt attempt = attempt("web1", 1, Map.of(), null, "0123456789abcdef", "10.0.0.5");
        AcceptancePolicies.Explanation first = policies.explain(attempt);
        assertThat(first.decision().verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(first.steps())
                .extracting(PolicyDecision::verdict)
                .containsExactly(PolicyVerdict.NONE, PolicyVerdict.NONE, PolicyVerdict.ACCEPT);
        assertThat(policies.explain(attempt).decision().verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(dir.resolve("cache")).doesNotExist();
    }

    @Test
    void aRememberedYesIsDroppedWhenTheKeyIsDeleted() throws Exception {
        // Yes the first time only: a yes after the delete can only come from the cache.
        Path said = dir.resolve("said-yes");
        Path exe =
                file("policy", "#!/bin/sh\n[ -e " + said + " ] && exit 1\ntouch " + said + "\nexit 0\n", "rwx------");
        fromConfig(MasterConfig.Acceptance.builder().autosignPolicy(exe));
        assertThat(policies.evaluate(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);
        await().until(() -> policies.evaluate(attempt("web1", 1)).verdict() == PolicyVerdict.ACCEPT);
        assertThat(store.offer("web1", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);

        store.delete("web1", "test");

        await().until(() -> policies.evaluate(attempt("web1", 1)).verdict() == PolicyVerdict.NONE);
        await().until(() ->
                policies.evaluate(attempt("web1", 1)).reason().contains("autosign_policy " + exe + ": exit 1"));
    }

    @Test
    void aClassificationGoesWithItsDeletedKey() throws Exception {
        Path classes = Files.createDirectories(dir.resolve("cache").resolve(Classifications.DIR_NAME));
        Path file = Files.writeString(
                classes.resolve("web1.json"),
                "{\"fingerprint\":\"" + Attempts.fingerprint(1) + "\",\"class\":{\"role\":\"web\"}}\n");
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        fromConfig(MasterConfig.Acceptance.builder());
        assertThat(policies.classification("web1")).containsEntry("role", "web");

        store.delete("web1", "test");

        await().until(() -> !Files.exists(file));
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        assertThat(policies.classification("web1")).isEmpty();
    }

    @Test
    void aKeyAcceptedInTheBackgroundIsPromotedAndAudited() throws Exception {
        // Says yes only once the store holds the key as pending (the test says so: the file appears on disk before
        // the store's memory has it), so that the promotion, not the next retry, accepts it.
        Path pending = dir.resolve("pending");
        Path exe =
                file("policy", "#!/bin/sh\nwhile [ ! -e " + pending + " ]; do sleep 0.05; done\nexit 0\n", "rwx------");
        try (FileAuditLog audit = AuditLog.open(dir.resolve("audit"), clock)) {
            policies = AcceptancePolicies.fromConfig(
                    MasterConfig.builder(dir)
                            .acceptance(MasterConfig.Acceptance.builder()
                                    .autosignPolicy(exe)
                                    .build())
                            .build(),
                    store,
                    clock,
                    audit);
            assertThat(policies.evaluate(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);
            store.offer("web1", key(1), PolicyVerdict.NONE); // what AuthService does with that answer
            Files.writeString(pending, "");
            await().until(() -> store.lookup("web1", key(1)) == KeyLookup.ACCEPTED_SAME);
            await().until(() -> Files.readString(audit.file()).contains("\"policy-accepted\""));
            assertThat(Files.readString(audit.file())).contains("autosign_policy " + exe);
        }
    }

    @Test
    void aBackgroundAcceptIsNotPromotedWhenAutorejectMatchesByThen() throws Exception {
        fromConfig(MasterConfig.Acceptance.builder().autorejectFile(file("autoreject.conf", "web2\n", "rw-------")));
        store.offer("web2", key(2), PolicyVerdict.NONE);
        policies.promote(attempt("web2", 2), new PolicyDecision(PolicyVerdict.ACCEPT, "autosign_policy x", "exit 0"));
        assertThat(store.lookup("web2", key(2))).isEqualTo(KeyLookup.PENDING_SAME);
    }

    @Test
    void aBackgroundAcceptPromotesOnlyThePendingKeyItWasAskedAbout() {
        fromConfig(MasterConfig.Acceptance.builder());
        store.offer("web2", key(3), PolicyVerdict.NONE);
        policies.promote(attempt("web2", 2), new PolicyDecision(PolicyVerdict.ACCEPT, "autosign_policy x", "exit 0"));
        assertThat(store.lookup("web2", key(3))).isEqualTo(KeyLookup.PENDING_SAME);
        policies.promote(attempt("web3", 4), new PolicyDecision(PolicyVerdict.ACCEPT, "autosign_policy x", "exit 0"));
        assertThat(store.lookup("web3", key(4))).isEqualTo(KeyLookup.UNKNOWN);
    }

    @Test
    void aFullPendingStoreNeverStopsAKeyThatAPolicyAccepts() throws Exception {
        fromConfig(MasterConfig.Acceptance.builder().autosignFile(file("autosign.conf", "web1\n", "rw-------")));
        assertThat(store.offer(
                        "bogus1",
                        key(5),
                        policies.evaluate(attempt("bogus1", 5)).verdict()))
                .isInstanceOf(KeyDecision.Pending.class);
        assertThat(store.offer(
                        "bogus2",
                        key(6),
                        policies.evaluate(attempt("bogus2", 6)).verdict()))
                .isInstanceOf(KeyDecision.Full.class);
        assertThat(store.offer(
                        "web1", key(1), policies.evaluate(attempt("web1", 1)).verdict()))
                .isInstanceOf(KeyDecision.Accepted.class);
    }
}

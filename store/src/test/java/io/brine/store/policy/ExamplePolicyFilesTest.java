package io.brine.store.policy;

import static io.brine.store.policy.Attempts.attempt;
import static io.brine.store.policy.Attempts.fingerprint;
import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.testing.ExampleConfigs;
import io.brine.protocol.testing.MovableClock;
import io.brine.store.keys.PolicyVerdict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The example policy files shipped in conf/ are valid and do what their comments say. */
class ExamplePolicyFilesTest {

    @TempDir
    Path dir;

    @Test
    void autosignAndAutorejectExamplesHaveNoBadLines() throws Exception {
        IdRules autosign = IdRules.parse(Files.readString(ExampleConfigs.example("autosign.conf")));
        assertThat(autosign.problems()).isEmpty();
        assertThat(autosign.match("a.web.example.com")).isPresent();
        assertThat(autosign.match("web.example.com")).isEmpty();
        assertThat(autosign.match("db1.example.com")).isPresent();
        IdRules autoreject = IdRules.parse(Files.readString(ExampleConfigs.example("autoreject.conf")));
        assertThat(autoreject.problems()).isEmpty();
        assertThat(autoreject.size()).isEqualTo(2);
    }

    @Test
    void inventoryExampleHasNoBadRecords() throws Exception {
        Path example = ExampleConfigs.example("inventory.yaml");
        Inventory inventory = Inventory.parse(example, Files.readAllBytes(example));
        assertThat(inventory.problems()).isEmpty();
        assertThat(inventory.size()).isEqualTo(2);
        assertThat(inventory.record("web7.example.com").orElseThrow().addresses())
                .hasSize(2);
    }

    @Test
    void policyExecutableExampleAcceptsOnlyListedHostsAndKeys() throws Exception {
        Path hosts = Files.writeString(dir.resolve("expected-hosts"), "web1 " + fingerprint(1) + "\n");
        Path script = dir.resolve("policy");
        Files.writeString(
                script,
                Files.readString(ExampleConfigs.example("autosign-policy.example"))
                        .replace("/etc/brine/expected-hosts", hosts.toString()));
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        try (ExecutablePolicy policy =
                new ExecutablePolicy(script, Duration.ofSeconds(10), 1, new MovableClock(Attempts.T0))) {
            assertThat(policy.check(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
            assertThat(policy.check(attempt("web1", 2)).verdict()).isEqualTo(PolicyVerdict.NONE);
            assertThat(policy.check(attempt("web2", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);
        }
    }
}

package io.brine.store.policy;

import static io.brine.store.policy.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.testing.MovableClock;
import io.brine.store.keys.PolicyVerdict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IdRulePolicyTest {

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(Attempts.T0);

    private Path write(String content) throws Exception {
        Path file = dir.resolve("autosign.conf");
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        return file;
    }

    @Test
    void aMatchAcceptsAndNamesFileLineAndEntry() throws Exception {
        Path file = write("# fleet\nweb1\n*.example.com\n");
        IdRulePolicy policy = IdRulePolicy.autosign(file, clock);

        PolicyDecision decision = policy.evaluate(attempt("db.example.com", 1));
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(decision.rule()).isEqualTo("autosign_file " + file + ":3 *.example.com");
        assertThat(decision.reason()).isEqualTo("db.example.com matches *.example.com");
        assertThat(policy.evaluate(attempt("example.com", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);
    }

    @Test
    void theAutorejectFileRejects() throws Exception {
        Path file = write("*.evil.example.com\n");
        PolicyDecision decision = IdRulePolicy.autoreject(file, clock).evaluate(attempt("x.evil.example.com", 1));
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.REJECT);
        assertThat(decision.rule()).startsWith("autoreject_file ");
    }

    @Test
    void theFileIsReReadWhenItChangesAtMostOnceASecond() throws Exception {
        Path file = write("web1\n");
        IdRulePolicy policy = IdRulePolicy.autosign(file, clock);
        assertThat(policy.evaluate(attempt("web2", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);

        Files.writeString(file, "web1\nweb2\n");
        assertThat(policy.evaluate(attempt("web2", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);
        clock.advance(Duration.ofMillis(1000));
        assertThat(policy.evaluate(attempt("web2", 1)).verdict()).isEqualTo(PolicyVerdict.ACCEPT);

        Files.delete(file);
        clock.advance(Duration.ofSeconds(1));
        PolicyDecision gone = policy.evaluate(attempt("web2", 1));
        assertThat(gone.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(gone.reason()).contains("does not exist");
    }

    @Test
    void aFileGroupOrOthersCanWriteIsIgnoredUntilFixed() throws Exception {
        Path file = write("web1\n");
        IdRulePolicy policy = IdRulePolicy.autosign(file, clock);
        for (String mode : new String[] {"rw-rw-r--", "rw-r--rw-"}) {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
            clock.advance(Duration.ofSeconds(1));
            PolicyDecision decision = policy.evaluate(attempt("web1", 1));
            assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
            assertThat(decision.reason()).contains("is writable by");
        }
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        clock.advance(Duration.ofSeconds(1));
        assertThat(policy.evaluate(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
    }

    @Test
    void badLinesAreSkippedAndTheRestApplies() throws Exception {
        Path file = write("Web1\nweb1 \n*web.example.com\nweb2\n");
        IdRulePolicy policy = IdRulePolicy.autosign(file, clock);
        assertThat(policy.evaluate(attempt("web2", 1)).rule()).isEqualTo("autosign_file " + file + ":4 web2");
        assertThat(policy.evaluate(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);
    }
}

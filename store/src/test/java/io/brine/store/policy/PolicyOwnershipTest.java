package io.brine.store.policy;

import static io.brine.store.policy.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.files.TrustedPath;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.MovableClock;
import io.brine.store.keys.PolicyVerdict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ownership rule for policy inputs: a file (or a directory on its path, or a link's target) that someone other
 * than root or the master's user owns or can write disables the policy. Files owned by {@code nobody} can only be
 * made as root: these tests fail (never skip) when they cannot.
 */
class PolicyOwnershipTest {

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(Attempts.T0);
    UserPrincipal nobody;

    @BeforeEach
    void needRoot() throws Exception {
        assertThat(TrustedPath.processUid())
                .as("these tests make files owned by nobody, which needs root; run" + " them as root")
                .isZero();
        nobody = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
    }

    private Path write(Path file, String content, String mode) throws Exception {
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    @Test
    void anAutosignFileOwnedByAnotherUserAcceptsNothing() throws Exception {
        Path file = write(dir.resolve("autosign.conf"), "*.evil.test\n", "rw-r--r--");
        Files.setOwner(file, nobody);

        PolicyDecision decision = IdRulePolicy.autosign(file, clock).evaluate(attempt("s3.evil.test", 1));

        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(decision.reason()).contains(file.toString()).contains("is owned by nobody");
    }

    @Test
    void aLinkToAFileOwnedByAnotherUserAcceptsNothingButATrustedLinkIsFollowed() throws Exception {
        Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
        Path target = write(elsewhere.resolve("x"), "*.evil.test\n", "rw-r--r--");
        Files.setOwner(target, nobody);
        Path link = Files.createSymbolicLink(dir.resolve("autosign.conf"), target);

        PolicyDecision decision = IdRulePolicy.autosign(link, clock).evaluate(attempt("s3.evil.test", 1));
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(decision.reason()).contains(target.toString()).contains("symbolic link " + link);

        Files.setOwner(
                target, dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("root"));
        clock.advance(Duration.ofSeconds(2));
        assertThat(IdRulePolicy.autosign(link, clock)
                        .evaluate(attempt("s3.evil.test", 1))
                        .verdict())
                .isEqualTo(PolicyVerdict.ACCEPT);
    }

    @Test
    void aDirectoryOnThePathThatOthersCanWriteDisablesTheAutorejectAndInventoryFiles() throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path reject = write(open.resolve("autoreject.conf"), "*\n", "rw-r--r--");

        PolicyDecision decision = IdRulePolicy.autoreject(reject, clock).evaluate(attempt("web1", 1));

        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(decision.reason()).contains("directory " + open + " is writable by its group");
    }

    @Test
    void aPolicyExecutableOwnedByAnotherUserOrInAnOpenDirectoryIsNotRun() throws Exception {
        Path marker = dir.resolve("ran");
        Path exe = write(dir.resolve("policy"), "#!/bin/sh\ntouch " + marker + "\nexit 0\n", "rwxr-xr-x");
        Files.setOwner(exe, nobody);
        try (ExecutablePolicy policy = new ExecutablePolicy(exe, Duration.ofSeconds(10), 1, clock)) {
            PolicyDecision decision = policy.check(attempt("web1", 1));
            assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
            assertThat(decision.reason()).contains("is owned by nobody").contains("not run");
        }
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path inOpen = write(open.resolve("policy"), "#!/bin/sh\ntouch " + marker + "\nexit 0\n", "rwx------");
        try (ExecutablePolicy policy = new ExecutablePolicy(inOpen, Duration.ofSeconds(10), 1, clock)) {
            PolicyDecision decision = policy.check(attempt("web1", 1));
            assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
            assertThat(decision.reason()).contains("directory " + open + " is writable");
        }
        assertThat(marker).doesNotExist();
    }

    @Test
    void aProvisionerKeyOwnedByAnotherUserIsNotTrusted() throws Exception {
        Path provisioners = Files.createDirectory(dir.resolve("provisioners"));
        Files.setPosixFilePermissions(provisioners, PosixFilePermissions.fromString("rwx------"));
        Path pub = write(provisioners.resolve("cloud.pub"), Pem.publicKeySpki(Attempts.key(2)), "rw-r--r--");
        assertThat(new ProvisionerKeys(provisioners, clock).size()).isEqualTo(1);

        Files.setOwner(pub, nobody);
        assertThat(new ProvisionerKeys(provisioners, clock).size()).isZero();
    }

    @Test
    void untrustedInputsNamesEachDisabledPolicyForCheckConfig() throws Exception {
        Path file = write(dir.resolve("autosign.conf"), "web1\n", "rw-r--r--");
        Files.setOwner(file, nobody);
        MasterConfig config = MasterConfig.builder(dir)
                .acceptance(MasterConfig.Acceptance.builder().autosignFile(file).build())
                .build();

        assertThat(AcceptancePolicies.untrustedInputs(config, config.pkiDir()))
                .singleElement()
                .asString()
                .startsWith("autosign_file " + file + " is not trusted, the policy is disabled: ")
                .contains("owned by nobody");
    }
}

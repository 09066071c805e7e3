package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.LogLevel;
import io.brine.daemon.testing.CommandRun;
import io.brine.daemon.testing.CommandRun.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** brine-master --check-config, in-process: what it says and its exit code. */
class MasterMainTest {

    @TempDir
    Path dir;

    private Result checkConfig() {
        return run("-c", dir.toString(), "--check-config");
    }

    private Result run(String... args) {
        return CommandRun.run(new MasterMain(), args);
    }

    @Test
    void logLevelTakesSaltsNamesAndRefusesOthersWithExitTwo() throws Exception {
        MasterMain main = new MasterMain();
        new CommandLine(main).parseArgs("-l", "warning");
        assertThat(main.logLevel).isEqualTo(LogLevel.WARN);
        new CommandLine(main).parseArgs("--log-level", "GARBAGE");
        assertThat(main.logLevel).isEqualTo(LogLevel.TRACE);

        Files.writeString(dir.resolve("master.yaml"), "pki_dir: pki\ncachedir: cache\n");
        Result quiet = run("-c", dir.toString(), "-l", "quiet");
        assertThat(quiet.exit()).isEqualTo(2);
        assertThat(quiet.err())
                .contains("Invalid value for option '--log-level': expected error, warning, info,"
                        + " debug or trace (Salt's critical, profile, garbage and all too), not 'quiet'");
        assertThat(dir.resolve("pki")).doesNotExist();
        assertThat(run("-c", dir.toString(), "-l", "debug", "--check-config").exit())
                .isZero();
    }

    @Test
    void checkConfigChecksTheFilesTheConfigNamesWithExitTwoAndFileLine() throws Exception {
        Files.writeString(
                dir.resolve("master.yaml"),
                "pki_dir: pki\nautosign_file: autosign.conf\n" + "inventory_file: inventory.yaml\n");
        Result missing = checkConfig();
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err())
                .contains(dir.resolve("master.yaml") + ":2: autosign_file: " + dir.resolve("autosign.conf")
                        + " does not exist")
                .contains(dir.resolve("master.yaml") + ":3: inventory_file: ");
        assertThat(missing.out()).doesNotContain("configuration OK");

        Files.writeString(dir.resolve("autosign.conf"), "web*\n");
        Files.writeString(dir.resolve("inventory.yaml"), "[]\n");
        Result ok = checkConfig();
        assertThat(ok.exit()).as(ok.err()).isZero();
        assertThat(ok.out()).contains("configuration OK");
    }

    @Test
    void startingChecksTheReferencedFilesAsCheckConfigDoesBeforeAnythingStarts() throws Exception {
        Files.writeString(
                dir.resolve("master.yaml"),
                "pki_dir: pki\ncachedir: cache\ntransport: tcp\ntcp_port: 0\n"
                        + "tls:\n  cert: tls/master.crt\n  key: tls/master.key\n");
        Result start = run("-c", dir.toString());
        assertThat(start.exit()).isEqualTo(2);
        assertThat(start.err())
                .contains(dir.resolve("master.yaml") + ":6: tls.cert: " + dir.resolve("tls/master.crt")
                        + " does not exist")
                .contains(dir.resolve("master.yaml") + ":7: tls.key: ")
                .doesNotContain("Exception");
        assertThat(dir.resolve("pki")).doesNotExist();
    }

    @Test
    void checkConfigNamesAGroupWritableAutosignFileAsADisabledPolicyWithExitTwo() throws Exception {
        Files.writeString(dir.resolve("master.yaml"), "pki_dir: pki\ncachedir: cache\nautosign_file: autosign.conf\n");
        Path autosign = Files.writeString(dir.resolve("autosign.conf"), "web*\n");
        Files.setPosixFilePermissions(autosign, PosixFilePermissions.fromString("rw-rw-r--"));
        Result checked = checkConfig();
        assertThat(checked.exit()).isEqualTo(2);
        // Not a config problem (the start serves with that policy disabled): the ownership rule's own line.
        assertThat(checked.err())
                .contains(
                        "acceptance policies disabled (1):",
                        "autosign_file " + autosign + " is not trusted, the policy is disabled: ",
                        "writable by its group")
                .doesNotContain(":3:");
    }
}

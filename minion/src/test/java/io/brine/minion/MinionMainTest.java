package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.LogLevel;
import io.brine.daemon.testing.CommandRun;
import io.brine.daemon.testing.CommandRun.Result;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** brine-minion's command line, in-process: --check-config, --fingerprint, -l. */
class MinionMainTest {

    @TempDir
    Path dir;

    /** MinionMain prints on System.out and System.err, as the launcher runs it. */
    private static Result run(String... args) {
        return CommandRun.run(new MinionMain(), args);
    }

    @Test
    void fingerprintPrintsTheKeysFingerprintAsBrineKeyDoesAndCreatesNothing() throws Exception {
        Files.writeString(dir.resolve("minion.yaml"), "id: web1\nmaster: 127.0.0.1\npki_dir: pki\n");
        Result none = run("-c", dir.toString(), "--fingerprint");
        assertThat(none.exit()).isEqualTo(1);
        assertThat(none.err())
                .isEqualTo("brine-minion: no key yet in " + dir.resolve("pki") + ": the minion creates"
                        + " minion.pem at its first start (and logs its fingerprint); start it once\n");
        assertThat(dir.resolve("pki")).doesNotExist();

        Path pki = Files.createDirectories(dir.resolve("pki"));
        Path pem = Files.writeString(pki.resolve("minion.pem"), TestKeys.privatePem(3));
        Files.setPosixFilePermissions(pem, PosixFilePermissions.fromString("r--------"));
        Result printed = run("-c", dir.toString(), "--fingerprint");
        assertThat(printed.exit()).as(printed.err()).isZero();
        assertThat(printed.out()).isEqualTo(Fingerprints.of(TestKeys.pair(3).getPublic()) + "\n");
        assertThat(pki.resolve("minion.pub")).doesNotExist();

        Files.setPosixFilePermissions(pem, PosixFilePermissions.fromString("r--r--r--"));
        Result exposed = run("-c", dir.toString(), "--fingerprint");
        assertThat(exposed.exit()).isEqualTo(1);
        assertThat(exposed.err()).contains("is readable or writable by group or others");
    }

    @Test
    void logLevelTakesSaltsNamesAndRefusesOthersWithExitTwo() {
        MinionMain main = new MinionMain();
        new CommandLine(main).parseArgs("-l", "critical");
        assertThat(main.logLevel).isEqualTo(LogLevel.ERROR);
        new CommandLine(main).parseArgs("--log-level", "profile");
        assertThat(main.logLevel).isEqualTo(LogLevel.DEBUG);

        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new MinionMain());
        cli.setErr(new PrintWriter(err, true));
        assertThat(cli.execute("-l", "loud")).isEqualTo(2);
        assertThat(err.toString())
                .contains("Invalid value for option '--log-level': expected error, warning, info,"
                        + " debug or trace (Salt's critical, profile, garbage and all too), not 'loud'");
    }

    private static Result checkConfig(Path dir) {
        return run("-c", dir.toString(), "--check-config");
    }

    @Test
    void aPkiDirOrCachedirThatIsAFileIsRefusedWithOwnerModeAndFix() throws Exception {
        Files.writeString(dir.resolve("minion.yaml"), "id: web1\nmaster: 127.0.0.1\npki_dir: pki\ncachedir: cache\n");
        Files.writeString(dir.resolve("pki"), "a file");
        Files.writeString(dir.resolve("cache"), "a file");

        Result refused = checkConfig(dir);

        assertThat(refused.exit()).isEqualTo(2);
        assertThat(refused.err())
                .contains("Minion cannot start: pki_dir " + dir.resolve("pki") + " is not a directory (regular file ")
                .contains("Minion cannot start: cachedir " + dir.resolve("cache") + " is not a directory")
                .contains("this process runs as ")
                .contains("must be a directory, or set pki_dir elsewhere");
        assertThat(refused.out()).doesNotContain("configuration OK");

        Files.delete(dir.resolve("pki"));
        Files.delete(dir.resolve("cache"));
        Result ok = checkConfig(dir);
        assertThat(ok.exit()).as(ok.err()).isZero();
        assertThat(ok.out()).contains("configuration OK");
        assertThat(dir.resolve("pki")).doesNotExist(); // the check leaves nothing behind
    }
}

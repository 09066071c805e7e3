package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.brine.daemon.testing.CommandRun;
import io.brine.master.MasterMain;
import io.brine.minion.MinionMain;
import io.brine.protocol.testing.TinyFileSystem;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/brine-master and bin/brine-minion with a {@code log_file} (or the master's audit log) they cannot open: each
 * refuses to start with exit 2 and says why on standard error (file, the system's reason, the owner and mode found,
 * the user it runs as, the fix), and {@code --check-config} says the same, instead of a daemon that serves and logs
 * nowhere. The tests run as root, who may write anywhere: the unwritable places are a directory that does not
 * exist, a path under a regular file, and a read-only tmpfs. The refusals are the daemons' own: each case runs their
 * entry point in this JVM, and one case per daemon also runs its launcher script, which must pass the refusal through.
 */
class UnwritableLogsIT {

    private static final Path ROOT =
            Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();

    @TempDir
    Path tmp;

    record Run(int exit, String err) {}

    /** Runs a launcher to its exit; one that serves instead (main's behaviour) fails the test, not hangs it. */
    private Run launch(String launcher, Path configDir, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(
                List.of("bash", ROOT.resolve("bin").resolve(launcher).toString(), "-c", configDir.toString()));
        command.addAll(List.of(args));
        Path err = Files.createTempFile(tmp, launcher, ".err");
        Process process = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(err.toFile())
                .start();
        try {
            boolean exited = process.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(exited)
                    .as("%s %s exits; it said: %s", launcher, List.of(args), Files.readString(err))
                    .isTrue();
            return new Run(process.exitValue(), Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            process.destroyForcibly();
        }
    }

    private Path master(String name, Map<String, String> values) throws IOException {
        Map<String, String> all =
                new HashMap<>(Map.of("publish_port", "0", "ret_port", "0", "pki_dir", "pki", "cachedir", "cache"));
        all.putAll(values);
        return MetricsEndpointIT.config(tmp.resolve(name), "master.yaml", all);
    }

    /**
     * The daemon's entry point in this JVM, as the launcher runs it ({@code -c configDir} and {@code args}), to its
     * exit code and standard error. A daemon that serves instead of refusing fails the test, not hangs it.
     */
    private Run run(String launcher, Path configDir, String... args) {
        List<String> all = new ArrayList<>(List.of("-c", configDir.toString()));
        all.addAll(List.of(args));
        Object main = launcher.equals("brine-master") ? new MasterMain() : new MinionMain();
        CommandRun.Result result = assertTimeoutPreemptively(
                WAIT, () -> CommandRun.run(main, all.toArray(String[]::new)), () -> launcher + " " + all + " exits");
        return new Run(result.exit(), result.err());
    }

    /** The check and the start both refuse with exit 2 and {@code expected} on standard error. */
    private void refused(String launcher, Path configDir, String... expected) throws Exception {
        Run check = run(launcher, configDir, "--check-config");
        assertThat(check.exit()).as(check.err()).isEqualTo(2);
        assertThat(check.err()).contains(expected).doesNotContain("Exception").doesNotContain("configuration OK");
        Run start = run(launcher, configDir);
        assertThat(start.exit()).as(start.err()).isEqualTo(2);
        assertThat(start.err()).contains(expected).doesNotContain("Exception");
    }

    /** As {@link #refused}, and the launcher script, run once as the admin runs it, passes the refusal through. */
    private void refusedThroughTheLauncher(String launcher, Path configDir, String... expected) throws Exception {
        refused(launcher, configDir, expected);
        Run start = launch(launcher, configDir);
        assertThat(start.exit()).as(start.err()).isEqualTo(2);
        assertThat(start.err()).contains(expected).doesNotContain("Exception");
    }

    @Test
    void aMasterWhoseLogDirectoryIsMissingRefusesToStart() throws Exception {
        Path log = tmp.resolve("no-such-dir/master.log");
        Path config = master("master", Map.of("log_file", log.toString()));

        refusedThroughTheLauncher(
                "brine-master",
                config,
                "Master cannot start: log_file " + log
                        + " cannot be created: directory "
                        + log.getParent() + " does not exist",
                "directory " + tmp + " is owned by root:",
                "this process runs as root (uid 0)",
                "Fix: create it writable by root (install -d -o root " + log.getParent());
        assertThat(log.getParent()).doesNotExist();
        assertThat(config.resolve("cache"))
                .as("refused before anything is opened")
                .doesNotExist();
    }

    @Test
    void aMasterWhoseLogPathRunsThroughARegularFileRefusesToStart() throws Exception {
        Path file = Files.writeString(tmp.resolve("a-file"), "");
        Path log = file.resolve("master.log");
        Path config = master("master", Map.of("log_file", log.toString()));

        refused(
                "brine-master",
                config,
                "log_file " + log + " cannot be created: not a directory (regular file " + file + " is owned by root:",
                "this process runs as root (uid 0)",
                "Fix: " + file + " must be a directory, or set log_file elsewhere");
    }

    @Test
    void aMasterWhoseLogOrAuditLogIsOnAReadOnlyFileSystemRefusesToStartAndTheCheckLeavesNothingBehind()
            throws Exception {
        try (TinyFileSystem logs = TinyFileSystem.mount(tmp.resolve("logs"), "1m")) {
            Path log = logs.root().resolve("master.log");
            Path audit = logs.root().resolve("audit/audit.log");
            Path config = master("master", Map.of("log_file", log.toString(), "audit_log", audit.toString()));

            // Writable: the check creates nothing a daemon running as another user could then not open.
            Run ok = run("brine-master", config, "--check-config");
            assertThat(ok.exit()).as(ok.err()).isZero();
            assertThat(logs.root()).isEmptyDirectory();

            logs.remountReadOnly();
            refused(
                    "brine-master",
                    config,
                    "log_file " + log + " cannot be created: read-only file system"
                            + " (directory " + logs.root() + " is owned by root:root (uid 0), mode 0700;"
                            + " this process runs as root (uid 0)",
                    "audit_log " + audit + " cannot be created: read-only" + " file system (directory " + logs.root());
        }
    }

    @Test
    void aMinionWhoseLogIsOnAReadOnlyFileSystemRefusesToStart() throws Exception {
        try (TinyFileSystem logs = TinyFileSystem.mount(tmp.resolve("logs"), "1m")) {
            Path log = logs.root().resolve("minion.log");
            Files.writeString(log, "an earlier run's line\n");
            logs.remountReadOnly();
            Path config = MetricsEndpointIT.config(
                    tmp.resolve("web1"),
                    "minion.yaml",
                    Map.of("id", "web1", "pki_dir", "pki", "cachedir", "cache", "log_file", log.toString()));

            refusedThroughTheLauncher(
                    "brine-minion",
                    config,
                    "Minion cannot start: log_file " + log
                            + " cannot be opened for writing: read-only file system (regular file " + log
                            + " is owned by root:root (uid 0)",
                    "this process runs as root (uid 0)");
        }
    }

    @Test
    void aMasterWhosePkiDirIsARegularFileRefusesToStartNamingItsOwnerAndTheFix() throws Exception {
        Path pki = Files.writeString(tmp.resolve("pki-file"), "");
        Path config = master("master", Map.of("pki_dir", pki.toString()));

        refused(
                "brine-master",
                config,
                "Master cannot start: pki_dir " + pki + " is not a directory (regular file " + pki
                        + " is owned by root:root (uid 0), mode ",
                "this process runs as root (uid 0)",
                "Fix: " + pki + " must be a directory, or set pki_dir elsewhere");
    }

    @Test
    void aMasterWhosePkiDirOrCachedirIsOnAReadOnlyFileSystemRefusesToStart() throws Exception {
        try (TinyFileSystem disk = TinyFileSystem.mount(tmp.resolve("disk"), "1m")) {
            Path pki = Files.createDirectory(disk.root().resolve("pki"));
            Path cache = disk.root().resolve("cache");
            Path config = master(
                    "master",
                    Map.of(
                            "pki_dir",
                            pki.toString(),
                            "cachedir",
                            cache.toString(),
                            "audit_log",
                            tmp.resolve("audit.log").toString()));
            disk.remountReadOnly();

            refused(
                    "brine-master",
                    config,
                    "Master cannot start: pki_dir " + pki + " is not writable: read-only" + " file system (directory "
                            + pki + " is owned by root:root (uid 0)",
                    "this process runs as root (uid 0)",
                    "Fix: the file system holding " + pki
                            + " is mounted read-only: mount it read-write, or set pki_dir elsewhere",
                    "Master cannot start: cachedir " + cache + " cannot be created: read-only file system (directory "
                            + disk.root() + " is owned by root:root (uid 0)");
        }
    }

    @Test
    void aMasterWhosePkiLockIsADirectoryRefusesToStart() throws Exception {
        Path pki = Files.createDirectory(tmp.resolve("pki"));
        Path lock = Files.createDirectory(pki.resolve(".lock"));
        Path config = master("master", Map.of("pki_dir", pki.toString()));

        refused(
                "brine-master",
                config,
                "Master cannot start: pki_dir " + pki + ": " + lock + " cannot be opened"
                        + " for writing: is a directory (directory " + lock + " is owned by root:root (uid 0), mode ",
                "this process runs as root (uid 0)",
                "Fix: " + lock + " must be a regular file: remove the directory");
    }
}

package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.ConnectionLimits;
import io.brine.daemon.files.TrustedPath;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * brine-master --check-config says which acceptance policies the ownership rule disables, and refuses connection caps
 * set over the process's file limit as the master's start does.
 */
class MasterCheckConfigTest {

    @TempDir
    Path dir;

    @Test
    void anAutosignFileOwnedByAnotherUserIsNamedAndTheCheckFails() throws Exception {
        assertThat(TrustedPath.processUid())
                .as("setting a file's owner needs root: run the tests as root")
                .isZero();
        Path etc = Files.createDirectory(dir.resolve("etc"));
        Path autosign = Files.writeString(etc.resolve("autosign.conf"), "*.example.com\n");
        Files.setPosixFilePermissions(autosign, PosixFilePermissions.fromString("rw-r--r--"));
        Files.writeString(
                etc.resolve("master.yaml"), "pki_dir: ../pki\ncachedir: ../cache\n" + "autosign_file: autosign.conf\n");
        assertThat(check(etc).exit).isZero();

        Files.setOwner(
                autosign, dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        Checked checked = check(etc);

        assertThat(checked.exit).isEqualTo(2);
        assertThat(checked.err)
                .contains("autosign_file " + autosign + " is not trusted, the policy is disabled: ", "owned by nobody");
    }

    @Test
    void aMaxConnectionsOverTheFileLimitFailsTheCheckNamingTheLimitTheCapsAndTheFix() throws Exception {
        long limit = ConnectionCaps.fileLimit();
        assertThat(limit).as("a Unix JVM's RLIMIT_NOFILE").isBetween(1L, (long) ConnectionLimits.MAX_VALUE);
        Path etc = Files.createDirectory(dir.resolve("etc"));
        Files.writeString(
                etc.resolve("master.yaml"),
                "pki_dir: ../pki\ncachedir: ../cache\ntransport: tcp\n" + "max_connections: " + limit + "\n");

        Checked checked = check(etc);

        assertThat(checked.exit).isEqualTo(2);
        assertThat(checked.err)
                .contains(
                        "master.yaml: max_connections " + limit + " (tcp " + limit,
                        "file limit (RLIMIT_NOFILE) of " + limit + " open files",
                        "LimitNOFILE=",
                        "ulimit -n",
                        "lower max_connections to");
    }

    private record Checked(int exit, String err) {}

    private static Checked check(Path etc) {
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int exit = new CommandLine(new MasterMain()).execute("-c", etc.toString(), "--check-config");
            return new Checked(exit, err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }
}

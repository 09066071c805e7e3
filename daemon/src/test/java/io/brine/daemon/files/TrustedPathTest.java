package io.brine.daemon.files;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ownership rule, component by component (these run as whoever runs the tests: that user is trusted). */
class TrustedPathTest {

    @TempDir
    Path dir;

    final TrustedPath trust = TrustedPath.forThisProcess();

    @Test
    void aFileOnlyItsOwnerCanWriteInADirectoryOnlyItsOwnerCanWriteIsTrusted() throws Exception {
        Path file = Files.writeString(dir.resolve("autosign.conf"), "web1\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));

        assertThat(trust.problem(file)).isEmpty();
        assertThat(trust.problem(dir.resolve("missing"))).isEmpty();
    }

    @Test
    void aDirectoryOthersCanWriteIsTrustedOnlyWithTheStickyBit() throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"));
        Path file = Files.writeString(open.resolve("autosign.conf"), "web1\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        Files.setAttribute(open, "unix:mode", 0777);
        assertThat(trust.problem(file))
                .hasValueSatisfying(problem ->
                        assertThat(problem).contains("directory " + open + " is writable by its group (mode 0777)"));

        Files.setAttribute(open, "unix:mode", 01777);
        assertThat(trust.problem(file)).isEmpty();
    }

    @Test
    void aFileOthersCanWriteIsNotTrustedEvenWithTheStickyBit() throws Exception {
        Path file = Files.writeString(dir.resolve("policy"), "#!/bin/sh\n");
        Files.setAttribute(file, "unix:mode", 01757);

        assertThat(trust.problem(file))
                .hasValueSatisfying(problem -> assertThat(problem).startsWith(file + " is writable by others"));
    }

    @Test
    void aLinkIsFollowedToItsTargetAndALoopIsAProblem() throws Exception {
        Path target = Files.writeString(dir.resolve("real"), "web1\n");
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-rw-rw-"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), target);
        assertThat(trust.problem(link))
                .hasValueSatisfying(problem -> assertThat(problem)
                        .contains(target + " is writable by its group")
                        .contains("symbolic link " + link));

        Path a = dir.resolve("a");
        Files.createSymbolicLink(a, dir.resolve("b"));
        Files.createSymbolicLink(dir.resolve("b"), a);
        assertThat(trust.problem(a))
                .hasValueSatisfying(problem -> assertThat(problem).contains("too many levels of symbolic links"));
    }
}

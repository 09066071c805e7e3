package io.brine.daemon.files;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WritableFileTest {

    @TempDir
    Path dir;

    @Test
    void aDirectoryThatListsHasNoReadProblem() throws Exception {
        Files.writeString(dir.resolve("master.pub"), "x");
        assertThat(WritableFile.unreadableDirectory(dir)).isEmpty();
    }

    @Test
    void aDirectoryThatCannotBeListedNamesTheReasonTheOwnerTheModeAndTheUser() throws Exception {
        Path file = Files.writeString(dir.resolve("pki"), "not a directory");
        assertThat(WritableFile.unreadableDirectory(file))
                .hasValueSatisfying(problem -> assertThat(problem)
                        .startsWith(file + " cannot be read: not a directory (regular file " + file + " is owned by ")
                        .contains(", mode 0")
                        .endsWith("; this process runs as " + System.getProperty("user.name") + " (uid "
                                + TrustedPath.processUid() + "))"));
    }
}

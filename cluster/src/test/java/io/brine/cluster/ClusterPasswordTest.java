package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ZooKeeper password opens every key of the cluster: only a file nobody else can read or write is used. */
class ClusterPasswordTest {

    @TempDir
    Path dir;

    private Path file(String mode) throws IOException {
        Path file = Files.writeString(dir.resolve("zk.password"), "s3cret\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    @Test
    void aPrivateFileIsRead() throws IOException {
        assertThat(ClusterConnection.readPassword(file("rw-------"))).isEqualTo("s3cret");
    }

    @Test
    void aFileOthersCanReadIsRefusedNamingIt() throws IOException {
        Path file = file("rw-r-----");
        assertThatThrownBy(() -> ClusterConnection.readPassword(file))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("open to group or others");
    }

    @Test
    void anyGroupOrOthersBitIsRefusedAsTheReadmeSays() throws IOException {
        Path file = file("rw---x---");
        assertThatThrownBy(() -> ClusterConnection.readPassword(file))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("open to group or others");
    }

    @Test
    void aFileOthersCanWriteIsRefused() throws IOException {
        Path file = file("rw-----w-");
        assertThatThrownBy(() -> ClusterConnection.readPassword(file))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not trusted");
    }
}

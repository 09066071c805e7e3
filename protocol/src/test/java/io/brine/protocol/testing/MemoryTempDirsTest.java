package io.brine.protocol.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MemoryTempDirsTest {

    @TempDir
    Path dir;

    @Test
    void theSuitesTempDirsAreInMemoryWhereTheMachineHasAUsableTmpfs() {
        Path expected = MemoryTempDirs.ROOT.orElse(Path.of(System.getProperty("java.io.tmpdir")));
        assertThat(dir.toAbsolutePath()).startsWith(expected.toAbsolutePath());
    }

    @Test
    void onlyAWritableTmpfsThatRunsFilesAndHasAGibibyteFreeIsUsed() {
        Path shm = MemoryTempDirs.SHM;
        String line = "tmpfs /dev/shm tmpfs rw,nosuid,nodev%s 0 0";
        List<String> before = List.of("sysfs /sys sysfs rw 0 0");
        if (MemoryTempDirs.ROOT.isPresent()) {
            assertThat(MemoryTempDirs.root(shm, List.of(line.formatted("")))).contains(shm);
        }
        assertThat(MemoryTempDirs.root(shm, List.of(line.formatted(",noexec")))).isEmpty();
        assertThat(MemoryTempDirs.root(shm, List.of("/dev/vda /dev/shm ext4 rw 0 0")))
                .isEmpty();
        assertThat(MemoryTempDirs.root(shm, before)).isEmpty();
        // The last mount on the directory is the one in force.
        assertThat(MemoryTempDirs.root(shm, List.of(line.formatted(""), line.formatted(",noexec"))))
                .isEmpty();
        // A directory that is not there, whatever /proc/mounts says.
        Path missing = dir.resolve("missing");
        assertThat(MemoryTempDirs.root(missing, List.of("tmpfs " + missing + " tmpfs rw 0 0")))
                .isEmpty();
    }
}

package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgainstSaltTest {

    @TempDir
    Path dir;

    @Test
    void aMissingSaltDirectoryIsOneClearLineNamingIt() {
        assertThat(AgainstSalt.missingSalt(dir.resolve("shared/salt")))
                .hasValueSatisfying(line -> assertThat(line)
                        .contains(dir.resolve("shared/salt").toString())
                        .contains("no such directory")
                        .contains("--salt-dir"));
    }

    @Test
    void aSaltDirectoryWithoutTheRunnerOrTheReleaseIsRefused() throws Exception {
        assertThat(AgainstSalt.missingSalt(dir))
                .hasValueSatisfying(line -> assertThat(line).contains("salt-3008.2.tar.gz"));
        Files.createFile(
                dir.resolve("salt"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        assertThat(AgainstSalt.missingSalt(dir)).isPresent();

        Files.createFile(dir.resolve("salt-3008.2.tar.gz"));
        assertThat(AgainstSalt.missingSalt(dir)).isEmpty();
    }

    @Test
    void theSaltMastersConfigChangesOnlyWhatALoopbackRunMust() {
        String config = MasterProcess.saltConfig(dir, 40001, 40002, "bench");

        assertThat(config)
                .contains(
                        "interface: 127.0.0.1\n",
                        "publish_port: 40001\n",
                        "ret_port: 40002\n",
                        "user: bench\n",
                        "auto_accept: True\n",
                        "pki_dir: " + dir.resolve("pki") + "\n");
        assertThat(config).doesNotContain("worker_threads", "transport");
    }

    @Test
    void theProportionalSetSizeIsReadFromSmapsRollup() {
        String rollup = "55d0-7ffd ---p 00000000 00:00 0 [rollup]\nRss:               76680 kB\n"
                + "Pss:               19665 kB\nPss_Dirty:          9000 kB\n";

        assertThat(ProcStats.pssKib(rollup)).isEqualTo(19665);
    }

    @Test
    void treeCpuCountsReapedChildrenOnlyWhenAsked() {
        String stat = "42 (salt-master (x)) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 20 10 20 0 1 0 1 1 1";

        assertThat(ProcStats.cpuTicks(stat, false)).isEqualTo(10);
        assertThat(ProcStats.cpuTicks(stat, true)).isEqualTo(40);
    }
}

package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgainstSaltTest {

    @TempDir
    Path dir;

    @Test
    void aMissingSaltDirectoryIsOneClearLineNamingIt() {
        assertThat(AgainstSalt.missingSalt(dir.resolve("shared/salt/salt")))
                .hasValueSatisfying(line -> assertThat(line)
                        .contains(dir.resolve("shared/salt").toString())
                        .contains("no such directory")
                        .contains("--salt-dir"));
    }

    @Test
    void aSaltDirectoryWithoutTheRunnerOrTheReleaseIsRefused() throws Exception {
        Path script = dir.resolve("salt");
        assertThat(AgainstSalt.missingSalt(script))
                .hasValueSatisfying(line -> assertThat(line).contains("salt-3008.2.tar.gz"));
        Files.createFile(script, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        assertThat(AgainstSalt.missingSalt(script)).isPresent();

        Files.createFile(dir.resolve("salt-3008.2.tar.gz"));
        assertThat(AgainstSalt.missingSalt(script)).isEmpty();
    }

    @Test
    void theSaltScriptIsSaltDirsElseTheOneBrineSaltNamesElseTheSharedOneBesideTheCheckout() {
        Path home = dir.resolve("clone");
        Path shared = dir.resolve("shared/salt/salt");
        Path named = dir.resolve("elsewhere/shared/salt/salt");
        Path given = dir.resolve("given");

        assertThat(AgainstSalt.saltScript(Optional.of(given), Optional.of(named.toString()), home))
                .isEqualTo(given.resolve("salt"));
        assertThat(AgainstSalt.saltScript(Optional.empty(), Optional.of(named.toString()), home))
                .isEqualTo(named);
        assertThat(AgainstSalt.saltScript(Optional.empty(), Optional.empty(), home))
                .isEqualTo(shared);
        assertThat(AgainstSalt.saltScript(Optional.empty(), Optional.of(""), home))
                .isEqualTo(shared);
    }

    @Test
    void onlyBrinesAuthLineCarriesTheFirstAuthTarget() {
        Map<String, Object> figures = Map.of(
                "master_cpu_ms_per_auth", 6.0,
                "master_cpu_ms_per_auth_without_jit", 4.0,
                "auths_per_s", 100.0,
                "wall_ms", 10_000.0);
        RsaLimits limits = new RsaLimits(500, 20_000, 10_000, 1.0); // a private op of 2 ms: 3 private ops per auth

        assertThat(AuthScenario.line(1000, figures, limits, true))
                .contains("= 3.00 private ops (2.00 without the JIT compiler)")
                .endsWith("[target <= 1.5: MISSED]");
        assertThat(AuthScenario.line(1000, figures, limits, false))
                .contains("= 3.00 private ops (2.00 without the JIT compiler)")
                .doesNotContain("target", "MISSED", "met");
    }

    @Test
    void theSaltMastersRestartHasNoTargetNorBrinesCounters() {
        RestartScenario.Recovery salt = new RestartScenario.Recovery(
                RestartScenario.SALT_MASTER, 10_000, 4000, 9000, 3000, 500, 0, 10_000, 0, 0, 1, 0);
        RestartScenario.Recovery brine =
                new RestartScenario.Recovery("resuming", 10_000, 4000, 9000, 3000, 500, 10_000, 0, 0, 0, 1, 0);

        assertThat(brine.met(2.0)).isTrue();
        assertThat(brine.line(2.0)).contains("target at 10,000", "resumed", "signed answers");
        assertThat(salt.met(2.0)).isNull();
        assertThat(salt.line(2.0))
                .startsWith("restart  salt-master: 10,000 minions served 9000 ms")
                .contains("0.025 private ops per minion")
                .doesNotContain("target", "resumed", "resumptions", "signed answers", "JIT");
        assertThat(salt.figures(2.0))
                .containsEntry("full_auths", 10_000L)
                .containsEntry("served_ms", 9000.0)
                .doesNotContainKeys("met", "resumed", "resumptions_refused", "signed_answers_from_budget");
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

package io.brine.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.testing.ExampleConfigs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The shipped {@code conf/master.yaml} and the code cannot drift apart: these tests tie them together. */
class MasterExampleConfigTest {

    private static final Path EXAMPLE = ExampleConfigs.example("master.yaml");

    @TempDir
    Path dir;

    @Test
    void shippedExampleLoadsWithoutProblems() throws Exception {
        assertThat(MasterConfig.loadFile(EXAMPLE))
                .isEqualTo(MasterConfig.builder().build());
    }

    @Test
    void everyDocumentedDefaultIsTheRealDefault() throws Exception {
        Path file = Files.writeString(dir.resolve("master.yaml"), ExampleConfigs.withDefaultsUncommented(EXAMPLE));
        assertThat(MasterConfig.loadFile(file)).isEqualTo(MasterConfig.builder().build());
    }

    @Test
    void everyProseExampleLoads() throws Exception {
        String examples = ExampleConfigs.proseExamples(EXAMPLE);
        assertThat(examples).contains("publisher_acl:", "autosign_tokens:", "tls:", "autosign_claims:");
        MasterConfig config = MasterConfig.loadFile(Files.writeString(dir.resolve("master.yaml"), examples));
        assertThat(config.tls()).isPresent();
        assertThat(config.publisherAcl()).isNotEmpty();
        assertThat(config.acceptance().autosignTokens()).isNotEmpty();
        assertThat(config.acceptance().autosignClaims()).isNotEmpty();
        assertThat(config.nodegroups()).containsKeys("web", "dbs", "debian_web");
    }

    @Test
    void everyKeyIsDocumented() throws Exception {
        List<String> keys = ExampleConfigs.keys(
                MasterConfig.class,
                Set.of(
                        MasterConfig.Acceptance.class,
                        ConnectionLimits.class,
                        MasterConfig.FileServer.class,
                        MasterConfig.ClientCerts.class),
                Map.of(
                        "interfaceAddress",
                        "interface",
                        "keepJobs",
                        "keep_jobs_seconds",
                        "transports",
                        "transport",
                        "masterSignPub",
                        "master_sign_pubkey"));
        keys.add("master_sign_key_name");
        assertThat(keys)
                .contains(
                        "interface",
                        "keep_jobs_seconds",
                        "auto_accept",
                        "tls.cert",
                        "publisher_acl.targets",
                        "autosign_tokens.single_use")
                .hasSizeGreaterThan(35);
        for (String key : keys) {
            assertThat(ExampleConfigs.documents(EXAMPLE, key))
                    .as("conf/master.yaml documents %s", key)
                    .isTrue();
        }
    }
}

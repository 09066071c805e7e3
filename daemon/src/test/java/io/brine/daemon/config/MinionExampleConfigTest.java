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

/** The shipped {@code conf/minion.yaml} and the code cannot drift apart: these tests tie them together. */
class MinionExampleConfigTest {

    private static final Path EXAMPLE = ExampleConfigs.example("minion.yaml");
    private static final String HOST = "web1.example.com";

    @TempDir
    Path dir;

    private static MinionConfig load(Path file) throws Exception {
        return MinionConfigFile.read(file, () -> HOST);
    }

    @Test
    void shippedExampleLoadsWithoutProblems() throws Exception {
        assertThat(load(EXAMPLE)).isEqualTo(MinionConfig.builder().id(HOST).build());
    }

    @Test
    void everyDocumentedDefaultIsTheRealDefault() throws Exception {
        Path file = Files.writeString(dir.resolve("minion.yaml"), ExampleConfigs.withDefaultsUncommented(EXAMPLE));
        assertThat(load(file)).isEqualTo(MinionConfig.builder().id(HOST).build());
    }

    @Test
    void everyProseExampleLoads() throws Exception {
        String examples = ExampleConfigs.proseExamples(EXAMPLE);
        assertThat(examples).contains("grains:", "functions:");
        MinionConfig config = load(Files.writeString(dir.resolve("minion.yaml"), examples));
        assertThat(config.grains()).isNotEmpty();
        assertThat(config.functions()).isNotEqualTo(MinionConfig.Functions.defaults());
        assertThat(config.tls()).isPresent();
    }

    @Test
    void everyKeyIsDocumented() throws Exception {
        // masters is master written as a list, with master_type: failover; masterSignPub comes from
        // verify_master_pubkey_sign and master_sign_key_name.
        List<String> keys = ExampleConfigs.keys(
                MinionConfig.class,
                Set.of(MinionConfig.Auth.class),
                Map.of("masters", "master_type", "masterSignPub", "verify_master_pubkey_sign"));
        keys.add("master_sign_key_name");
        assertThat(keys)
                .contains("id", "acceptance_wait_time_max", "functions.allow", "autosign_token")
                .hasSizeGreaterThan(25);
        for (String key : keys) {
            assertThat(ExampleConfigs.documents(EXAMPLE, key))
                    .as("conf/minion.yaml documents %s", key)
                    .isTrue();
        }
    }
}

package io.brine.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code master: [m1, m2]} with {@code master_type: failover} and {@code random_master}, as in Salt. */
class MinionFailoverConfigTest {

    @TempDir
    Path dir;

    private MinionConfig load(String yaml) throws Exception {
        Files.writeString(dir.resolve("minion.yaml"), "id: web1\n" + yaml);
        return MinionConfig.load(dir);
    }

    private List<String> problems(String yaml) throws Exception {
        Files.writeString(dir.resolve("minion.yaml"), "id: web1\n" + yaml);
        return catchThrowableOfType(ConfigException.class, () -> MinionConfig.load(dir)).problems().stream()
                .map(p -> p.key() + ": " + p.message())
                .toList();
    }

    @Test
    void oneMasterIsTheDefault() throws Exception {
        MinionConfig config = load("master: m1.example.com\n");
        assertThat(config.master()).isEqualTo("m1.example.com");
        assertThat(config.masters()).isEmpty();
        assertThat(config.randomMaster()).isFalse();
    }

    @Test
    void aListOfMastersWithFailover() throws Exception {
        MinionConfig config = load(
                "master: [m1.example.com, 'm2:4516', '[::1]:4526']\nmaster_type: failover\n" + "random_master: true\n");
        assertThat(config.masters()).containsExactly("m1.example.com", "m2:4516", "[::1]:4526");
        assertThat(config.master()).isEqualTo("m1.example.com");
        assertThat(config.randomMaster()).isTrue();
    }

    @Test
    void aListNeedsFailoverAndFailoverNeedsAList() throws Exception {
        assertThat(problems("master: [m1, m2]\n"))
                .containsExactly("master: a list of masters needs master_type:"
                        + " failover (brine holds one session at a time; Salt's multi-master is not supported)");
        assertThat(problems("master: m1\nmaster_type: failover\nrandom_master: true\n"))
                .containsExactly(
                        "master_type: failover needs master as a list of masters",
                        "random_master: needs master as a list of masters (with master_type: failover)");
        assertThat(problems("master: [m1]\nmaster_type: failover\n"))
                .containsExactly("master: list two masters or more, or write the one master alone");
        assertThat(problems("master: ['m1:99999', m2]\nmaster_type: failover\n"))
                .containsExactly("master: expected host or host:port with a port from 1 to 65535, got \"m1:99999\"");
        assertThat(problems("master: m1\nmaster_type: multi\n")).hasSize(1).allMatch(p -> p.startsWith("master_type"));
    }
}

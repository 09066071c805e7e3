package io.brine.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.tuple;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClusterConfigTest {

    @TempDir
    Path dir;

    private MasterConfig load(String yaml) throws Exception {
        Files.writeString(dir.resolve("master.yaml"), yaml);
        return MasterConfig.load(dir);
    }

    private List<ConfigProblem> problems(String yaml) throws IOException {
        Files.writeString(dir.resolve("master.yaml"), yaml);
        return catchThrowableOfType(ConfigException.class, () -> MasterConfig.load(dir))
                .problems();
    }

    @Test
    void withoutAClusterSectionTheMasterRunsAlone() throws Exception {
        assertThat(load("publish_port: 4505\n").cluster()).isEmpty();
        assertThat(MasterConfig.defaults(dir).cluster()).isEmpty();
    }

    @Test
    void readsEveryClusterKey() throws Exception {
        MasterConfig config = load("""
                cluster:
                  connect: zk1.example.com:2181,zk2:2181,[::1]:2182
                  root: /brine/prod
                  session_timeout: 30
                  auth:
                    user: brine
                    password_file: zk.pass
                """);
        assertThat(config.cluster())
                .contains(new ClusterConfig(
                        "zk1.example.com:2181,zk2:2181,[::1]:2182",
                        "/brine/prod",
                        Duration.ofSeconds(30),
                        Optional.of(new ClusterConfig.Auth("brine", dir.resolve("zk.pass")))));
    }

    @Test
    void onlyTheConnectStringIsRequired() throws Exception {
        assertThat(load("cluster:\n  connect: 127.0.0.1:2181\n").cluster())
                .contains(ClusterConfig.of("127.0.0.1:2181"));
        assertThat(ClusterConfig.of("127.0.0.1:2181").root()).isEqualTo("/brine");
        assertThat(ClusterConfig.of("127.0.0.1:2181").sessionTimeout()).isEqualTo(Duration.ofSeconds(15));
    }

    @Test
    void anOpenAclIsOnlyTakenWhenSaidAndNeverWithAuth() throws Exception {
        assertThat(load("cluster:\n  connect: 127.0.0.1:2181\n")
                        .cluster()
                        .orElseThrow()
                        .insecureOpenAcl())
                .isFalse();
        assertThat(load("cluster:\n  connect: 127.0.0.1:2181\n  insecure_open_acl: true\n")
                        .cluster())
                .contains(ClusterConfig.of("127.0.0.1:2181").withInsecureOpenAcl());
        assertThat(problems("cluster:\n  connect: 127.0.0.1:2181\n  insecure_open_acl: true\n  auth:\n"
                        + "    user: brine\n    password_file: zk.pass\n"))
                .extracting(ConfigProblem::key)
                .containsExactly("cluster.insecure_open_acl");
    }

    @Test
    void reportsEveryClusterProblemAtOnceWithItsLine() throws IOException {
        List<ConfigProblem> problems = problems("""
                cluster:
                  connect: zk1:2181;zk2
                  root: brine
                  session_timeout: 1
                  auth:
                    password: secret
                  conect: x
                """);
        assertThat(problems)
                .extracting(ConfigProblem::line, ConfigProblem::key)
                .containsExactlyInAnyOrder(
                        tuple(2, "cluster.connect"),
                        tuple(3, "cluster.root"),
                        tuple(4, "cluster.session_timeout"),
                        tuple(6, "cluster.auth.user"),
                        tuple(6, "cluster.auth.password_file"),
                        tuple(6, "cluster.auth.password"),
                        tuple(7, "cluster.conect"));
        assertThat(problems).extracting(ConfigProblem::message).doesNotContain("secret");
    }

    @Test
    void connectTimeoutIsFromOneToSixHundredSecondsFifteenByDefault() throws Exception {
        String cluster = "cluster:\n  connect: 127.0.0.1:2181\n";
        assertThat(load(cluster).cluster().orElseThrow().connectTimeout()).isEqualTo(Duration.ofSeconds(15));
        assertThat(load(cluster + "  connect_timeout: 1\n").cluster())
                .contains(ClusterConfig.of("127.0.0.1:2181").withConnectTimeout(Duration.ofSeconds(1)));
        assertThat(load(cluster + "  connect_timeout: 600\n")
                        .cluster()
                        .orElseThrow()
                        .connectTimeout())
                .isEqualTo(Duration.ofSeconds(600));
        for (String past : List.of("0", "601", "1.5", "soon")) {
            assertThat(problems(cluster + "  connect_timeout: " + past + "\n"))
                    .extracting(ConfigProblem::line, ConfigProblem::key)
                    .containsExactly(tuple(3, "cluster.connect_timeout"));
        }
        assertThatThrownBy(() -> ClusterConfig.of("zk1:2181").withConnectTimeout(Duration.ofMillis(999)))
                .hasMessageContaining("connectTimeout");
    }

    @Test
    void aClusterWithoutConnectIsAProblem() throws IOException {
        assertThat(problems("cluster:\n  root: /brine\n"))
                .extracting(ConfigProblem::key, ConfigProblem::message)
                .containsExactly(tuple(
                        "cluster.connect", "is required with cluster (the ZooKeeper ensemble, zk1:2181,zk2:2181)"));
    }

    @Test
    void recordRefusesWhatNoFileCouldSay() {
        assertThatThrownBy(() -> ClusterConfig.of("zk1")).hasMessageContaining("host:port");
        assertThatThrownBy(() -> ClusterConfig.of("zk1:99999")).hasMessageContaining("port 99999");
        assertThatThrownBy(() -> ClusterConfig.of("zk1:2181").withRoot("/Brine"))
                .hasMessageContaining("root");
        assertThatThrownBy(() -> ClusterConfig.of("zk1:2181").withRoot("/")).hasMessageContaining("root");
    }
}

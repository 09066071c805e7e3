package io.brine.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.tuple;

import io.brine.daemon.config.MinionConfig.Auth;
import io.brine.daemon.config.MinionConfig.Functions;
import io.brine.protocol.InvalidIdException;
import java.io.IOException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MinionConfigTest {

    private static final String FINGER =
            "8f:2c:1e:00:aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:01:23:45:67:89:ab";

    /** For the tests that set id: the host's name must not even be asked. */
    private static final MinionConfigFile.HostName NOT_ASKED = () -> {
        throw new AssertionError("the host name was looked up although id is set");
    };

    @TempDir
    Path dir;

    private Path write(String yaml) throws IOException {
        return Files.writeString(dir.resolve("minion.yaml"), yaml);
    }

    private MinionConfig load(String yaml) throws Exception {
        return MinionConfigFile.read(write(yaml), NOT_ASKED);
    }

    private List<ConfigProblem> problems(String yaml, MinionConfigFile.HostName hostName) throws IOException {
        Path file = write(yaml);
        return catchThrowableOfType(ConfigException.class, () -> MinionConfigFile.read(file, hostName))
                .problems();
    }

    @Test
    void emptyFileGivesTheDefaultsAndTheHostNameAsId() throws Exception {
        MinionConfig config = MinionConfigFile.read(write(""), () -> "Web1.Example.COM");
        assertThat(config)
                .isEqualTo(MinionConfig.builder().id("web1.example.com").build());
        assertThat(config.id()).isEqualTo("web1.example.com");
        assertThat(config.master()).isEqualTo("localhost");
        assertThat(config.retPort()).isEqualTo(4506);
        assertThat(config.publishPort()).isEqualTo(4505);
        assertThat(config.transport()).isEqualTo(TransportKind.ZEROMQ);
        assertThat(config.tcpPort()).isEqualTo(4507);
        assertThat(config.pkiDir()).isEqualTo(Path.of("/etc/brine/pki/minion"));
        assertThat(config.cachedir()).isEqualTo(Path.of("/var/cache/brine/minion"));
        assertThat(config.keysize()).isEqualTo(2048);
        assertThat(config.masterFinger()).isEmpty();
        assertThat(config.auth())
                .isEqualTo(new Auth(Duration.ofSeconds(30), Duration.ZERO, false, Duration.ofSeconds(60)));
        assertThat(config.grains()).isEmpty();
        assertThat(config.functions()).isEqualTo(new Functions(List.of("*"), List.of()));
        assertThat(config.pluginsDir()).isEmpty();
        assertThat(config.returnRetryMax()).isEqualTo(Duration.ofSeconds(300));
        assertThat(config.jobTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(config.workerThreads()).isEqualTo(4);
        assertThat(config.autosignGrant()).isEmpty();
        assertThat(config.autosignToken()).isEmpty();
        assertThat(config.logLevel()).isEqualTo(LogLevel.INFO);
        assertThat(config.logFile()).isEmpty();
        assertThat(config.statusFile()).isEqualTo(Path.of("/var/cache/brine/minion/status.json"));
    }

    @Test
    void testDefaultsKeepEveryPathUnderTheBase() {
        MinionConfig config = MinionConfig.defaults(dir, "m1");
        assertThat(config.pkiDir()).isEqualTo(dir.resolve("pki"));
        assertThat(config.cachedir()).isEqualTo(dir.resolve("cache"));
        assertThat(config.statusFile()).isEqualTo(dir.resolve("cache/status.json"));
    }

    @Test
    void readsEveryKey() throws Exception {
        MinionConfig config = load("""
                id: web1.example.com
                master: salt.example.com
                ret_port: 14506
                publish_port: 14505
                transport: tcp
                tcp_port: 14507
                pki_dir: pki
                cachedir: ../cache
                keysize: 3072
                master_finger: 8F2C1E00AABBCCDDEEFF00112233445566778899AABBCCDDEEFF0123456789AB
                acceptance_wait_time: 10
                acceptance_wait_time_max: 80
                rejected_retry: true
                auth_timeout: 5
                grains:
                  roles: [web, frontend]
                  virtual: yes
                  cores: 4
                functions:
                  deny: ['cmd.*']
                plugins_dir: plugins
                return_retry_max: 30
                job_timeout: 120
                worker_threads: 8
                autosign_grant: grant.json
                autosign_token: s3cr3t-t0ken
                log_level: trace
                log_file: /var/log/brine/minion.log
                status_file: /run/brine/status.json
                """);
        Path base = dir.toAbsolutePath();
        assertThat(config)
                .isEqualTo(MinionConfig.builder()
                        .id("web1.example.com")
                        .master("salt.example.com")
                        .retPort(14506)
                        .publishPort(14505)
                        .transport(TransportKind.TCP)
                        .tcpPort(14507)
                        .pkiDir(base.resolve("pki"))
                        .cachedir(base.getParent().resolve("cache"))
                        .keysize(3072)
                        .masterFinger(FINGER)
                        .auth(new Auth(Duration.ofSeconds(10), Duration.ofSeconds(80), true, Duration.ofSeconds(5)))
                        .grains(Map.of(
                                "roles", List.of("web", "frontend"), "virtual", List.of("yes"), "cores", List.of("4")))
                        .functions(new Functions(List.of("*"), List.of("cmd.*")))
                        .pluginsDir(base.resolve("plugins"))
                        .returnRetryMax(Duration.ofSeconds(30))
                        .jobTimeout(Duration.ofSeconds(120))
                        .workerThreads(8)
                        .autosignGrant(base.resolve("grant.json"))
                        .autosignToken(new Secret("s3cr3t-t0ken"))
                        .logLevel(LogLevel.TRACE)
                        .logFile(Path.of("/var/log/brine/minion.log"))
                        .statusFile(Path.of("/run/brine/status.json"))
                        .build());
        assertThat(config.masterFinger()).hasValue(FINGER);
        assertThat(config.autosignToken().orElseThrow().reveal()).isEqualTo("s3cr3t-t0ken");
    }

    @Test
    void theAutosignTokenNeverReachesToStringOrProblems() throws Exception {
        MinionConfig config = load("id: m1\nautosign_token: s3cr3t-t0ken\n");
        assertThat(config.toString()).doesNotContain("s3cr3t").contains("autosignToken=Optional[<redacted>]");

        ConfigException e =
                catchThrowableOfType(ConfigException.class, () -> load("id: m1\nautosign_token: \"s3cr3t\\u0000\"\n"));
        assertThat(e.getMessage())
                .contains("autosign_token: contains a control character")
                .doesNotContain("s3cr3t");
    }

    @Test
    void anInvalidIdIsReportedWithTheOneValidatorsReason() throws IOException {
        assertThat(problems("id: Web1\n", NOT_ASKED)).singleElement().satisfies(p -> {
            assertThat(p.line()).isEqualTo(1);
            assertThat(p.key()).isEqualTo("id");
            assertThat(p.message())
                    .isEqualTo("\"Web1\" is not valid: id has a character outside [a-z0-9._-] at position 0 (U+0057)");
        });
    }

    @Test
    void aHostNameThatIsNoValidIdAsksForId() throws IOException {
        Path file = dir.resolve("minion.yaml");
        assertThat(problems("", () -> "my host")).singleElement().satisfies(p -> {
            assertThat(p.line()).isZero();
            assertThat(p)
                    .hasToString(file + ": id: not set, and this host's name 'my host' is not a valid id"
                            + " (id has a character outside [a-z0-9._-] at position 2 (U+0020)): set id");
        });
        assertThat(problems("id:\n", () -> {
                    throw new UnknownHostException("box: Name or service not known");
                }))
                .singleElement()
                .satisfies(
                        p -> assertThat(p.message())
                                .isEqualTo(
                                        "not set, and this host's name cannot be resolved ('box: Name or service not known'): set id"));
    }

    @Test
    void tlsTrustsACaFileForTheTcpTransportOnly() throws Exception {
        MinionConfig config = load("id: m1\ntransport: tcp\ntls:\n  ca: tls/ca.crt\n");
        assertThat(config.tls())
                .hasValue(new MinionConfig.Tls(dir.toAbsolutePath().resolve("tls/ca.crt"), true));
        assertThat(load("id: m1\ntransport: tcp\ntls: {ca: ca.crt, verify_hostname: false}\n")
                        .tls()
                        .orElseThrow()
                        .verifyHostname())
                .isFalse();

        assertThat(problems("id: m1\ntls: {ca: ca.crt}\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.message())
                        .isEqualTo("applies to the tcp transport only: set transport: tcp, or remove tls"));
        assertThat(problems("id: m1\ntransport: tcp\ntls: {verify_hostname: true}\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.key()).isEqualTo("tls.ca"));
    }

    @Test
    void masterFingerIsNormalizedOrRefused() throws Exception {
        assertThat(load("id: m1\nmaster_finger: '" + FINGER.toUpperCase() + "'\n")
                        .masterFinger())
                .hasValue(FINGER);
        assertThat(problems("id: m1\nmaster_finger: ab:cd\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.message())
                        .startsWith("\"ab:cd\" is not valid: expected the master" + " key's SHA-256 fingerprint"));
    }

    @Test
    void reportsEveryProblemAtOnceWithItsLine() throws IOException {
        List<ConfigProblem> problems = problems("""
                id: web1
                master: http://salt
                ret_port: 4505
                rejected_retry: on
                acceptance_wait_time: 30s
                grains:
                  roles: {a: 1}
                functions:
                  allow: 'test.*'
                  denny: []
                keysize: 1024
                master: salt
                """, NOT_ASKED);
        assertThat(problems)
                .extracting(ConfigProblem::line, ConfigProblem::key)
                .containsExactly(
                        tuple(2, "master"),
                        tuple(3, "ret_port"),
                        tuple(4, "rejected_retry"),
                        tuple(5, "acceptance_wait_time"),
                        tuple(7, "grains.roles"),
                        tuple(9, "functions.allow"),
                        tuple(10, "functions.denny"),
                        tuple(11, "keysize"),
                        tuple(12, "master"));
        assertThat(problems.get(1).message())
                .isEqualTo("4505 is also publish_port (its default); the master's" + " ports must differ");
        assertThat(problems.get(6).message())
                .isEqualTo("unknown key, did you mean deny? (valid keys here: allow," + " deny)");
        assertThat(problems.get(8).message()).isEqualTo("duplicate key (first at line 2)");
    }

    @Test
    void verifyMasterPubkeySignReadsSaltsMasterSignPubFromPkiDirAndANameWithoutItIsAProblem() throws Exception {
        assertThat(load("id: m1\n").masterSignPub()).isEmpty();
        assertThat(load("id: m1\npki_dir: /p\nverify_master_pubkey_sign: true\n")
                        .masterSignPub())
                .hasValue(Path.of("/p/master_sign.pub"));
        assertThat(load("id: m1\npki_dir: /p\nverify_master_pubkey_sign: true\nmaster_sign_key_name: offline\n")
                        .masterSignPub())
                .hasValue(Path.of("/p/offline.pub"));
        assertThat(load("id: m1\nverify_master_pubkey_sign: false\n").masterSignPub())
                .isEmpty();
        assertThat(problems("id: m1\nmaster_sign_key_name: offline\n", NOT_ASKED))
                .singleElement()
                .satisfies(p ->
                        assertThat(p.message()).isEqualTo("has no effect without verify_master_pubkey_sign: true"));
        for (String name : List.of("../x", ".hidden", "a/b", "x".repeat(65))) {
            assertThat(problems(
                            "id: m1\nverify_master_pubkey_sign: true\nmaster_sign_key_name: '" + name + "'\n",
                            NOT_ASKED))
                    .singleElement()
                    .satisfies(p -> assertThat(p.key()).isEqualTo("master_sign_key_name"));
        }
        assertThat(load("id: m1\nverify_master_pubkey_sign: true\nmaster_sign_key_name: " + "x".repeat(64) + "\n")
                        .masterSignPub())
                .isPresent();
    }

    @Test
    void reconnectionBacksOffFromOneToFiveSecondsByDefaultAndIsBoundedAtItsLines() throws Exception {
        MinionConfig defaults = load("id: m1\n");
        assertThat(defaults.reconDefault()).isEqualTo(Duration.ofSeconds(1));
        assertThat(defaults.reconMax()).isEqualTo(Duration.ofSeconds(5));
        MinionConfig set = load("id: m1\nrecon_default: 100\nrecon_max: 3600000\n");
        assertThat(set.reconDefault()).isEqualTo(Duration.ofMillis(100));
        assertThat(set.reconMax()).isEqualTo(Duration.ofHours(1));
        assertThat(load("id: m1\nrecon_default: 60000\nrecon_max: 60000\n").reconMax())
                .isEqualTo(Duration.ofMinutes(1));
        assertThat(problems("id: m1\nrecon_default: 99\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.line()).isEqualTo(2))
                .satisfies(p -> assertThat(p.key()).isEqualTo("recon_default"));
        assertThat(problems("id: m1\nrecon_default: 60001\nrecon_max: 70000\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.key()).isEqualTo("recon_default"));
        assertThat(problems("id: m1\nrecon_max: 3600001\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.key()).isEqualTo("recon_max"));
        assertThat(problems("id: m1\nrecon_default: 2000\nrecon_max: 1999\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.line()).isEqualTo(3))
                .satisfies(p -> assertThat(p.key()).isEqualTo("recon_max"))
                .satisfies(p -> assertThat(p.message()).contains("below recon_default"));
        // The default recon_max (5 s) below a recon_default set alone is the same mistake, on recon_default's line.
        assertThat(problems("id: m1\nrecon_default: 6000\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.key()).isEqualTo("recon_default"));
        assertThat(problems("id: m1\nrecon_max: 5s\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.key()).isEqualTo("recon_max"));
        assertThatThrownBy(() -> MinionConfig.builder(dir, "m1")
                        .reconnect(Duration.ofSeconds(2), Duration.ofSeconds(1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void keyMaxAgeIsOffByDefaultAndBoundedAtItsLine() throws Exception {
        assertThat(load("id: m1\n").keyMaxAge()).isEmpty();
        assertThat(load("id: m1\nkey_max_age: 7776000\n").keyMaxAge()).hasValue(Duration.ofDays(90));
        assertThat(load("id: m1\nkey_max_age: 3600\n").keyMaxAge()).hasValue(Duration.ofHours(1));
        assertThat(problems("id: m1\nkey_max_age: 3599\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.line()).isEqualTo(2))
                .satisfies(p -> assertThat(p.key()).isEqualTo("key_max_age"));
        assertThat(problems("id: m1\nkey_max_age: " + (Duration.ofDays(3650).toSeconds() + 1) + "\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.key()).isEqualTo("key_max_age"));
        assertThat(problems("id: m1\nkey_max_age: 90d\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.key()).isEqualTo("key_max_age"));
        assertThatThrownBy(() -> MinionConfig.builder(dir, "m1")
                        .keyMaxAge(Duration.ofMinutes(59))
                        .build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void masterPortIsSaltsNameForTheMastersRequestPort() throws Exception {
        MinionConfig config = load("id: m1\nmaster: salt\nmaster_port: 14506\npublish_port: 14505\n");
        assertThat(config.retPort()).isEqualTo(14506);
        assertThat(config.publishPort()).isEqualTo(14505);
        assertThat(problems("id: m1\nmaster_port: 4506\nret_port: 4506\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.key() + ": " + p.message())
                        .isEqualTo("master_port: names the same port"
                                + " as ret_port (Salt's name for it): set one of the two"));
        assertThat(problems("id: m1\nmaster_port: 4505\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.key() + ": " + p.message())
                        .isEqualTo("master_port: 4505 is also"
                                + " publish_port (its default); the master's ports must differ"));
        assertThat(problems("id: m1\nmaster_port: 65536\n", NOT_ASKED))
                .singleElement()
                .satisfies(p -> assertThat(p.key()).isEqualTo("master_port"));
    }

    @Test
    void missingFileNamesTheFile() {
        assertThatThrownBy(() -> MinionConfig.load(dir))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining(dir.resolve("minion.yaml") + ": file not found");
    }

    @Test
    void builderRefusesWhatNoFileCouldSay() {
        assertThatThrownBy(() -> MinionConfig.builder().build()).isInstanceOf(InvalidIdException.class);
        assertThatThrownBy(() -> MinionConfig.builder(dir, "Web1").build()).isInstanceOf(InvalidIdException.class);
        assertThatThrownBy(
                        () -> MinionConfig.builder(dir, "m1").masterFinger("ab").build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> MinionConfig.builder(dir, "m1").keysize(2049).build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void authWaitDoublesUpToTheMaximumOnlyWhenItIsLarger() {
        Auth growing = new Auth(Duration.ofSeconds(10), Duration.ofSeconds(60), false, Duration.ofSeconds(60));
        Duration wait = growing.acceptanceWaitTime();
        StringBuilder waits = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            waits.append(wait.toSeconds()).append(' ');
            wait = growing.nextWait(wait);
        }
        assertThat(waits).hasToString("10 20 40 60 60 ");

        Auth fixed = Auth.defaults();
        assertThat(fixed.nextWait(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(30));
        Auth maxBelowWait = new Auth(Duration.ofSeconds(30), Duration.ofSeconds(10), false, Duration.ofSeconds(60));
        assertThat(maxBelowWait.nextWait(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(30));
    }
}

package io.brine.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.tuple;

import io.brine.daemon.config.MasterConfig.Acceptance;
import io.brine.daemon.config.MasterConfig.AutosignToken;
import io.brine.daemon.config.MasterConfig.PublisherAcl;
import io.brine.daemon.config.MasterConfig.Tls;
import io.brine.protocol.ReservedIds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MasterConfigTest {

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
    void emptyFileGivesTheProductionDefaults() throws Exception {
        MasterConfig config = load("");
        assertThat(config).isEqualTo(MasterConfig.builder().build());
        assertThat(config.interfaceAddress()).isEqualTo("0.0.0.0");
        assertThat(config.publishPort()).isEqualTo(4505);
        assertThat(config.retPort()).isEqualTo(4506);
        assertThat(config.transports()).containsExactly(TransportKind.ZEROMQ);
        assertThat(config.tcpPort()).isEqualTo(4507);
        assertThat(config.tls()).isEmpty();
        assertThat(config.saltMinions()).as("serving Salt minions is opt-in").isFalse();
        assertThat(config.pkiDir()).isEqualTo(Path.of("/etc/brine/pki/master"));
        assertThat(config.cachedir()).isEqualTo(Path.of("/var/cache/brine/master"));
        assertThat(config.keysize()).isEqualTo(2048);
        assertThat(config.publishSession()).isEqualTo(Duration.ofDays(1));
        assertThat(config.maxMinions()).isZero();
        assertThat(config.maxPending()).isEqualTo(1000);
        assertThat(config.authRatePerSource()).isEqualTo(20);
        assertThat(config.authBurst()).isEqualTo(50);
        assertThat(config.authWorkBudget()).isEqualTo(100);
        assertThat(config.workerThreads()).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThat(config.maxReturnBytes()).isEqualTo(4 * 1024 * 1024);
        assertThat(config.keepJobs()).isEqualTo(Duration.ofDays(1));
        assertThat(config.jobCacheMaxMib()).isEqualTo(1024);
        assertThat(config.acceptance())
                .isEqualTo(new Acceptance(
                        false,
                        Optional.empty(),
                        Optional.empty(),
                        Optional.empty(),
                        Duration.ofSeconds(10),
                        4,
                        Map.of(),
                        Optional.empty(),
                        Duration.ofSeconds(7200),
                        List.of(),
                        ReservedIds.DEFAULT_ENTRIES));
        assertThat(config.publisherAcl()).isEmpty();
        assertThat(config.logLevel()).isEqualTo(LogLevel.INFO);
        assertThat(config.logFile()).isEmpty();
        assertThat(config.auditLog()).isEqualTo(Path.of("/var/cache/brine/master/audit.log"));
    }

    @Test
    void saltMinionsIsOptIn() throws Exception {
        assertThat(load("salt_minions: true\n").saltMinions()).isTrue();
        assertThat(problems("salt_minions: yes\n"))
                .extracting(ConfigProblem::key)
                .containsExactly("salt_minions");
    }

    @Test
    void testDefaultsKeepEveryPathUnderTheBase() {
        MasterConfig config = MasterConfig.defaults(dir);
        assertThat(config.pkiDir()).isEqualTo(dir.resolve("pki"));
        assertThat(config.cachedir()).isEqualTo(dir.resolve("cache"));
        assertThat(config.auditLog()).isEqualTo(dir.resolve("cache/audit.log"));
    }

    @Test
    void readsEveryKey() throws Exception {
        MasterConfig config = load("""
                interface: '::'
                publish_port: 14505
                ret_port: 14506
                transport: tcp
                tcp_port: 14507
                tls:
                  cert: tls/master.crt
                  key: /etc/ssl/master.key
                pki_dir: pki
                cachedir: /srv/brine/cache
                keysize: 4096
                publish_session: 3600
                max_minions: 500
                max_pending: 20
                auth_rate_per_source: 5
                auth_burst: 10
                auth_work_budget: 40
                worker_threads: 3
                max_connections: 30000
                max_unauthenticated_connections: 25000
                max_unauthenticated_per_source: 25000
                max_return_bytes: 65536
                keep_jobs_seconds: 600
                job_cache_max_mib: 64
                auto_accept: true
                autosign_file: autosign.conf
                autoreject_file: autoreject.conf
                autosign_policy: /usr/libexec/brine/policy
                autosign_policy_timeout: 5
                autosign_policy_max_concurrent: 2
                autosign_claims:
                  role: [web, db]
                  datacenter: 'eu-*'
                inventory_file: inventory.txt
                inventory_window: 600
                autosign_tokens:
                  - match: 'web*'
                    salt: 00112233445566778899AABBCCDDEEFF
                    sha256: 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08
                    single_use: true
                  - match: db1
                    salt: 00112233445566778899aabbccddeeff
                    sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
                publisher_acl:
                  ops:
                    targets: ['*']
                    functions: [test.*, state.apply]
                  web-team:
                    targets: [web*]
                log_level: debug
                log_file: /var/log/brine/master.log
                """);
        Path base = dir.toAbsolutePath();
        String hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        String salt = "00112233445566778899aabbccddeeff";
        assertThat(config)
                .isEqualTo(MasterConfig.builder()
                        .interfaceAddress("::")
                        .publishPort(14505)
                        .retPort(14506)
                        .transport(TransportKind.TCP)
                        .tcpPort(14507)
                        .tls(new Tls(base.resolve("tls/master.crt"), Path.of("/etc/ssl/master.key")))
                        .pkiDir(base.resolve("pki"))
                        .cachedir(Path.of("/srv/brine/cache"))
                        .keysize(4096)
                        .publishSession(Duration.ofHours(1))
                        .maxMinions(500)
                        .maxPending(20)
                        .authRatePerSource(5)
                        .authBurst(10)
                        .authWorkBudget(40)
                        .workerThreads(3)
                        .connectionLimits(new ConnectionLimits(
                                OptionalInt.of(30000), OptionalInt.of(25000), OptionalInt.of(25000)))
                        .maxReturnBytes(65536)
                        .keepJobs(Duration.ofMinutes(10))
                        .jobCacheMaxMib(64)
                        .acceptance(Acceptance.builder()
                                .autoAccept(true)
                                .autosignFile(base.resolve("autosign.conf"))
                                .autorejectFile(base.resolve("autoreject.conf"))
                                .autosignPolicy(Path.of("/usr/libexec/brine/policy"))
                                .autosignPolicyTimeout(Duration.ofSeconds(5))
                                .autosignPolicyMaxConcurrent(2)
                                .autosignClaims(Map.of("role", List.of("web", "db"), "datacenter", List.of("eu-*")))
                                .inventoryFile(base.resolve("inventory.txt"))
                                .inventoryWindow(Duration.ofMinutes(10))
                                .autosignTokens(List.of(
                                        new AutosignToken("web*", salt, hash, true),
                                        new AutosignToken("db1", salt, hash, false)))
                                .build())
                        .publisherAcl(Map.of(
                                "ops", new PublisherAcl(List.of("*"), List.of("test.*", "state.apply")),
                                "web-team", new PublisherAcl(List.of("web*"), List.of())))
                        .logLevel(LogLevel.DEBUG)
                        .logFile(Path.of("/var/log/brine/master.log"))
                        .build());
        assertThat(config.auditLog()).isEqualTo(Path.of("/srv/brine/cache/audit.log"));
        assertThat(config.publisherAcl().keySet()).containsExactly("ops", "web-team");
    }

    @Test
    void servesBothTransportsWhenBothAreListed() throws Exception {
        MasterConfig config = load("transport: [zeromq, tcp]\ntls: {cert: a.crt, key: a.key}\n");

        assertThat(config.transports()).containsExactly(TransportKind.ZEROMQ, TransportKind.TCP);
        assertThat(config.tls()).isPresent();
    }

    @Test
    void tlsWithoutTheTcpTransportIsAProblem() throws IOException {
        List<ConfigProblem> problems = problems("tls: {cert: a.crt, key: a.key}\n");

        assertThat(problems)
                .extracting(ConfigProblem::key, ConfigProblem::message)
                .containsExactly(
                        tuple("tls", "applies to the tcp transport only: add tcp to transport, or remove tls"));
    }

    @Test
    void theApiIsOffByDefaultAndLoopbackWithoutTls() throws Exception {
        assertThat(load("interface: 127.0.0.1\n").api()).isEmpty();
        MasterConfig.Api api = load("api: {port: 8080}\n").api().orElseThrow();
        assertThat(api).isEqualTo(MasterConfig.Api.loopback(8080));
        assertThat(load("api: {interface: 0.0.0.0, port: 8443, tls: {cert: a.crt, key: a.key}, max_body_bytes: 2048,"
                                + " request_timeout: 5}\n")
                        .api()
                        .orElseThrow()
                        .tls())
                .isPresent();
    }

    @Test
    void anApiOffLoopbackWithoutTlsIsAProblem() throws IOException {
        assertThat(problems("api: {interface: 0.0.0.0, port: 8443}\n"))
                .extracting(ConfigProblem::key, ConfigProblem::message)
                .containsExactly(tuple(
                        "api.interface",
                        "is 0.0.0.0, not loopback: the API"
                                + " needs tls (cert and key) there, or bind it to 127.0.0.1 or ::1"));
        assertThat(problems("api: {interface: 127.0.0.1}\n"))
                .extracting(ConfigProblem::key)
                .containsExactly("api.port");
        assertThat(problems("api: {port: 8443, max_body_bytes: 1023, requests_per_second: 0, colour: red}\n"))
                .extracting(ConfigProblem::key)
                .containsExactlyInAnyOrder("api.max_body_bytes", "api.requests_per_second", "api.colour");
        assertThat(problems("http_port: 9100\napi: {port: 9100}\n")).isNotEmpty();
    }

    @Test
    void apiClientCertificatesNeedACaAModeAndTls() throws Exception {
        String tls = "api: {interface: 0.0.0.0, port: 8443, tls: {cert: a.crt, key: a.key}, ";
        MasterConfig.ClientCerts certs = load(tls + "client_ca: ca.crt, client_auth: required, client_revoked: [" + "\""
                        + "AB:".repeat(31) + "AB\", " + "0f".repeat(32) + "]}\n")
                .api()
                .orElseThrow()
                .clientCerts()
                .orElseThrow();
        assertThat(certs.clientAuth()).isEqualTo(MasterConfig.ClientAuth.REQUIRED);
        assertThat(certs.clientRevoked()).containsExactlyInAnyOrder("ab".repeat(32), "0f".repeat(32));
        assertThat(load(tls + "client_auth: none}\n").api().orElseThrow().clientCerts())
                .isEmpty();

        assertThat(problems(tls + "client_ca: ca.crt}\n"))
                .extracting(ConfigProblem::key, ConfigProblem::message)
                .containsExactly(tuple(
                        "api.client_ca",
                        "is set but client_auth is none: set client_auth to optional"
                                + " or required, or remove client_ca"));
        assertThat(problems(tls + "client_auth: optional}\n"))
                .extracting(ConfigProblem::key)
                .containsExactly("api.client_auth");
        assertThat(problems("api: {port: 8443, client_ca: ca.crt, client_auth: optional}\n"))
                .extracting(ConfigProblem::message)
                .containsExactly("needs tls: client certificates are sent in the TLS handshake");
        assertThat(problems(tls + "client_ca: ca.crt, client_auth: maybe}\n"))
                .extracting(ConfigProblem::key)
                .containsExactly("api.client_auth");
        assertThat(problems(tls + "client_revoked: [" + "0f".repeat(32) + "]}\n"))
                .extracting(ConfigProblem::key)
                .containsExactly("api.client_revoked");
        assertThat(problems(tls + "client_ca: ca.crt, client_auth: optional, client_revoked: [\"" + "0f".repeat(31)
                        + "\"]}\n"))
                .extracting(ConfigProblem::key)
                .containsExactly("api.client_revoked[0]");
        String many = IntStream.rangeClosed(0, MasterConfig.ClientCerts.MAX_REVOKED)
                .mapToObj(i -> "\"" + String.format("%064x", i) + "\"")
                .collect(Collectors.joining(", "));
        assertThat(problems(tls + "client_ca: ca.crt, client_auth: optional, client_revoked: [" + many + "]}\n"))
                .extracting(ConfigProblem::message)
                .containsExactly("has 1001 entries; at most 1000");
        String most = IntStream.range(0, MasterConfig.ClientCerts.MAX_REVOKED)
                .mapToObj(i -> "\"" + String.format("%064x", i) + "\"")
                .collect(Collectors.joining(", "));
        assertThat(load(tls + "client_ca: ca.crt, client_auth: optional, client_revoked: [" + most + "]}\n")
                        .api()
                        .orElseThrow()
                        .clientCerts()
                        .orElseThrow()
                        .clientRevoked())
                .hasSize(MasterConfig.ClientCerts.MAX_REVOKED);
    }

    @Test
    void reportsEveryProblemAtOnceWithItsLine() throws IOException {
        List<ConfigProblem> problems = problems("""
                interface: 0.0.0.0
                publish_port: abc
                keysize: 2049
                transport: zmq
                auto_accept: yes
                publsh_port: 4505
                publish_session: 1d
                tls:
                  cert: a.crt
                publisher_acl:
                  ops:
                    targets: 'web*'
                autosign_tokens:
                  - match: 'web*'
                    sha256: not-a-hash
                log_level: warning
                audit_log: ~/audit.log
                publish_session: 60
                """);
        assertThat(problems)
                .extracting(ConfigProblem::line, ConfigProblem::key)
                .containsExactly(
                        tuple(2, "publish_port"),
                        tuple(3, "keysize"),
                        tuple(4, "transport"),
                        tuple(5, "auto_accept"),
                        tuple(6, "publsh_port"),
                        tuple(7, "publish_session"),
                        tuple(9, "tls.key"),
                        tuple(12, "publisher_acl.ops.targets"),
                        tuple(14, "autosign_tokens[0].salt"),
                        tuple(15, "autosign_tokens[0].sha256"),
                        tuple(16, "log_level"),
                        tuple(17, "audit_log"),
                        tuple(18, "publish_session"));
        assertThat(problems)
                .extracting(ConfigProblem::message)
                .containsExactly(
                        "expected an integer from 0 to 65535, got \"abc\"",
                        "expected a multiple of 8 (2048, 3072, 4096 ...), got 2049",
                        "expected one of zeromq, tcp, got \"zmq\"",
                        "expected true or false, got \"yes\" (YAML 1.1 reads yes/no/on/off as booleans; brine takes only"
                                + " true and false)",
                        "unknown key, did you mean publish_port? (valid keys here: interface, publish_port, ret_port,"
                                + " transport, tcp_port, tls, pki_dir, cachedir, keysize, publish_session, max_minions,"
                                + " max_pending, auth_rate_per_source, auth_burst, auth_work_budget, worker_threads, max_connections,"
                                + " max_unauthenticated_connections, max_unauthenticated_per_source, max_return_bytes,"
                                + " keep_jobs_seconds,"
                                + " job_cache_max_mib, auto_accept, autosign_file, autoreject_file, autosign_policy,"
                                + " autosign_policy_timeout, autosign_policy_max_concurrent, autosign_claims, inventory_file,"
                                + " inventory_window, autosign_tokens, reserved_ids, publisher_acl, nodegroups, log_level, log_file, log_format,"
                                + " key_rotation, master_key_grace, master_key_chain, master_sign_key_name,"
                                + " master_sign_pubkey, audit_log,"
                                + " cluster, salt_minions, file_roots, file_ignore_regex, file_ignore_glob, hash_type,"
                                + " file_buffer_size, fileserver_list_cache_time, fileserver_requests_per_second,"
                                + " fileserver_burst, fileserver_max_mib_in_flight, http_interface, http_port, api)",
                        "expected a whole number of seconds from 60 to 31536000, got \"1d\" (write the number of seconds"
                                + " alone, without a unit)",
                        "is required with tls",
                        "expected a list, got \"web*\" (write [value] or '- value' lines)",
                        "is required in an autosign token (unsalted hashes are no longer accepted: run brine-key"
                                + " token-hash)",
                        "\"not-a-hash\" is not valid: expected 64 hex digits, SHA-256 of salt and token (brine-key"
                                + " token-hash makes the entry)",
                        "expected one of error, warn, info, debug, trace, got \"warning\"",
                        "~ is not expanded in brine config files: write the full path, got \"~/audit.log\"",
                        "duplicate key (first at line 7)");
    }

    @Test
    void reservedIdsDefaultToWindowsDeviceNamesMasterAndRootAndAnEmptyListReservesNothing() throws Exception {
        assertThat(load("").acceptance().reserved().problem("con.example.com")).isPresent();
        assertThat(load("").acceptance().reserved().problem("master")).isPresent();
        assertThat(load("reserved_ids: []\n").acceptance().reserved().problem("con"))
                .isEmpty();
        assertThat(load("reserved_ids: [db.*]\n").acceptance().reserved().problem("db.example.com"))
                .isPresent();
    }

    @Test
    void aBadReservedIdIsReportedWithItsLine() throws Exception {
        List<ConfigProblem> problems = problems("""
                # reserved
                reserved_ids:
                  - con.*
                  - Con
                  - '*.example.com'
                """);
        assertThat(problems)
                .extracting(ConfigProblem::line, ConfigProblem::key)
                .containsExactly(tuple(4, "reserved_ids[1]"), tuple(5, "reserved_ids[2]"));
        assertThat(problems.get(0).message()).contains("not a reserved id").contains("\"Con\"");
    }

    @Test
    void nodegroupsAreSaltsCompoundStringsOrListsOfIds() throws Exception {
        MasterConfig config = load("""
                nodegroups:
                  debian_web: 'N@web and G@os:debian'
                  web: 'web* or L@lb1'
                  dbs: [db1, db2]
                  words: ['G@os:debian', 'or', 'N@dbs']
                """);
        assertThat(config.nodegroups())
                .containsExactly(
                        Map.entry("debian_web", "N@web and G@os:debian"),
                        Map.entry("web", "web* or L@lb1"),
                        Map.entry("dbs", "L@db1,db2"),
                        Map.entry("words", "G@os:debian or N@dbs"));
        assertThat(load("").nodegroups()).isEmpty();
    }

    @Test
    void fileRootsAreSaltsShapeAndTheFileServersKeysHaveSaltsDefaults() throws Exception {
        MasterConfig config = load("""
                file_roots:
                  base:
                    - /srv/salt
                    - /srv/formulas
                  dev: /srv/dev
                file_ignore_regex: ['/\\.svn($|/)']
                file_ignore_glob: ['*.pyc']
                hash_type: sha512
                file_buffer_size: 65536
                """);
        assertThat(config.fileServer().fileRoots())
                .containsExactly(
                        Map.entry("base", List.of(Path.of("/srv/salt"), Path.of("/srv/formulas"))),
                        Map.entry("dev", List.of(Path.of("/srv/dev"))));
        assertThat(config.fileServer().fileIgnoreRegex()).containsExactly("/\\.svn($|/)");
        assertThat(config.fileServer().hashType()).isEqualTo("sha512");
        assertThat(config.fileServer().fileBufferSize()).isEqualTo(65536);
        MasterConfig.FileServer defaults = load("").fileServer();
        assertThat(defaults.fileRoots()).isEmpty(); // nothing served until named
        assertThat(defaults.hashType()).isEqualTo("sha256");
        assertThat(defaults.fileBufferSize()).isEqualTo(1024 * 1024);
        assertThat(defaults.fileserverListCacheTime()).isEqualTo(Duration.ofSeconds(20));
    }

    @Test
    void everyBadFileServerKeyIsReportedAtItsLine() throws IOException {
        List<ConfigProblem> problems = problems("""
                file_roots:
                  base: [srv/salt]
                  __env__: [/srv/salt]
                file_ignore_regex: ['(unclosed']
                hash_type: crc32
                file_buffer_size: 4194305
                """);
        assertThat(problems).extracting(ConfigProblem::line).contains(2, 4, 5, 6);
        assertThat(problems.toString())
                .contains("expected an absolute directory")
                .contains("__env__")
                .contains("not a regular expression")
                .contains("expected one of")
                .contains("file_buffer_size");
    }

    @Test
    void everyBadNodegroupIsReportedAtItsLine() throws IOException {
        List<ConfigProblem> problems = problems("""
                nodegroups:
                  ok: 'web*'
                  loop: 'N@loop2 or web1'
                  loop2: 'N@loop'
                  self: 'db* and not N@self'
                  unknown: 'N@ok or N@nowhere'
                  syntax: 'web* and'
                  globs: [web1, 'db*']
                  uses_globs: 'N@globs'
                  nested: {a: b}
                """);
        assertThat(problems)
                .extracting(ConfigProblem::line, ConfigProblem::key, ConfigProblem::message)
                .containsExactlyInAnyOrder(
                        tuple(3, "nodegroups.loop", "uses itself: loop -> loop2 -> loop"),
                        tuple(4, "nodegroups.loop2", "uses itself: loop2 -> loop -> loop2"),
                        tuple(5, "nodegroups.self", "uses itself: self -> self"),
                        tuple(6, "nodegroups.unknown", "uses the unknown nodegroup nowhere"),
                        tuple(7, "nodegroups.syntax", "compound target ends where a term was expected"),
                        tuple(
                                8,
                                "nodegroups.globs",
                                "a list of minion ids, and 'db*' is not one (id has a character"
                                        + " outside [a-z0-9._-] at position 2 (U+002A)); write globs as a compound string,"
                                        + " e.g. 'web* or db*'"),
                        tuple(9, "nodegroups.uses_globs", "uses the unknown nodegroup globs"),
                        tuple(10, "nodegroups.nested", "expected a value or a list of values, got a mapping"));
        assertThatThrownBy(() ->
                        MasterConfig.builder(dir).nodegroups(Map.of("a", "N@a")).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("uses itself");
    }

    @Test
    void exceptionMessageIsTheWholeReport() throws IOException {
        Path file = Files.writeString(dir.resolve("master.yaml"), "publish_port: abc\nret_port: 65536\n");
        assertThatThrownBy(() -> MasterConfig.load(dir))
                .isInstanceOf(ConfigException.class)
                .hasMessage(String.join(
                        System.lineSeparator(),
                        "invalid configuration (2 problems):",
                        "  " + file + ":1: publish_port: expected an integer from 0 to 65535, got \"abc\"",
                        "  " + file + ":2: ret_port: expected an integer from 0 to 65535, got \"65536\""));
    }

    @Test
    void connectionCapsAreCheckedAgainstEachOtherAtTheirLine() throws IOException {
        assertThat(problems("max_connections: 10\nmax_unauthenticated_connections: 20\n"))
                .singleElement()
                .satisfies(p -> {
                    assertThat(p.key()).isEqualTo("max_unauthenticated_connections");
                    assertThat(p.line()).isEqualTo(2);
                    assertThat(p.message()).contains("must not exceed max_connections (10)");
                });
        assertThat(problems("max_unauthenticated_connections: 20\nmax_unauthenticated_per_source: 30\n"))
                .singleElement()
                .satisfies(p -> {
                    assertThat(p.key()).isEqualTo("max_unauthenticated_per_source");
                    assertThat(p.line()).isEqualTo(2);
                });
        assertThat(problems("max_unauthenticated_per_source: 0\n"))
                .extracting(ConfigProblem::key)
                .containsExactly("max_unauthenticated_per_source");
    }

    @Test
    void aConnectionCapLeftUnsetFollowsTheTransportsDefaultButNeverExceedsAnOuterCap() {
        ConnectionLimits onlyMax = new ConnectionLimits(OptionalInt.of(100), OptionalInt.empty(), OptionalInt.empty());
        assertThat(onlyMax.resolve(50_000, 10_000, 5_000)).containsExactly(100, 100, 100);
        ConnectionLimits onlyPerSource =
                new ConnectionLimits(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.of(20_000));
        assertThat(onlyPerSource.resolve(50_000, 10_000, 5_000)).containsExactly(50_000, 10_000, 10_000);
        assertThat(ConnectionLimits.DEFAULTS.resolve(50_000, 10_000, 5_000)).containsExactly(50_000, 10_000, 5_000);
    }

    @Test
    void clashingPortsAreReportedAtTheKeyThatWasSet() throws IOException {
        assertThat(problems("ret_port: 4505\n")).singleElement().satisfies(p -> {
            assertThat(p.line()).isEqualTo(1);
            assertThat(p.key()).isEqualTo("ret_port");
            assertThat(p.message()).isEqualTo("4505 is also publish_port (its default); the ports must differ");
        });
        assertThat(problems("tcp_port: 7000\nret_port: 7000\n"))
                .singleElement()
                .satisfies(p -> assertThat(p.message()).isEqualTo("7000 is also ret_port; the ports must differ"));
    }

    @Test
    void portZeroIsAnyFreePortAndClashesWithNothing() throws Exception {
        MasterConfig config = load("publish_port: 0\nret_port: 0\ntcp_port: 0\n");
        assertThat(config.publishPort()).isZero();
        assertThat(config.retPort()).isZero();
        assertThat(config.tcpPort()).isZero();
    }

    @Test
    void autosignTokensNeedMatchSaltAndHash() throws IOException {
        assertThat(problems("autosign_tokens:\n  - single_use: true\n  - nonsense\n"))
                .extracting(ConfigProblem::line, ConfigProblem::key, ConfigProblem::message)
                .containsExactly(
                        tuple(2, "autosign_tokens[0].match", "is required in an autosign token"),
                        tuple(
                                2,
                                "autosign_tokens[0].salt",
                                "is required in an autosign token (unsalted hashes are no"
                                        + " longer accepted: run brine-key token-hash)"),
                        tuple(2, "autosign_tokens[0].sha256", "is required in an autosign token"),
                        tuple(3, "autosign_tokens[1]", "expected a mapping of 'key: value' lines, got \"nonsense\""));
    }

    @Test
    void missingFileNamesTheFile() {
        assertThatThrownBy(() -> MasterConfig.load(dir))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining(dir.resolve("master.yaml") + ": file not found");
    }

    @Test
    void builderRefusesWhatNoFileCouldSay() {
        assertThatThrownBy(() -> MasterConfig.builder(dir).keysize(1024).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> MasterConfig.builder(dir).publishPort(70000).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AutosignToken("web*", "00112233445566778899aabbccddeeff", "ABC", false))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AutosignToken(
                        "web*", "0011", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("salt");
        assertThat(MasterConfig.builder(dir)
                        .publishPort(0)
                        .retPort(0)
                        .tcpPort(0)
                        .build()
                        .publishPort())
                .isZero();
    }

    @Test
    void keyRotationIsAllowedByDefaultAndPendingOrDeniedOnlyWhenSaidSo() throws Exception {
        assertThat(load("{}\n").keyRotation()).isEqualTo(KeyRotationPolicy.ALLOW);
        assertThat(load("key_rotation: deny\n").keyRotation()).isEqualTo(KeyRotationPolicy.DENY);
        assertThat(load("key_rotation: pending\n").keyRotation()).isEqualTo(KeyRotationPolicy.PENDING);
        assertThat(problems("key_rotation: later\n"))
                .extracting(ConfigProblem::message)
                .containsExactly("expected one of allow, pending, deny, got \"later\"");
        assertThat(problems("key_rotation: pending\ncluster:\n  connect: zk1:2181\n"))
                .extracting(ConfigProblem::message)
                .singleElement()
                .asString()
                .startsWith("pending is not available with cluster yet");
    }

    @Test
    void theMasterKeyKeepsFiveRecordsAndAWeeksGraceUnlessToldAndSixteenRecordsAtMost() throws Exception {
        MasterConfig defaults = load("{}\n");
        assertThat(defaults.masterKeyChain()).isEqualTo(5);
        assertThat(defaults.masterKeyGrace()).isEqualTo(Duration.ofDays(7));
        MasterConfig set = load("master_key_chain: 16\nmaster_key_grace: 60\n");
        assertThat(set.masterKeyChain()).isEqualTo(16);
        assertThat(set.masterKeyGrace()).isEqualTo(Duration.ofSeconds(60));
        assertThat(problems("master_key_chain: 17\nmaster_key_grace: 59\n"))
                .extracting(ConfigProblem::key)
                .containsExactly("master_key_chain", "master_key_grace");
        assertThat(problems("master_key_chain: 0\n")).hasSize(1);
    }

    @Test
    void masterSignPubkeyNamesTheOfflineSigningKeysPublicHalfInPkiDir() throws Exception {
        assertThat(load("{}\n").masterSignPub()).isEmpty();
        assertThat(load("pki_dir: /p\nmaster_sign_pubkey: true\n").masterSignPub())
                .hasValue(Path.of("/p/master_sign.pub"));
        assertThat(load("pki_dir: /p\nmaster_sign_pubkey: true\nmaster_sign_key_name: offline\n")
                        .masterSignPub())
                .hasValue(Path.of("/p/offline.pub"));
        assertThat(problems("master_sign_key_name: offline\n"))
                .extracting(ConfigProblem::message)
                .containsExactly("has no effect without master_sign_pubkey: true");
        assertThat(problems("master_sign_pubkey: true\nmaster_sign_key_name: ../offline\n"))
                .extracting(ConfigProblem::key)
                .containsExactly("master_sign_key_name");
    }
}

package io.brine.keytool;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.brine.daemon.config.MasterConfig.AutosignToken;
import io.brine.daemon.files.AtomicFiles;
import io.brine.daemon.files.TrustedPath;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.grant.Grants;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.policy.TokenHashes;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** brine-key policy check, grant and token-hash, run in-process. */
class PolicyCommandsTest {

    static final int PROVISIONER = 200;

    @TempDir
    Path tmp;

    Path etc;
    Path pki;

    record Result(int exit, String out, String err) {}

    @BeforeEach
    void setUp() throws Exception {
        etc = Files.createDirectories(tmp.resolve("etc"));
        pki = tmp.resolve("pki");
        try (KeyStore store = FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build())) {
            store.offer("waiting.example.com", key(1), PolicyVerdict.NONE);
            store.offer("gone.example.com", key(2), PolicyVerdict.REJECT);
        }
        file("autosign.conf", "*.example.com\n");
        file("autoreject.conf", "bad.example.com\n");
        Files.writeString(etc.resolve("master.yaml"), """
                pki_dir: ../pki
                cachedir: ../cache
                autosign_file: autosign.conf
                autoreject_file: autoreject.conf
                autosign_claims:
                  role: [web]
                """);
        Files.createDirectories(pki.resolve("provisioners"));
        AtomicFiles.write(
                pki.resolve("provisioners/cloud.pub"),
                Pem.bytes(TestKeys.publicPem(PROVISIONER)),
                AtomicFiles.PUBLIC_READ);
        AtomicFiles.write(
                tmp.resolve("cloud.pem"), Pem.bytes(TestKeys.privatePem(PROVISIONER)), AtomicFiles.OWNER_READ);
        for (int i = 1; i <= 5; i++) {
            AtomicFiles.write(
                    tmp.resolve("host" + i + ".pub"), Pem.bytes(TestKeys.publicPem(i)), AtomicFiles.PUBLIC_READ);
        }
    }

    private void file(String name, String content) throws Exception {
        Path file = Files.writeString(etc.resolve(name), content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    private Result run(String stdin, String... args) {
        KeytoolConfig.Defaults defaults = new KeytoolConfig.Defaults(etc, pki, tmp.resolve("default-cache"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = BrineKey.commandLine(new BrineKey(
                        new BrineKeyTest.FakeTerminal(),
                        Map.of(),
                        defaults,
                        new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8))))
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(args);
        return new Result(exit, out.toString(), err.toString());
    }

    private Result check(String id, String... more) {
        String[] args = new String[3 + more.length + 1];
        args[0] = "-c";
        args[1] = etc.toString();
        args[2] = "policy";
        args[3] = "check";
        System.arraycopy(more, 0, args, 4, more.length);
        String[] all = Arrays.copyOf(args, args.length + 1);
        all[all.length - 1] = id;
        return run("", all);
    }

    // ------------------------------------------------------------------ policy check

    @Test
    void checkExitsZeroForAKeyAPolicyAcceptsAndNamesTheRule() {
        Result result =
                check("web1.example.com", "--pub", tmp.resolve("host3.pub").toString());
        assertThat(result.exit()).as(result.err()).isZero();
        assertThat(result.out())
                .contains(
                        "web1.example.com (key " + Fingerprints.of(key(3)) + ")",
                        "Decided by autosign_file " + etc.resolve("autosign.conf") + ":1 *.example.com",
                        "The master would answer ACCEPTED");
    }

    @Test
    void globalOptionsWorkAfterTheSubcommandAndCheckPrintsJson() throws Exception {
        // -c after 'policy check', --out json after it too: the same answer as the text one, as one JSON document.
        Result result = run(
                "",
                "policy",
                "check",
                "web1.example.com",
                "--pub",
                tmp.resolve("host3.pub").toString(),
                "-c",
                etc.toString(),
                "--out",
                "json");
        assertThat(result.exit()).as(result.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(result.out());
        assertThat(json.get("id").asText()).isEqualTo("web1.example.com");
        assertThat(json.get("fingerprint").asText()).isEqualTo(Fingerprints.of(key(3)));
        assertThat(json.get("answer").asText()).isEqualTo("ACCEPTED");
        assertThat(json.get("decided_by").asText()).startsWith("autosign_file");
        assertThat(json.get("steps")).isNotEmpty();
        // --out before 'policy' is the same option, not silently ignored.
        Result yaml = run(
                "",
                "-c",
                etc.toString(),
                "--out",
                "yaml",
                "policy",
                "check",
                "web1.example.com",
                "--pub",
                tmp.resolve("host3.pub").toString());
        assertThat(yaml.exit()).as(yaml.err()).isZero();
        assertThat(new YAMLMapper().readTree(yaml.out()).get("answer").asText()).isEqualTo("ACCEPTED");
    }

    @Test
    void checkWorksBeforeTheMasterCreatedItsPkiDir() throws Exception {
        // A new config, before the master's first start: its pki_dir does not exist yet.
        Files.writeString(etc.resolve("master.yaml"), """
                pki_dir: ../new-pki
                cachedir: ../cache
                autosign_file: autosign.conf
                """);
        Result result =
                check("web1.example.com", "--pub", tmp.resolve("host3.pub").toString());
        assertThat(result.exit()).as(result.err()).isZero();
        assertThat(result.out()).contains("The master would answer ACCEPTED");
        assertThat(result.err()).contains("does not exist yet");
        assertThat(tmp.resolve("new-pki")).doesNotExist();
        // Without --pub there is no key to ask about.
        assertThat(check("web1.example.com").err()).contains("--pub");
    }

    @Test
    void checkSaysAnAutosignFileOwnedByAnotherUserDisablesThePolicy() throws Exception {
        assertThat(TrustedPath.processUid())
                .as("setting a file's owner needs root; run the" + " tests as root")
                .isZero();
        Files.setOwner(
                etc.resolve("autosign.conf"),
                tmp.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));

        Result result =
                check("web1.example.com", "--pub", tmp.resolve("host3.pub").toString());

        assertThat(result.exit()).isEqualTo(1);
        assertThat(result.err())
                .contains(
                        "ERROR autosign_file " + etc.resolve("autosign.conf")
                                + " is not trusted, the policy is disabled: ",
                        "owned by nobody");
        assertThat(result.out()).contains("would answer PENDING");
    }

    @Test
    void checkSaysAReservedIdIsRefusedBeforeAnyPolicyEvenWhereAutosignWouldAccept() {
        Result result =
                check("con.example.com", "--pub", tmp.resolve("host3.pub").toString());
        assertThat(result.exit()).isEqualTo(3);
        assertThat(result.out())
                .contains("The master would answer REFUSED (id con.example.com is reserved"
                        + " (reserved_ids entry con.*): use another id); no policy is asked")
                .doesNotContain("Decided by");
    }

    @Test
    void checkExitsOneForAKeyThatWouldWaitAndThreeForAReject() {
        Result pending =
                check("web1.example.org", "--pub", tmp.resolve("host3.pub").toString());
        assertThat(pending.exit()).isEqualTo(1);
        assertThat(pending.out()).contains("No policy decides", "claim role is missing", "would answer PENDING");

        Result rejected =
                check("bad.example.com", "--pub", tmp.resolve("host3.pub").toString());
        assertThat(rejected.exit()).isEqualTo(3);
        assertThat(rejected.out()).contains("Decided by autoreject_file");

        Result stored = check("gone.example.com");
        assertThat(stored.exit()).isEqualTo(3);
        assertThat(stored.out()).contains("holds this id as rejected: policies are not asked");
    }

    @Test
    void checkRunsTheOneKeyOneIdRuleAsTheMasterDoes() {
        // host1's key is pending as waiting.example.com: autosign_file matches web9.example.com, but the master
        // accepts no key by policy that another id holds.
        Result shared =
                check("web9.example.com", "--pub", tmp.resolve("host1.pub").toString());
        assertThat(shared.exit()).isEqualTo(1);
        assertThat(shared.out())
                .contains(
                        "Decided by autosign_file",
                        "The master would answer PENDING (new key"
                                + " awaits acceptance; same key as waiting.example.com: not accepted by policy, an admin must"
                                + " decide).")
                .doesNotContain("ACCEPTED");
        // The rejected id's key too (any state).
        assertThat(check("web8.example.com", "--pub", tmp.resolve("host2.pub").toString())
                        .out())
                .contains("would answer PENDING (new key awaits acceptance; same key as gone.example.com");
    }

    @Test
    void checkUsesTheStoredKeyClaimsAndAddress() {
        assertThat(check("waiting.example.com").exit()).isZero();
        assertThat(check(
                                "web1.example.org",
                                "--pub",
                                tmp.resolve("host3.pub").toString(),
                                "--claims",
                                "{\"role\":\"web\"}")
                        .exit())
                .isZero();
        assertThat(check(
                                "web1.example.org",
                                "--claims",
                                "[1]",
                                "--pub",
                                tmp.resolve("host3.pub").toString())
                        .exit())
                .isEqualTo(2);
        Result noKey = check("web1.example.org");
        assertThat(noKey.exit()).isEqualTo(2);
        assertThat(noKey.err()).contains("give the minion's public key with --pub FILE");
        assertThat(check("Web1", "--pub", tmp.resolve("host3.pub").toString()).exit())
                .isEqualTo(2);
    }

    @Test
    void checkWithAGrantSpendsNothing() {
        Result made = run(
                "",
                "grant",
                "--provisioner-key",
                tmp.resolve("cloud.pem").toString(),
                "--id",
                "db1",
                "--pub",
                tmp.resolve("host4.pub").toString(),
                "--ttl",
                "600",
                "-o",
                tmp.resolve("db1.grant").toString());
        assertThat(made.exit()).as(made.err()).isZero();
        for (int i = 0; i < 2; i++) {
            Result result = check(
                    "db1",
                    "--pub",
                    tmp.resolve("host4.pub").toString(),
                    "--grant",
                    tmp.resolve("db1.grant").toString());
            assertThat(result.exit()).as(result.out()).isZero();
            assertThat(result.out()).contains("Decided by grant by provisioner cloud");
        }
        assertThat(tmp.resolve("cache")).doesNotExist();
        Result otherKey = check(
                "db1",
                "--pub",
                tmp.resolve("host5.pub").toString(),
                "--grant",
                tmp.resolve("db1.grant").toString());
        assertThat(otherKey.exit()).isEqualTo(1);
        assertThat(otherKey.out()).contains("the grant is for the key");
    }

    @Test
    void checkSaysAGrantWouldDisplaceAPendingKeyOfAnotherHost() {
        // waiting.example.com is pending with key 1 (autosign_file's *.example.com does not count over it).
        Result withoutGrant =
                check("waiting.example.com", "--pub", tmp.resolve("host4.pub").toString());
        assertThat(withoutGrant.exit()).isEqualTo(3);
        assertThat(withoutGrant.out()).contains("only a grant or token can displace it", "would answer DENIED");

        Result made = run(
                "",
                "grant",
                "--provisioner-key",
                tmp.resolve("cloud.pem").toString(),
                "--id",
                "waiting.example.com",
                "--pub",
                tmp.resolve("host4.pub").toString(),
                "--ttl",
                "600",
                "-o",
                tmp.resolve("w.grant").toString());
        assertThat(made.exit()).as(made.err()).isZero();
        Result withGrant = check(
                "waiting.example.com",
                "--pub",
                tmp.resolve("host4.pub").toString(),
                "--grant",
                tmp.resolve("w.grant").toString());
        assertThat(withGrant.exit()).as(withGrant.out()).isZero();
        assertThat(withGrant.out()).contains("Decided by grant by provisioner cloud", "would answer ACCEPTED");
    }

    @Test
    void checkReportsABadConfigAsAUsageError() throws Exception {
        Files.writeString(etc.resolve("master.yaml"), "autosign_tokens:\n  - match: x\n    sha256: abc\n");
        Result result = check("web1", "--pub", tmp.resolve("host3.pub").toString());
        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.err()).contains("invalid configuration");
    }

    // ------------------------------------------------------------------ grant

    @Test
    void grantPrintsASignedGrantForTheHostKey() throws Exception {
        Result result = run(
                "",
                "grant",
                "--provisioner-key",
                tmp.resolve("cloud.pem").toString(),
                "--id",
                "web1.example.com",
                "--pub",
                tmp.resolve("host1.pub").toString(),
                "--ttl",
                "3600",
                "--class",
                "role=web",
                "--class",
                "env=prod=blue");
        assertThat(result.exit()).as(result.err()).isZero();
        Grants.SignedGrant grant = Grants.parse(result.out().getBytes(StandardCharsets.UTF_8));
        assertThat(grant.verify(key(PROVISIONER))).isTrue();
        assertThat(grant.grant().id()).isEqualTo("web1.example.com");
        assertThat(grant.grant().fingerprint()).isEqualTo(Fingerprints.of(key(1)));
        assertThat(grant.grant().classification())
                .containsExactly(Map.entry("role", "web"), Map.entry("env", "prod=blue"));
        assertThat(Duration.between(grant.grant().notBefore(), grant.grant().notAfter()))
                .isEqualTo(Duration.ofHours(1));
        assertThat(grant.grant().notBefore()).isBetween(Instant.now().minusSeconds(60), Instant.now());
    }

    @Test
    void grantRefusesBadInput() {
        String key = tmp.resolve("cloud.pem").toString();
        String pub = tmp.resolve("host1.pub").toString();
        assertThat(run("", "grant", "--provisioner-key", key, "--id", "web1", "--pub", pub, "--ttl", "0")
                        .exit())
                .isEqualTo(2);
        assertThat(run("", "grant", "--provisioner-key", key, "--id", "web1", "--pub", pub, "--ttl", "2592001")
                        .exit())
                .isEqualTo(2);
        assertThat(run("", "grant", "--provisioner-key", key, "--id", "WEB1", "--pub", pub, "--ttl", "60")
                        .exit())
                .isEqualTo(2);
        assertThat(run(
                                "",
                                "grant",
                                "--provisioner-key",
                                key,
                                "--id",
                                "web1",
                                "--pub",
                                pub,
                                "--ttl",
                                "60",
                                "--class",
                                "role")
                        .exit())
                .isEqualTo(2);
        assertThat(run(
                                "",
                                "grant",
                                "--provisioner-key",
                                key,
                                "--id",
                                "web1",
                                "--pub",
                                pub,
                                "--ttl",
                                "60",
                                "--class",
                                "a:b=c")
                        .err())
                .contains("class key");
        assertThat(run("", "grant", "--provisioner-key", pub, "--id", "web1", "--pub", pub, "--ttl", "60")
                        .exit())
                .isEqualTo(2);
        assertThat(run("", "grant", "--id", "web1", "--pub", pub, "--ttl", "60").exit())
                .isEqualTo(2);
    }

    @Test
    void grantWritesAPrivateFileAndNeverOverwrites() throws Exception {
        String[] args = {
            "grant",
            "--provisioner-key",
            tmp.resolve("cloud.pem").toString(),
            "--id",
            "web1",
            "--pub",
            tmp.resolve("host1.pub").toString(),
            "--ttl",
            "60",
            "-o",
            tmp.resolve("web1.grant").toString()
        };
        assertThat(run("", args).exit()).isZero();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(tmp.resolve("web1.grant"))))
                .isEqualTo("rw-------");
        Result again = run("", args);
        assertThat(again.exit()).isEqualTo(1);
        assertThat(again.err()).contains("already exists");
    }

    // ------------------------------------------------------------------ token-hash

    @Test
    void tokenHashPrintsAnEntryThatMatchesTheToken() throws Exception {
        Result result = run("correct-horse-battery-staple\n", "token-hash", "--match", "web*", "--single-use");
        assertThat(result.exit()).as(result.err()).isZero();
        JsonNode entry = new YAMLMapper().readTree(result.out()).get(0);
        AutosignToken token = new AutosignToken(
                entry.get("match").asText(),
                entry.get("salt").asText(),
                entry.get("sha256").asText(),
                entry.get("single_use").asBoolean());
        assertThat(token.match()).isEqualTo("web*");
        assertThat(token.singleUse()).isTrue();
        assertThat(TokenHashes.matches(token, "correct-horse-battery-staple")).isTrue();
        assertThat(TokenHashes.matches(token, "correct-horse-battery-staplE")).isFalse();
        assertThat(result.out()).doesNotContain("correct-horse");
    }

    @Test
    void tokenHashRefusesShortOrMissingTokens() {
        assertThat(run("short\n", "token-hash").exit()).isEqualTo(2);
        assertThat(run("", "token-hash").err()).contains("no token on standard input");
        assertThat(run("a b c\u0001 defghijklmnop\n", "token-hash").exit()).isEqualTo(2);
        assertThat(run("0123456789abcdef\n", "token-hash", "--match", "web *").exit())
                .isEqualTo(2);
    }

    @Test
    void tokenHashCanGenerateTheTokenIntoAPrivateFile() throws Exception {
        Path file = tmp.resolve("token");
        Result result = run("", "token-hash", "--generate", file.toString());
        assertThat(result.exit()).as(result.err()).isZero();
        String token = Files.readString(file).strip();
        assertThat(token).hasSize(43);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("rw-------");
        JsonNode entry = new YAMLMapper().readTree(result.out()).get(0);
        assertThat(entry.get("match").asText()).isEqualTo("*");
        assertThat(TokenHashes.matches(
                        new AutosignToken(
                                "*",
                                entry.get("salt").asText(),
                                entry.get("sha256").asText(),
                                false),
                        token))
                .isTrue();
    }
}

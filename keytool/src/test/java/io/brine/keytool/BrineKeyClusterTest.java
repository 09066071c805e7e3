package io.brine.keytool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.cluster.ClusterConnection;
import io.brine.cluster.ZkKeyStore;
import io.brine.cluster.ZkKeyStoreOptions;
import io.brine.cluster.ZkMasterKeys;
import io.brine.daemon.config.ClusterConfig;
import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.salt.SaltPubkeySignature;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.MasterKeyRotation.MasterKeySet;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.OfflineMasterSigning;
import io.brine.store.keys.PolicyVerdict;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * brine-key on a master host of a cluster (cluster: in master.yaml), in-process, against a real ZooKeeper server;
 * a master's key store on the same cluster sees what it does.
 */
class BrineKeyClusterTest {

    private static final AtomicInteger ROOTS = new AtomicInteger();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestingServer server;

    @TempDir
    Path tmp;

    private Path etc;
    private Path cache;
    private ZkKeyStore master;
    private CuratorFramework client;
    private final List<AutoCloseable> open = new ArrayList<>();

    record Result(int exit, String out, String err) {}

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @BeforeEach
    void masterYamlWithACluster() throws Exception {
        String root = "/brine/k" + ROOTS.incrementAndGet();
        etc = Files.createDirectories(tmp.resolve("etc"));
        Path pki = Files.createDirectories(tmp.resolve("pki"));
        cache = tmp.resolve("cache");
        Path password = Files.writeString(etc.resolve("zk.pass"), "s3cret\n");
        Files.setPosixFilePermissions(password, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(
                etc.resolve("master.yaml"),
                "pki_dir: " + pki + "\ncachedir: " + cache + "\ncluster:\n"
                        + "  connect: " + server.getConnectString() + "\n  root: " + root
                        + "\n  auth:\n    user: brine\n"
                        + "    password_file: zk.pass\n");
        client = ClusterConnection.open(ClusterConfig.of(server.getConnectString())
                .withRoot(root)
                .withAuth(new ClusterConfig.Auth("brine", password)));
        open.add(client);
        master = ZkKeyStore.open(
                client, ZkKeyStoreOptions.of(pki, null, AuditLog.none(), Clock.systemUTC()), Duration.ofSeconds(30));
        open.add(master);
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    private Result run(String... args) {
        KeytoolConfig.Defaults defaults =
                new KeytoolConfig.Defaults(tmp.resolve("none"), tmp.resolve("nopki"), tmp.resolve("default-cache"));
        List<String> all = new ArrayList<>(List.of("-c", etc.toString()));
        all.addAll(List.of(args));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = BrineKey.commandLine(new BrineKey(new BrineKeyTest.FakeTerminal(), new HashMap<>(), defaults))
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(all.toArray(String[]::new));
        return new Result(exit, out.toString(), err.toString());
    }

    private static void writeKey(Path pkiDir, KeyState state, String id, int key) throws Exception {
        Files.createDirectories(pkiDir.resolve(state.dirName()));
        Files.write(pkiDir.resolve(state.dirName()).resolve(id), Pem.bytes(Pem.publicKeySpki(key(key))));
    }

    @Test
    void listsAcceptsAndRotatesTheClustersKeysFromAMasterHost() throws Exception {
        master.offer("web1", key(1), PolicyVerdict.NONE);
        master.offer("db1", key(2), PolicyVerdict.ACCEPT);

        Result listed = run("-L");
        assertThat(listed.exit()).as(listed.err()).isZero();
        assertThat(listed.out()).contains("web1", "db1");

        Result accepted = run("-a", "web1", "-y");
        assertThat(accepted.exit()).as(accepted.err()).isZero();
        await().until(() -> master.acceptedKey("web1").isPresent());
        assertThat(Files.readString(cache.resolve("audit.log"))).contains("\"id\":\"web1\"", "brine-key:");

        Result shared = run("-f", "web1");
        assertThat(shared.out()).contains(Fingerprints.of(key(1)));

        assertThat(run("--rotate").exit()).isZero();
        await().until(() -> master.rotationRequests() == 1);
    }

    /** brine-key with {@code between} run after the keys were listed and confirmed, before the write. */
    private BrineKeyTest.Result runWithChangeBetween(Runnable between, String... args) {
        List<String> all = new ArrayList<>(List.of("-c", etc.toString()));
        all.addAll(List.of(args));
        return PlannedChange.run(
                new KeytoolConfig.Defaults(tmp.resolve("none"), tmp.resolve("nopki"), tmp.resolve("default-cache")),
                between,
                all.toArray(String[]::new));
    }

    @Test
    void anAcceptOrRejectTakesOnlyTheKeysItListedFromTheCluster() throws Exception {
        master.offer("new1", key(31), PolicyVerdict.NONE);
        master.offer("new2", key(32), PolicyVerdict.NONE);
        master.offer("new3", key(33), PolicyVerdict.NONE);
        String fp31 = Fingerprints.of(key(31));
        String fp39 = Fingerprints.of(key(39));

        // Another admin deletes new1 and someone else's key is offered under it: pending, then accepted.
        BrineKeyTest.Result pending = runWithChangeBetween(
                () -> {
                    master.delete("new1", "another-admin");
                    master.offer("new1", key(39), PolicyVerdict.NONE);
                },
                "-a",
                "new1,new2",
                "-y");

        assertThat(pending.exit()).isEqualTo(1);
        assertThat(pending.err())
                .contains("new1: the pending key has fingerprint " + fp39 + ", not " + fp31 + "; nothing changed");
        assertThat(pending.out()).contains("Key for minion new2 accepted.").doesNotContain("new1 accepted");
        assertThat(master.lookup("new1", key(39))).isEqualTo(KeyLookup.PENDING_SAME);
        assertThat(master.lookup("new2", key(32))).isEqualTo(KeyLookup.ACCEPTED_SAME);

        BrineKeyTest.Result accepted = runWithChangeBetween(
                () -> {
                    master.delete("new3", "another-admin");
                    master.offer("new3", key(38), PolicyVerdict.ACCEPT); // as an autosign policy would
                },
                "-a",
                "new3",
                "-y");

        assertThat(accepted.exit()).isEqualTo(1);
        assertThat(accepted.err())
                .contains("new3: the id now holds an accepted key with fingerprint "
                        + Fingerprints.of(key(38)) + ", not the pending key " + Fingerprints.of(key(33))
                        + "; nothing changed");
        assertThat(accepted.out()).doesNotContain("already accepted");

        // A reject, likewise: the listed key, or nothing.
        BrineKeyTest.Result rejected = runWithChangeBetween(
                () -> {
                    master.delete("new1", "another-admin");
                    master.offer("new1", key(37), PolicyVerdict.REJECT);
                },
                "-r",
                "new1",
                "-y");

        assertThat(rejected.exit()).isEqualTo(1);
        assertThat(rejected.err())
                .contains("new1: the id now holds a rejected key with fingerprint " + Fingerprints.of(key(37))
                        + ", not the pending key " + fp39 + "; nothing changed");
    }

    @Test
    void importsAPkiDirOnceAndRefusesConflictsWithAReportImportingNothing() throws Exception {
        Path salt = Files.createDirectories(tmp.resolve("salt-pki"));
        writeKey(salt, KeyState.ACCEPTED, "web1", 11);
        writeKey(salt, KeyState.PENDING, "web2", 12);
        writeKey(salt, KeyState.REJECTED, "evil", 13);
        writeKey(salt, KeyState.DENIED, "web1", 14);

        Result first = run("cluster", "import", salt.toString());

        assertThat(first.exit()).as(first.err()).isZero();
        assertThat(first.out()).contains("Imported 4 keys into the cluster (0 already there)");
        await().until(() -> master.acceptedKey("web1").isPresent());
        assertThat(master.acceptedKey("web1")).contains(key(11));
        await().until(() -> master.lookup("web2", key(12)) == KeyLookup.PENDING_SAME
                && master.lookup("evil", key(13)) == KeyLookup.REJECTED
                && master.list().find("web1", KeyState.DENIED).isPresent());
        assertThat(master.list().find("web1", KeyState.DENIED).orElseThrow().fingerprint())
                .isEqualTo(Fingerprints.of(key(14)));
        assertThat(Files.readString(cache.resolve("audit.log"))).contains("imported from " + salt);

        Result again = run("cluster", "import", salt.toString());
        assertThat(again.exit()).as(again.err()).isZero();
        assertThat(again.out()).contains("Imported 0 keys into the cluster (4 already there)");

        // web2 now holds another key in the cluster; a new key in the pki dir waits with everything else.
        master.delete("web2", "admin");
        master.offer("web2", key(15), PolicyVerdict.NONE);
        writeKey(salt, KeyState.PENDING, "new1", 16);
        Files.writeString(salt.resolve(KeyState.PENDING.dirName()).resolve("junk1"), "not a key");

        Result refused = run("cluster", "import", salt.toString());

        assertThat(refused.exit()).isEqualTo(UserError.REFUSED);
        assertThat(refused.err())
                .contains(
                        "cluster import refused, nothing imported: 2 problems",
                        "web2: pending here (" + Fingerprints.of(key(12)) + "), pending in the cluster ("
                                + Fingerprints.of(key(15)) + ")",
                        "minions_pre/junk1:");
        assertThat(master.lookup("new1", key(16))).isEqualTo(KeyLookup.UNKNOWN);
        assertThat(master.lookup("web2", key(15))).isEqualTo(KeyLookup.PENDING_SAME);
    }

    @Test
    void importRefusesAKeyHeldByTwoIdsHereOrByAnotherIdInTheClusterImportingNothing() throws Exception {
        Path salt = Files.createDirectories(tmp.resolve("salt-pki"));
        writeKey(salt, KeyState.ACCEPTED, "web1", 21);
        writeKey(salt, KeyState.PENDING, "web2", 21);
        writeKey(salt, KeyState.ACCEPTED, "db1", 22);
        writeKey(salt, KeyState.PENDING, "new1", 23);
        master.offer("cache1", key(22), PolicyVerdict.NONE);
        await().until(() -> master.lookup("cache1", key(22)) == KeyLookup.PENDING_SAME);

        Result refused = run("cluster", "import", salt.toString());

        assertThat(refused.exit()).as(refused.out()).isEqualTo(UserError.REFUSED);
        assertThat(refused.err())
                .contains(
                        "nothing imported: 2 problems",
                        "web1, web2: the same key (" + Fingerprints.of(key(21)) + ") under 2 ids here (minions/web1,"
                                + " minions_pre/web2)",
                        "db1: accepted here (" + Fingerprints.of(key(22))
                                + "), the same key is in the cluster under cache1" + " (pending)");
        assertThat(master.lookup("new1", key(23))).isEqualTo(KeyLookup.UNKNOWN);
        assertThat(master.lookup("web1", key(21))).isEqualTo(KeyLookup.UNKNOWN);
        assertThat(master.list().keys(KeyState.ACCEPTED)).isEmpty();
    }

    @Test
    void importTakesAKeyDeniedUnderOneIdAndHeldByAnotherAsTheLiveClusterMakesIt() throws Exception {
        Path salt = Files.createDirectories(tmp.resolve("salt-pki"));
        writeKey(salt, KeyState.ACCEPTED, "web1", 24);
        writeKey(salt, KeyState.PENDING, "web2", 26);
        writeKey(salt, KeyState.DENIED, "web1", 26);

        Result imported = run("cluster", "import", salt.toString());

        assertThat(imported.exit()).as(imported.err()).isZero();
        await().until(() -> master.lookup("web2", key(26)) == KeyLookup.PENDING_SAME);
        assertThat(master.list().keys(KeyState.DENIED))
                .singleElement()
                .satisfies(k -> assertThat(k.id()).isEqualTo("web1"));
        assertThat(master.lookup("web1", key(24))).isEqualTo(KeyLookup.ACCEPTED_SAME);
    }

    @Test
    void aClusterWithoutAuthIsRefusedUnlessTheOpenAclIsSaid() throws Exception {
        Path pki = tmp.resolve("pki");
        String open = "pki_dir: " + pki + "\ncachedir: " + cache + "\ncluster:\n  connect: " + server.getConnectString()
                + "\n  root: /open" + ROOTS.incrementAndGet() + "\n";
        Files.writeString(etc.resolve("master.yaml"), open);

        Result refused = run("-L");

        assertThat(refused.exit()).isEqualTo(UserError.USAGE);
        assertThat(refused.err()).contains("no auth", "cluster.insecure_open_acl: true");
        Files.writeString(etc.resolve("master.yaml"), open + "  insecure_open_acl: true\n");
        Result listed = run("-L");
        assertThat(listed.exit()).as(listed.err()).isZero();
    }

    @Test
    void policyCheckAsksAboutTheClustersKeys() throws Exception {
        master.offer("web1", key(1), PolicyVerdict.ACCEPT);
        Path pub = tmp.resolve("web1.pub");
        Files.write(pub, Pem.bytes(Pem.publicKeySpki(key(1))));

        Result known = run("policy", "check", "web1", "--pub", pub.toString());
        Result other = run("policy", "check", "web2", "--pub", pub.toString());

        assertThat(known.exit()).as(known.err()).isZero();
        assertThat(known.out()).contains("The key store holds this id as accepted", "would answer ACCEPTED");
        assertThat(other.out()).contains("would answer PENDING");
    }

    @Test
    void importWithoutAClusterSectionIsAUsageError() throws Exception {
        Files.writeString(etc.resolve("master.yaml"), "pki_dir: " + tmp.resolve("pki") + "\n");
        Path salt = Files.createDirectories(tmp.resolve("salt-pki"));
        writeKey(salt, KeyState.ACCEPTED, "web1", 11);

        Result result = run("cluster", "import", salt.toString());

        assertThat(result.exit()).isEqualTo(UserError.USAGE);
        assertThat(result.err()).contains("no cluster: section");
    }

    @Test
    void rotateMasterKeyOnAMasterHostRotatesTheClustersKeyWithPkiDirAndCachedirGivenToo() throws Exception {
        Path pki = tmp.resolve("pki");
        Files.writeString(pki.resolve("master.pub"), TestKeys.publicPem(250));
        Result unreadable = run("--pki-dir", pki.toString(), "--cachedir", cache.toString(), "--rotate-master-key");
        assertThat(unreadable.exit()).isEqualTo(UserError.USAGE);
        assertThat(unreadable.err()).contains("master.pem is missing", "nothing changed");

        Path pem = Files.writeString(pki.resolve("master.pem"), TestKeys.privatePem(250));
        Files.setPosixFilePermissions(pem, PosixFilePermissions.fromString("r--------"));
        Files.writeString(etc.resolve("master.yaml"), "master_sign_pubkey: true\n", StandardOpenOption.APPEND);
        Files.writeString(pki.resolve("master_sign.pub"), TestKeys.publicPem(200));
        Result unsigned = run("--pki-dir", pki.toString(), "--cachedir", cache.toString(), "--rotate-master-key");
        assertThat(unsigned.exit()).isEqualTo(UserError.USAGE);
        assertThat(unsigned.err()).contains("master_sign_pubkey is on", "nothing changed");
        // A rotation prepared for the offline signing key waits in ZooKeeper; a one-step rotation is refused meanwhile.
        Result prepare =
                run("--pki-dir", pki.toString(), "--cachedir", cache.toString(), "--rotate-master-key", "--prepare");
        assertThat(prepare.exit()).as(prepare.err()).isZero();
        assertThat(prepare.out()).contains("prepared in the cluster (ZooKeeper), not in force");
        assertThat(pki.resolve("master.pem.pending")).doesNotExist();
        ZkMasterKeys keys = new ZkMasterKeys(client);
        assertThat(keys.pending()).isPresent();
        assertThat(keys.load(TestKeys.pair(250), 0).chain()).isEmpty();
        Path signing = Files.writeString(tmp.resolve("master_sign.pem"), TestKeys.privatePem(200));
        Files.setPosixFilePermissions(signing, PosixFilePermissions.fromString("r--------"));
        Result waiting = run("--rotate-master-key", "--master-sign-key", signing.toString());
        assertThat(waiting.exit()).isEqualTo(UserError.USAGE);
        assertThat(waiting.err()).contains("waiting for its signature", "nothing changed");
        Result cancelled = run("--rotate-master-key", "--cancel");
        assertThat(cancelled.exit()).as(cancelled.err()).isZero();
        assertThat(keys.pending()).isEmpty();
        assertThat(pki.resolve("master_sign.request")).doesNotExist();

        Result rotated = run(
                "--pki-dir",
                pki.toString(),
                "--cachedir",
                cache.toString(),
                "--rotate-master-key",
                "--master-sign-key",
                signing.toString());
        assertThat(rotated.exit()).as(rotated.err()).isZero();
        assertThat(rotated.out())
                .contains("Every running master of the cluster takes it", "pub_sig of the new key kept");
        MasterKeySet now = keys.load(TestKeys.pair(250), System.currentTimeMillis());
        assertThat(now.chain()).hasSize(1);
        assertThat(now.chain().get(0).signingSignature()).isNotNull();
        assertThat(Fingerprints.of(now.current().getPublic())).isNotEqualTo(Fingerprints.of(key(250)));
        // The cluster's key, not this host's pki dir: nothing rotated there.
        assertThat(pki.resolve("master_chain")).doesNotExist();
        assertThat(pki.resolve("master_pubkey_signature")).doesNotExist();
        assertThat(Files.readString(pki.resolve("master.pem"))).isEqualTo(TestKeys.privatePem(250));
        assertThat(Files.readString(cache.resolve("audit.log"))).contains("\"master-key-rotated\"");
        // -F shows the key the minions are shown now: the cluster's newest, not this host's installed master.pub.
        Result finger = run("-F");
        assertThat(finger.out())
                .contains(Fingerprints.of(now.current().getPublic()))
                .doesNotContain(Fingerprints.of(key(250)));
    }

    /**
     * Issue 25, the cluster: the key in force gets Salt's pub_sig without a rotation, and a rotation is signed offline
     * in two steps: the request prepared on one master host, signed off the cluster, put in force from another
     * (here: the same pki dir, another run), with its pub_sig in ZooKeeper; nothing is written to the pki dir but the
     * request's copy, removed once the rotation is in force.
     */
    @Test
    void theClustersKeyInForceIsSignedWithoutARotationAndARotationIsSignedOfflineInTwoSteps() throws Exception {
        Path pki = tmp.resolve("pki");
        Files.writeString(pki.resolve("master.pub"), TestKeys.publicPem(250));
        Path pem = Files.writeString(pki.resolve("master.pem"), TestKeys.privatePem(250));
        Files.setPosixFilePermissions(pem, PosixFilePermissions.fromString("r--------"));
        Files.writeString(pki.resolve("master_sign.pub"), TestKeys.publicPem(200));
        Files.writeString(etc.resolve("master.yaml"), "master_sign_pubkey: true\n", StandardOpenOption.APPEND);
        Path offline = Files.createDirectories(tmp.resolve("usb"));
        Path signing = Files.writeString(offline.resolve("master_sign.pem"), TestKeys.privatePem(200));
        Files.setPosixFilePermissions(signing, PosixFilePermissions.fromString("r--------"));
        ZkMasterKeys keys = new ZkMasterKeys(client);

        Result request = run("--master-pubkey-signature", "--prepare");
        assertThat(request.exit()).as(request.err()).isZero();
        Path keyRequest = Files.copy(
                pki.resolve("master_pubkey_signature.request"), offline.resolve("master_pubkey_signature.request"));
        assertThat(run("--sign-master-key", keyRequest.toString(), "--master-sign-key", signing.toString())
                        .exit())
                .isZero();
        Result installed = run(
                "--master-pubkey-signature",
                "--signature",
                offline.resolve("master_pubkey_signature.request.sig").toString());
        assertThat(installed.exit()).as(installed.err()).isZero();
        assertThat(installed.out()).contains("installed in the cluster", "every running master");
        assertThat(SaltPubkeySignature.parse(keys.loadInForce(TestKeys.pair(250), 0)
                                .saltSignature()
                                .orElseThrow())
                        .verifies(key(250), key(200)))
                .isTrue();

        Result prepared = run("--rotate-master-key", "--prepare");
        assertThat(prepared.exit()).as(prepared.err()).isZero();
        Path rotation = Files.copy(pki.resolve("master_sign.request"), offline.resolve("master_sign.request"));
        assertThat(run("--sign-master-key", rotation.toString(), "--master-sign-key", signing.toString())
                        .exit())
                .isZero();
        Result done = run(
                "--rotate-master-key",
                "--signature",
                offline.resolve("master_sign.request.sig").toString());
        assertThat(done.exit()).as(done.err()).isZero();
        assertThat(done.out()).contains("Every running master of the cluster takes it");
        ZkMasterKeys.InForce now = keys.loadInForce(TestKeys.pair(250), System.currentTimeMillis());
        assertThat(Fingerprints.of(now.keys().current().getPublic()))
                .isEqualTo(Fingerprints.of(
                        OfflineMasterSigning.readRequest(rotation).next()));
        assertThat(SaltPubkeySignature.parse(now.saltSignature().orElseThrow())
                        .verifies(now.keys().current().getPublic(), key(200)))
                .isTrue();
        assertThat(keys.pending()).isEmpty();
        assertThat(pki.resolve("master_sign.request")).doesNotExist();
        assertThat(pki.resolve("master_chain")).doesNotExist();
        assertThat(pki.resolve("master_pubkey_signature")).doesNotExist();
        assertThat(Files.readString(cache.resolve("audit.log")))
                .contains("master-key-signature-installed", "master-key-rotation-prepared", "master-key-rotated");
    }

    // ------------------------------------------------------------ --rotate-keys (issue 25)

    @Test
    void rotateKeysAsksInTheClusterWhereEveryMasterSeesIt_AndTheListingIsTheOneOfAMasterAlone() throws Exception {
        master.offer("db1", key(41), PolicyVerdict.ACCEPT);
        master.offer("db2", key(42), PolicyVerdict.ACCEPT);
        String fp41 = Fingerprints.of(key(41));

        Result asked = run("--rotate-keys", "db*");

        assertThat(asked.exit()).as(asked.err()).isZero();
        assertThat(asked.out())
                .contains(
                        "db1: asked to rotate " + fp41 + " at its next heartbeat",
                        "db2: asked to rotate " + Fingerprints.of(key(42)),
                        "2 asked, 0 already asked, 0 refused; each master of the cluster asks its minions");
        await().until(() -> master.rotationAsked("db1").isPresent()
                && master.rotationAsked("db2").isPresent());
        Result again = run("--rotate-keys", "db1", "--out", "json");
        assertThat(again.exit()).as(again.err()).isZero();
        assertThat(JSON.readTree(again.out()).get("already_asked").toString()).isEqualTo("[\"db1\"]");
        assertThat(JSON.readTree(again.out()).get("asked").toString()).isEqualTo("[]");
        assertThat(Files.readAllLines(cache.resolve("audit.log")))
                .filteredOn(line -> line.contains("\"event\":\"key-rotation-asked\""))
                .as("asking again is no change")
                .hasSize(2);
        assertThat(run("-l", "acc").out())
                .matches("Accepted Keys:\ndb1  \\(rotation asked \\S+Z, not yet"
                        + " rotated\\)\ndb2  \\(rotation asked \\S+Z, not yet rotated\\)\n");

        master.rotate("db1", key(41), key(43), KeyRotationPolicy.ALLOW, "minion db1");

        assertThat(run("-l", "acc").out()).contains("db1  (rotated, asked ", "db2  (rotation asked ");
        JsonNode json = JSON.readTree(run("-L", "--out", "json").out()).get("minions_rotation_asked");
        assertThat(json.get("db1").get("status").asText()).isEqualTo("rotated");
        assertThat(json.get("db1").get("asked_fingerprint").asText()).isEqualTo(fp41);
        assertThat(json.get("db1").get("fingerprint").asText()).isEqualTo(Fingerprints.of(key(43)));
        assertThat(json.get("db2").get("status").asText()).isEqualTo("asked");
        assertThat(run("-d", "db2", "-y").exit()).isZero();
        assertThat(JSON.readTree(run("-L", "--out", "json").out())
                        .get("minions_rotation_asked")
                        .has("db2"))
                .isFalse();
        await().until(() -> !master.rotationAsks().containsKey("db2"));
    }

    @Test
    void rotateKeysRefusesInTheClusterWhatItRefusesAlone() throws Exception {
        master.offer("db1", key(44), PolicyVerdict.ACCEPT);
        master.offer("web1", key(45), PolicyVerdict.NONE);
        master.offer("salt1", key(46), MinionKind.SALT, current -> PolicyVerdict.ACCEPT);

        Result none = run("--rotate-keys", "nosuch*");
        assertThat(none.exit()).isEqualTo(1);
        assertThat(none.err()).isEqualTo("brine-key: the key glob 'nosuch*' does not match any key\n");
        Result salt = run("--rotate-keys", "salt1");
        assertThat(salt.exit()).isEqualTo(1);
        assertThat(salt.err()).contains("salt1: a Salt minion cannot rotate its key", "brine-key -d salt1");
        Result all = run("--rotate-keys", "*");
        assertThat(all.exit()).isEqualTo(1);
        assertThat(all.out()).contains("db1: asked to rotate", "1 asked, 0 already asked, 2 refused");
        assertThat(all.err()).contains("web1: no accepted key (the id is pending)", "salt1: a Salt minion");
        assertThat(master.rotationAsks()).containsOnlyKeys("db1");

        Files.writeString(etc.resolve("master.yaml"), "key_rotation: deny\n", StandardOpenOption.APPEND);
        master.offer("db2", key(47), PolicyVerdict.ACCEPT);
        Result denied = run("--rotate-keys", "db2");
        assertThat(denied.exit()).isEqualTo(1);
        assertThat(denied.err()).contains("key_rotation: deny", "nothing was asked");
        assertThat(master.rotationAsks()).containsOnlyKeys("db1");
    }
}

package io.brine.master.salt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import com.github.benmanes.caffeine.cache.Ticker;
import io.brine.cluster.ClusterConnection;
import io.brine.cluster.ZkKeyStore;
import io.brine.cluster.ZkKeyStoreOptions;
import io.brine.cluster.ZkMasterKeys;
import io.brine.daemon.config.ClusterConfig;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.testing.LogCapture;
import io.brine.master.AuditLines;
import io.brine.master.TestKeyStores;
import io.brine.master.auth.AuditedAuth;
import io.brine.master.auth.AuthWorkBudget;
import io.brine.master.auth.MasterKeyring;
import io.brine.master.auth.StoreWrites;
import io.brine.master.events.EventStream;
import io.brine.master.jobs.ActiveJobs;
import io.brine.master.jobs.JobCache;
import io.brine.master.jobs.JobRecord;
import io.brine.master.jobs.SharedJobs;
import io.brine.master.jobs.StoredReturn;
import io.brine.master.metrics.MasterMetrics;
import io.brine.master.publish.GrainsStore;
import io.brine.protocol.ReservedIds;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.salt.Crypticle;
import io.brine.protocol.salt.SaltAuthRequest;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltPublishHello;
import io.brine.protocol.salt.SaltReplies;
import io.brine.protocol.salt.SaltRequest;
import io.brine.protocol.salt.SaltRsa;
import io.brine.protocol.salt.SaltSessionRequest;
import io.brine.protocol.salt.SaltSignIn;
import io.brine.protocol.salt.SaltValue;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import io.brine.protocol.testing.TinyFileSystem;
import io.brine.store.audit.AuditLog;
import io.brine.store.audit.FileAuditLog;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyChange;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.Offer;
import io.brine.store.keys.OfflineMasterSigning;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.RecordingKeyStore;
import io.brine.store.keys.SaltMarks;
import io.brine.store.policy.AcceptancePolicies;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.RSAPublicKeySpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.assertj.core.api.Assertions;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SaltService as a stock Salt minion meets it, with the protocol module's minion-side checks (SaltSignIn,
 * SaltReplies.openSealed): the sign-in, and what is refused with Salt's "bad load" (no session, a replay, a key no
 * longer accepted while its session key lingers, an auth version below 3).
 */
class SaltServiceTest {

    private static final SaltRsa.Encryption ENC = SaltRsa.Encryption.OAEP_SHA1;
    private static final SaltRsa.Signing SIG = SaltRsa.Signing.PKCS1V15_SHA1;

    @TempDir
    Path dir;

    KeyStore store;
    AcceptancePolicies policies;
    AuditLog audit;
    JobCache jobCache;
    SaltKeys keys;
    SaltService salt;
    SaltFileServer files;
    ActiveJobs jobs;
    final KeyPair minion = TestKeys.pair(0);
    final List<String> bound = new ArrayList<>();

    /** The answers one request got, in order. */
    final class Recorded implements SaltReplyPath {
        final List<SaltValue> replies = new ArrayList<>();
        boolean disconnected;
        boolean keptUnproven;

        @Override
        public void reply(SaltValue value) {
            replies.add(value);
        }

        @Override
        public void bind(String id) {
            bound.add(id);
        }

        @Override
        public void disconnect() {
            disconnected = true;
        }

        @Override
        public void keepUnproven() {
            keptUnproven = true;
        }

        @Override
        public String remoteAddress() {
            return "10.0.0.7";
        }

        SaltValue only() {
            assertThat(replies).hasSize(1);
            return replies.get(0);
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        store = TestKeyStores.open(dir);
        policies = AcceptancePolicies.fromConfig(
                MasterConfig.builder(dir).build(), store, Clock.systemUTC(), AuditLog.none());
        audit = AuditLog.openFile(dir.resolve("audit.log"), Clock.systemUTC());
        jobCache =
                new JobCache(dir.resolve("jobs"), Duration.ofHours(1), 1 << 20, Clock.systemUTC(), SharedJobs.alone());
        KeyPair master = store.masterKeyPair();
        keys = new SaltKeys(() -> master, Optional::empty, () -> 4505, store);
        jobs = new ActiveJobs(
                jobCache, audit, Clock.systemUTC(), new MasterMetrics(), new EventStream(Clock.systemUTC()));
        Path srv = Files.createDirectories(dir.resolve("srv"));
        Files.writeString(srv.resolve("top.sls"), "base:\n  '*':\n    - motd\n");
        files = new SaltFileServer(
                new FileRoots(
                        new FileRoots.Options(
                                Map.of("base", List.of(srv)),
                                List.of(),
                                List.of(),
                                "sha256",
                                Duration.ofSeconds(20),
                                FileRoots.MAX_ENTRIES),
                        Clock.systemUTC()),
                SaltFileServer.Limits.defaults(),
                Clock.systemUTC(),
                Ticker.systemTicker());
        salt = service(1 << 20);
    }

    @AfterEach
    void tearDown() {
        jobCache.close();
        policies.close();
        store.close();
        audit.close();
    }

    private SaltService service(long maxReturnBytes) {
        return service(maxReturnBytes, audit);
    }

    private SaltService service(long maxReturnBytes, AuditLog audit) {
        return new SaltService(
                store,
                policies,
                keys,
                new AuditedAuth(audit),
                new GrainsStore(id -> Map.of(), Clock.systemUTC()),
                jobs,
                maxReturnBytes,
                Clock.systemUTC(),
                new AuthWorkBudget(1_000_000, Clock.systemUTC()),
                new StoreWrites(Clock.systemUTC()),
                files);
    }

    /** A {@code _return} to {@code jid} as Salt's minion seals it, its return value {@code size} characters. */
    private SaltRequest.Encrypted sealedReturn(String id, Crypticle session, String jid, int size) {
        byte[] tok = SaltRsa.x931Sign(minion.getPrivate(), "salt".getBytes(StandardCharsets.US_ASCII));
        SaltValue.Map fields = SaltValue.Map.builder()
                .put("cmd", "_return")
                .put("jid", jid)
                .put("fun", "test.echo")
                .put("return", "x".repeat(size))
                .put("retcode", 0L)
                .build();
        byte[] load = SaltSessionRequest.seal(session, fields, id, nonce(), System.currentTimeMillis() / 1000, tok);
        return new SaltRequest.Encrypted(id, load, 3, ENC.wireName(), SIG.wireName());
    }

    private SaltSignIn.Outcome signIn(String id, int version) throws Exception {
        String nonce = nonce();
        SaltAuthRequest load =
                SaltAuthRequest.of(id, minion.getPublic(), nonce, ENC, SIG, Optional.empty(), Optional.empty());
        Recorded path = new Recorded();
        salt.handle(new SaltRequest.Auth(load, version), path);
        return outcome(path.only(), nonce);
    }

    /** What a Salt minion makes of {@code reply} to its sign-in with {@code nonce}. */
    private SaltSignIn.Outcome outcome(SaltValue reply, String nonce) throws Exception {
        return SaltSignIn.check(
                reply,
                nonce,
                Optional.empty(),
                minion.getPrivate(),
                ENC,
                SIG,
                Optional.empty(),
                SaltLimits.UNAUTHENTICATED);
    }

    private static String nonce() {
        return UUID.randomUUID().toString().replace("-", "");
    }

    /** A session request as Salt's minion seals it. */
    private SaltRequest.Encrypted sealed(String id, Crypticle session, String cmd, String nonce) {
        byte[] tok = SaltRsa.x931Sign(minion.getPrivate(), "salt".getBytes(StandardCharsets.US_ASCII));
        SaltValue.Map fields = SaltValue.Map.builder()
                .put("cmd", cmd)
                .put("tag", "minion_start")
                .put("data", "x")
                .build();
        byte[] load = SaltSessionRequest.seal(session, fields, id, nonce, System.currentTimeMillis() / 1000, tok);
        return new SaltRequest.Encrypted(id, load, 3, ENC.wireName(), SIG.wireName());
    }

    private SaltValue send(SaltRequest.Encrypted request) {
        Recorded path = new Recorded();
        salt.handle(request, path);
        return path.only();
    }

    private Crypticle accepted(String id) throws Exception {
        assertThat(signIn(id, 3)).isInstanceOf(SaltSignIn.Waiting.class);
        assertThat(dir.resolve("pki/minions_pre/" + id)).exists();
        store.accept(id, null, "test-admin");
        SaltSignIn.Outcome outcome = signIn(id, 3);
        assertThat(outcome).isInstanceOf(SaltSignIn.Accepted.class);
        assertThat(bound).contains(id);
        return ((SaltSignIn.Accepted) outcome).session();
    }

    @Test
    void aNewKeyWaitsInMinionsPreAndOnceAcceptedItsSessionRequestsAreAnsweredSealed() throws Exception {
        Crypticle session = accepted("salt1");
        String nonce = nonce();
        SaltValue reply = send(sealed("salt1", session, "_minion_event", nonce));
        assertThat(SaltReplies.openSealed(reply, session, nonce, SaltLimits.SESSION))
                .isEqualTo(SaltValue.nil());
        assertThat(Files.readString(dir.resolve("audit.log")))
                .contains("auth-pending")
                .contains("auth-accepted");
    }

    @Test
    void onAFullDiskAKeyHeldPendingIsAnsweredAndAnAcceptWithoutItsAuditLineWaits() throws Exception {
        try (TinyFileSystem fs = TinyFileSystem.mount(dir.resolve("fs"), "512k");
                FileAuditLog full = AuditLog.openFile(fs.root().resolve("audit.log"), Clock.systemUTC())) {
            salt = service(1 << 20, full);
            assertThat(signIn("salt1", 3)).isInstanceOf(SaltSignIn.Waiting.class);
            TinyFileSystem.endAtPage(full.file());
            fs.fill();

            // Changes nothing: answered as before, without its audit line.
            assertThat(signIn("salt1", 3)).isInstanceOf(SaltSignIn.Waiting.class);
            // Would open a session: not without its audit line, Salt's "pending" (ask again later).
            store.accept("salt1", null, "test-admin");
            assertThat(signIn("salt1", 3)).isInstanceOf(SaltSignIn.Waiting.class);
            assertThat(bound).doesNotContain("salt1");
        }
    }

    @Test
    void aSignInWhoseKeyIsDeletedWhileItIsAnsweredIsAuditedOnlyAsRefused() throws Exception {
        accepted("salt1");
        List<String> before = AuditLines.of(dir.resolve("audit.log"));
        KeyStore real = store;
        // An admin deletes the key once the store has answered 'accepted', before the answer goes out.
        store = new RecordingKeyStore(real) {
            @Override
            public Offer offer(String id, RSAPublicKey offered, MinionKind kind, Policies asked) {
                Offer offer = super.offer(id, offered, kind, asked);
                delegate().delete(id, "test-admin");
                return offer;
            }
        };
        salt = service(1 << 20);

        assertThat(signIn("salt1", 3)).isInstanceOf(SaltSignIn.Refused.class);
        assertThat(keys.session("salt1")).isEmpty();
        assertThat(AuditLines.of(dir.resolve("audit.log")))
                .containsExactlyElementsOf(concat(before, "auth-refused: key removed while answering"));
    }

    @Test
    void anAcceptedKeyAskingForAnEncryptionAlgorithmNotServedIsAuditedAsRefusedNotAccepted() throws Exception {
        accepted("salt1");
        List<String> before = AuditLines.of(dir.resolve("audit.log"));
        SaltAuthRequest load =
                SaltAuthRequest.of("salt1", minion.getPublic(), nonce(), ENC, SIG, Optional.empty(), Optional.empty());
        // Anyone holding the minion's public key can ask so: Salt answers "bad enc algo", which grants nothing.
        SaltAuthRequest badEnc = new SaltAuthRequest(
                load.id(),
                load.pub(),
                load.nonce(),
                "OAEP-SHA256",
                load.sigAlgo(),
                load.token(),
                load.autosignGrains(),
                load.version());
        Recorded path = new Recorded();
        salt.handle(new SaltRequest.Auth(badEnc, 3), path);

        assertThat(outcome(path.only(), badEnc.nonce())).isEqualTo(new SaltSignIn.BadAlgorithm("bad enc algo"));
        assertThat(AuditLines.of(dir.resolve("audit.log")))
                .containsExactlyElementsOf(
                        concat(before, "auth-refused: encryption algorithm 'OAEP-SHA256' not served"));
    }

    private static List<String> concat(List<String> lines, String line) {
        List<String> all = new ArrayList<>(lines);
        all.add(line);
        return all;
    }

    @Test
    void aReservedIdIsRejectedAndNothingIsFiledWhileTheListAllowsIt() throws Exception {
        for (String id : List.of("con.example.com", "master")) {
            assertThat(signIn(id, 3)).as(id).isInstanceOf(SaltSignIn.Refused.class);
            for (String state : List.of("minions_pre", "minions", "minions_rejected", "minions_denied")) {
                assertThat(dir.resolve("pki/" + state + "/" + id)).doesNotExist();
            }
        }
        assertThat(Files.readString(dir.resolve("audit.log"))).contains("is reserved (reserved_ids entry con.*)");
        assertThat(signIn("salt1", 3)).isInstanceOf(SaltSignIn.Waiting.class);

        policies.reserving(ReservedIds.NONE);
        assertThat(signIn("master", 3)).isInstanceOf(SaltSignIn.Waiting.class);
        assertThat(dir.resolve("pki/minions_pre/master")).exists();
    }

    @Test
    void aReturnOverMaxReturnBytesIsAnsweredAndStoredAsARefusalAndOneAtTheLimitAsSent() throws Exception {
        Crypticle session = accepted("salt1");
        String fits = "20261126010203000001";
        String over = "20261126010203000002";
        for (String jid : List.of(fits, over)) {
            jobCache.create(new JobRecord(
                    jid,
                    "2026-11-26T01:02:03Z",
                    "root",
                    "glob",
                    "salt1",
                    "test.echo",
                    List.of(),
                    Map.of(),
                    30,
                    List.of("salt1")));
            jobs.begin(jid, "test.echo", List.of("salt1"), null, null);
        }
        SaltRequest.Encrypted atLimit = sealedReturn("salt1", session, fits, 3000);
        salt = service(atLimit.load().length);
        Recorded stored = new Recorded();
        salt.handle(atLimit, stored);
        SaltRequest.Encrypted oneOver = sealedReturn("salt1", session, over, 3000);
        salt = service(oneOver.load().length - 1);
        Recorded refusedPath = new Recorded();
        salt.handle(oneOver, refusedPath);

        // Each answered (once stored), so that the minion does not resend it.
        Awaitility.await().until(() -> stored.replies.size() == 1 && refusedPath.replies.size() == 1);
        assertThat(stored.only()).isNotEqualTo(SaltValue.str("bad load"));
        assertThat(refusedPath.only()).isNotEqualTo(SaltValue.str("bad load"));
        assertThat(jobCache.returns(fits).get(0).returnValue()).isEqualTo("x".repeat(3000));
        assertThat(jobCache.returns(fits).get(0).success()).isTrue();
        StoredReturn refused = jobCache.returns(over).get(0);
        assertThat(refused.success()).isFalse();
        assertThat(refused.retcode()).isEqualTo(1);
        assertThat(refused.returnValue())
                .isEqualTo("return of " + oneOver.load().length
                        + " bytes refused by the master: over max_return_bytes (" + (oneOver.load().length - 1) + ")");
    }

    @Test
    void aCommandTheMasterDoesNotServeGetsSaltsEmptyMap() throws Exception {
        Crypticle session = accepted("salt1");
        String nonce = nonce();
        SaltValue reply = send(sealed("salt1", session, "_mine_get", nonce));
        assertThat(SaltReplies.openSealed(reply, session, nonce, SaltLimits.SESSION))
                .isEqualTo(SaltReplies.UNSERVED);
    }

    @Test
    void aFileServerRequestIsAnsweredFromFileRootsSealedBehindItsOwnNonce() throws Exception {
        Crypticle session = accepted("salt1");
        byte[] tok = SaltRsa.x931Sign(minion.getPrivate(), "salt".getBytes(StandardCharsets.US_ASCII));
        String nonce = nonce();
        SaltValue.Map fields = SaltValue.Map.builder()
                .put("cmd", "_file_hash")
                .put("path", "top.sls")
                .put("saltenv", "base")
                .build();
        SaltValue reply = send(new SaltRequest.Encrypted(
                "salt1",
                SaltSessionRequest.seal(session, fields, "salt1", nonce, System.currentTimeMillis() / 1000, tok),
                3,
                ENC.wireName(),
                SIG.wireName()));
        SaltValue.Map hash = (SaltValue.Map) SaltReplies.openSealed(reply, session, nonce, SaltLimits.SESSION);
        assertThat(hash.get("hash_type")).contains(SaltValue.str("sha256"));
        // A reply to another request (CVE-2022-22936) does not open as this one's.
        Assertions.assertThatThrownBy(() -> SaltReplies.openSealed(reply, session, nonce(), SaltLimits.SESSION))
                .isInstanceOf(CryptoException.class);
        String next = nonce();
        SaltValue opts = send(sealed("salt1", session, "_master_opts", next));
        assertThat(((SaltValue.Map) SaltReplies.openSealed(opts, session, next, SaltLimits.SESSION)).get("renderer"))
                .contains(SaltValue.str("jinja|yaml"));
    }

    @Test
    void withoutASessionKeyOrReplayedOrFromARemovedKeyARequestGetsBadLoad() throws Exception {
        SaltValue badLoad = SaltValue.str("bad load");
        Crypticle stranger = Crypticle.generate();
        assertThat(send(sealed("salt1", stranger, "_minion_event", nonce()))).isEqualTo(badLoad);

        Crypticle session = accepted("salt1");
        SaltRequest.Encrypted once = sealed("salt1", session, "_minion_event", nonce());
        assertThat(send(once)).isNotEqualTo(badLoad);
        assertThat(send(once)).as("replayed").isEqualTo(badLoad);

        // The session key lingers here (no key listener in this test): the tok check against the store refuses.
        store.delete("salt1", "test-admin");
        assertThat(keys.session("salt1")).isPresent();
        assertThat(send(sealed("salt1", session, "_minion_event", nonce()))).isEqualTo(badLoad);
        assertThat(keys.session("salt1")).as("dropped on the refusal").isEmpty();
    }

    @Test
    void aTcpPublishHelloBindsItsConnectionOnlyWithTheCurrentAesKeyAndTheTokOfAnAcceptedKey() throws Exception {
        // A hello sealed with another aes key (the one before a restart) keeps its connection, unbound, as Salt's
        // master does (Salt 3006/3007 lost the master a second time when it was closed); any other refusal closes.
        byte[] tok = SaltRsa.x931Sign(minion.getPrivate(), "salt".getBytes(StandardCharsets.US_ASCII));
        accepted("salt1");
        bound.clear();

        Recorded proven = new Recorded();
        salt.hello(new SaltPublishHello("salt1", tok).seal(keys.aes()), proven);
        assertThat(bound).containsExactly("salt1");
        assertThat(proven.disconnected).isFalse();
        assertThat(proven.replies).as("a hello has no answer").isEmpty();

        bound.clear();
        Recorded stale = new Recorded();
        salt.hello(new SaltPublishHello("salt1", tok).seal(Crypticle.generate()), stale);
        Recorded forged = new Recorded();
        salt.hello(new SaltPublishHello("salt1", new byte[256]).seal(keys.aes()), forged);
        Recorded unknown = new Recorded();
        salt.hello(new SaltPublishHello("salt2", tok).seal(keys.aes()), unknown);
        store.delete("salt1", "test-admin");
        Recorded removed = new Recorded();
        salt.hello(new SaltPublishHello("salt1", tok).seal(keys.aes()), removed);
        Recorded clear = new Recorded();
        salt.hello(
                SaltValue.Map.builder()
                        .put("enc", "clear")
                        .put("load", new byte[16])
                        .build(),
                clear);
        assertThat(bound).isEmpty();
        assertThat(stale.keptUnproven).isTrue();
        assertThat(stale.disconnected).isFalse();
        assertThat(List.of(forged, unknown, removed, clear)).allMatch(path -> path.disconnected && !path.keptUnproven);
    }

    @Test
    void aKeyWithASmallPrimeFactorIsRefusedByTheStoresCheckAndFilesNothing() throws Exception {
        // Parsed for its shape only on the way in; the key store's factor check is what refuses it.
        BigInteger n = ((RSAPublicKey) minion.getPublic()).getModulus().multiply(BigInteger.valueOf(7919));
        PublicKey bad =
                KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(n, BigInteger.valueOf(65537)));
        String nonce = nonce();
        Recorded path = new Recorded();
        salt.handle(
                new SaltRequest.Auth(
                        SaltAuthRequest.of("salt1", bad, nonce, ENC, SIG, Optional.empty(), Optional.empty()), 3),
                path);

        assertThat(outcome(path.only(), nonce)).isInstanceOf(SaltSignIn.Refused.class);
        assertThat(dir.resolve("pki/minions_pre/salt1")).doesNotExist();
        assertThat(Files.readString(dir.resolve("audit.log"))).contains("small prime factor (7919)");
    }

    @Test
    void authBelowVersion3GetsBadLoadAndFilesNothing() throws Exception {
        assertThat(signIn("salt1", 2)).isInstanceOf(SaltSignIn.BadLoad.class);
        assertThat(dir.resolve("pki/minions_pre/salt1")).doesNotExist();
    }

    /**
     * master_sign_pubkey (SALT.md 4.1): after brine-key rotates the master key with the offline signing key, the
     * master's next aes generation answers with the new key and its pub_sig, which a minion with
     * verify_master_pubkey_sign takes in place of the key it cached; before (no pub_sig yet) and without the switch,
     * the minion refuses as stock Salt does.
     */
    @Test
    void afterASignedMasterKeyRotationAVerifyingMinionIsShownTheNewKeyWithItsPubSig() throws Exception {
        KeyPair signing = TestKeys.pair(251);
        MasterKeyring ring = aloneWithSigningKey(signing);
        RSAPublicKey before = (RSAPublicKey) store.masterKeyPair().getPublic();
        assertThatThrownBy(() -> verifyingSignIn("salt1", before, Optional.of(signing.getPublic())))
                .hasMessageContaining("did not send its public-key signature");

        Crypticle aesBefore = keys.aes();
        ((FileKeyStore) store)
                .rotateMasterKey(2048, Duration.ofDays(7), 5, Optional.of(signing.getPrivate()), Clock.systemUTC());
        assertThat(ring.reloadIfRotated()).isPresent();
        assertThat(keys.aes()).as("Salt minions sign in again to learn the key").isNotEqualTo(aesBefore);
        SaltSignIn.Accepted accepted =
                (SaltSignIn.Accepted) verifyingSignIn("salt1", before, Optional.of(signing.getPublic()));
        assertThat(accepted.master()).isEqualTo(ring.current().getPublic()).isNotEqualTo(before);
        assertThatThrownBy(() -> verifyingSignIn(
                        "salt1", before, Optional.of(TestKeys.pair(252).getPublic())))
                .hasMessageContaining("signature verification failed");
        assertThatThrownBy(() -> verifyingSignIn("salt1", before, Optional.empty()))
                .hasMessageContaining("not enabled on the minion");
    }

    /**
     * Issue 25, signing the key in force without a rotation: a master whose key was never rotated sends verifying
     * minions no pub_sig (refused); once brine-key installs the signing key's pub_sig of that key, the running
     * master reads it at its next look and the minion is accepted with the same key.
     */
    @Test
    void aMasterAloneSendsThePubSigOfItsNeverRotatedKeyOnceInstalled() throws Exception {
        Path pki = dir.resolve("pki");
        KeyPair signing = TestKeys.pair(251);
        MasterKeyring ring = aloneWithSigningKey(signing);
        Crypticle aes = keys.aes();
        RSAPublicKey master = (RSAPublicKey) store.masterKeyPair().getPublic();
        assertThatThrownBy(() -> verifyingSignIn("salt1", master, Optional.of(signing.getPublic())))
                .hasMessageContaining("did not send its public-key signature");

        OfflineMasterSigning.KeyRequest request = OfflineMasterSigning.prepareKeySignature(pki, Clock.systemUTC());
        assertThat(request.master()).isEqualTo(master);
        ((FileKeyStore) store)
                .installMasterKeySignature(
                        OfflineMasterSigning.sign(request, signing.getPrivate(), (RSAPublicKey) signing.getPublic()),
                        (RSAPublicKey) signing.getPublic());
        assertThat(ring.reloadIfRotated()).as("no rotation").isEmpty();
        SaltSignIn.Accepted accepted =
                (SaltSignIn.Accepted) verifyingSignIn("salt1", master, Optional.of(signing.getPublic()));
        assertThat(accepted.master()).isEqualTo(master);
        assertThat(keys.aes()).as("no minion has to sign in again").isEqualTo(aes);
    }

    /**
     * Issue 25, the cluster: Salt's pub_sig is kept in ZooKeeper and each master checks it against its own
     * master_sign.pub before it is sent: one by another signing key is never sent (logged); the key in force's,
     * installed without a rotation, is taken at the watch's next write; a rotation signed offline in two steps puts
     * the new key in force with its pub_sig, which a verifying minion follows.
     */
    @Test
    void aClusterMasterSendsThePubSigKeptInZooKeeperOnlyWhenItVerifiesWithItsOwnMasterSignPub() throws Exception {
        Path pki = dir.resolve("pki");
        KeyPair signing = TestKeys.pair(251);
        RSAPublicKey signingPub = (RSAPublicKey) signing.getPublic();
        Files.writeString(pki.resolve("master_sign.pub"), Pem.publicKeySpki(signingPub));
        KeyPair installed = store.masterKeyPair();
        RSAPublicKey before = (RSAPublicKey) installed.getPublic();
        OfflineMasterSigning.KeyRequest request = new OfflineMasterSigning.KeyRequest(before, 1);
        try (TestingServer server = new TestingServer();
                CuratorFramework client = ClusterConnection.open(ClusterConfig.of(server.getConnectString()));
                ZkKeyStore cluster = ZkKeyStore.open(
                        client,
                        ZkKeyStoreOptions.of(dir.resolve("cluster-pki"), null, AuditLog.none(), Clock.systemUTC()),
                        Duration.ofSeconds(30));
                LogCapture logs = LogCapture.of(MasterKeyring.class)) {
            KeyPair other = TestKeys.pair(252);
            cluster.installMasterKeySignature(
                    before,
                    OfflineMasterSigning.sign(request, other.getPrivate(), (RSAPublicKey) other.getPublic()),
                    (RSAPublicKey) other.getPublic(),
                    "brine-key:test");
            MasterKeyring keyring = MasterKeyring.cluster(
                    new ZkMasterKeys(client),
                    installed,
                    Clock.systemUTC(),
                    Optional.of(pki.resolve("master_sign.pub")));
            keys = new SaltKeys(keyring::current, keyring::saltSignature, () -> 4505, store);
            keyring.onRotated(keys::rotate);
            keyring.onSaltSignatureChanged(keys::pubSigChanged);
            salt = service(1 << 20);
            accepted("salt1");
            assertThat(keyring.saltSignature())
                    .as("another signing key's is never sent")
                    .isEmpty();
            assertThatThrownBy(() -> verifyingSignIn("salt1", before, Optional.of(signingPub)))
                    .hasMessageContaining("did not send its public-key signature");
            assertThat(logs.at(Level.WARN))
                    .filteredOn(line -> line.contains("is not the signature of the master key in force"))
                    .hasSize(1);

            cluster.installMasterKeySignature(
                    before, OfflineMasterSigning.sign(request, signing.getPrivate(), signingPub), signingPub, "t");
            await().until(() -> {
                keyring.reloadIfRotated();
                return keyring.saltSignature().isPresent();
            });
            assertThat(((SaltSignIn.Accepted) verifyingSignIn("salt1", before, Optional.of(signingPub))).master())
                    .isEqualTo(before);

            OfflineMasterSigning.Request rotation =
                    cluster.prepareMasterKeyRotation(installed, 2048, Duration.ofDays(7), "t", Clock.systemUTC());
            cluster.completeMasterKeyRotation(
                    installed,
                    OfflineMasterSigning.sign(rotation, signing.getPrivate(), signingPub),
                    signingPub,
                    5,
                    "t",
                    Clock.systemUTC());
            await().until(() -> keyring.reloadIfRotated().isPresent());
            SaltSignIn.Accepted accepted =
                    (SaltSignIn.Accepted) verifyingSignIn("salt1", before, Optional.of(signingPub));
            assertThat(accepted.master()).isEqualTo(rotation.next());
            assertThatThrownBy(() -> verifyingSignIn(
                            "salt1", before, Optional.of(TestKeys.pair(252).getPublic())))
                    .hasMessageContaining("signature verification failed");
        }
    }

    /** A master alone with master_sign_pubkey (the signing key's public half in pki), salt1 accepted. */
    private MasterKeyring aloneWithSigningKey(KeyPair signing) throws Exception {
        Path pki = dir.resolve("pki");
        Files.writeString(pki.resolve("master_sign.pub"), Pem.publicKeySpki(signing.getPublic()));
        MasterKeyring ring = MasterKeyring.open(
                pki, store.masterKeyPair(), Clock.systemUTC(), Optional.of(pki.resolve("master_sign.pub")));
        keys = new SaltKeys(ring::current, ring::saltSignature, () -> 4505, store);
        ring.onRotated(keys::rotate);
        ring.onSaltSignatureChanged(keys::pubSigChanged);
        salt = service(1 << 20);
        accepted("salt1");
        return ring;
    }

    private SaltSignIn.Outcome verifyingSignIn(String id, RSAPublicKey cached, Optional<PublicKey> masterSignPub)
            throws Exception {
        String nonce = nonce();
        SaltAuthRequest load =
                SaltAuthRequest.of(id, minion.getPublic(), nonce, ENC, SIG, Optional.empty(), Optional.empty());
        Recorded path = new Recorded();
        salt.handle(new SaltRequest.Auth(load, 3), path);
        return SaltSignIn.check(
                path.only(),
                nonce,
                Optional.empty(),
                minion.getPrivate(),
                ENC,
                SIG,
                Optional.of(cached),
                SaltLimits.UNAUTHENTICATED,
                masterSignPub);
    }

    @Test
    void theAesKeyRotatesAndSessionKeysGoWithTheirKey() throws Exception {
        accepted("salt1");
        Crypticle before = keys.aes();
        keys.rotate();
        assertThat(keys.aes()).isNotEqualTo(before);
        Crypticle beforeRemoval = keys.aes();
        keys.onKeyChange(new KeyChange("salt1", Optional.of(KeyState.ACCEPTED), Optional.empty(), "fp"));
        assertThat(keys.session("salt1")).isEmpty();
        assertThat(keys.aes()).as("a Salt minion's removal rotates aes at once").isNotEqualTo(beforeRemoval);
    }

    @Test
    void aSaltMinionsKeyIsFiledAsASaltMinionsAndItsKindGoesWithTheKey() throws Exception {
        SaltMarks marks = new SaltMarks(dir.resolve("pki"));
        assertThat(signIn("salt1", 3)).isInstanceOf(SaltSignIn.Waiting.class);
        assertThat(marks.ids()).containsExactly("salt1");
        assertThat(keys.isSalt("salt1")).isTrue();
        try (KeyStore restarted = FileKeyStore.open(KeyStoreOptions.builder(dir.resolve("pki"))
                .pollInterval(Duration.ZERO)
                .build())) {
            assertThat(new SaltKeys(store::masterKeyPair, Optional::empty, () -> 4505, restarted).isSalt("salt1"))
                    .as("a restarted master knows it")
                    .isTrue();
        }

        store.delete("salt1", "test-admin");
        assertThat(marks.ids()).isEmpty();
        assertThat(keys.isSalt("salt1")).isFalse();
    }

    @Test
    void aSaltSignInWithABrineMinionsKeyIsRefusedWithoutASessionOrAMarkAndAudited() throws Exception {
        // web1 is a brine minion, accepted; its public key is public.
        assertThat(store.offer("web1", (RSAPublicKey) minion.getPublic(), PolicyVerdict.ACCEPT))
                .isInstanceOf(KeyDecision.Accepted.class);

        assertThat(signIn("web1", 3)).isInstanceOf(SaltSignIn.Refused.class);

        assertThat(keys.session("web1")).isEmpty();
        assertThat(keys.isSalt("web1")).isFalse();
        assertThat(bound).isEmpty();
        assertThat(new SaltMarks(dir.resolve("pki")).ids()).isEmpty();
        assertThat(store.acceptedKey("web1")).isPresent();
        assertThat(Files.readString(dir.resolve("audit.log")))
                .contains("auth-otherkind")
                .contains("held by a brine minion");
    }

    @Test
    void refusedSaltSignInsForABrineMinionAreLoggedOncePerTenSecondsWithTheCount() throws Exception {
        store.offer("web1", (RSAPublicKey) minion.getPublic(), PolicyVerdict.ACCEPT);
        MovableClock clock = new MovableClock(Instant.now());
        salt = new SaltService(
                store,
                policies,
                keys,
                new AuditedAuth(audit),
                new GrainsStore(id -> Map.of(), Clock.systemUTC()),
                jobs,
                1 << 20,
                clock,
                new AuthWorkBudget(1_000_000, clock),
                new StoreWrites(clock),
                files);
        List<String> warnings;
        try (LogCapture logs = LogCapture.of(SaltService.class)) {
            for (int i = 0; i < 3; i++) {
                assertThat(signIn("web1", 3)).isInstanceOf(SaltSignIn.Refused.class);
            }
            clock.advance(Duration.ofMillis(9_999));
            assertThat(signIn("web1", 3)).isInstanceOf(SaltSignIn.Refused.class);
            clock.advance(Duration.ofMillis(1));
            assertThat(signIn("web1", 3)).isInstanceOf(SaltSignIn.Refused.class);
            warnings = logs.at(ch.qos.logback.classic.Level.WARN);
        }

        assertThat(warnings)
                .containsExactly(
                        "Salt minion web1 (10.0.0.7): auth refused: the id is held by a brine minion; an"
                                + " admin changes a minion's kind by deleting its key",
                        "Salt minion web1 (10.0.0.7): auth refused: the id is held by a brine minion; an admin"
                                + " changes a minion's kind by deleting its key (and 3 such refusals not logged since the"
                                + " last line)");
    }
}

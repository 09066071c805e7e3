package io.brine.master.auth;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.testing.LogCapture;
import io.brine.master.session.PublishKeyring;
import io.brine.master.session.SessionTable;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.Signed;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyPairFiles;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.Offer;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.RecordingKeyStore;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.store.policy.PolicyDecision;
import io.brine.store.policy.TokenHashes;
import io.brine.transport.Peer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.RSAPrivateKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How AuthService asks the policies: only for unknown and pending keys, and a spend is given back when not used. */
class AuthServicePolicyTest {

    static final String TOKEN = "0123456789abcdef-token";

    @TempDir
    Path dir;

    RecordingKeyStore store;
    AcceptancePolicies policies;
    AuthService auth;
    SeenAuthRequests seen;
    final List<String> audited = new ArrayList<>();
    final Peer peer = () -> "10.0.0.5";
    final AuthAudit audit = new AuthAudit() {
        @Override
        public void refused(String id, String remoteAddress, String fingerprint, String reason) {
            audited.add("refused " + id + ": " + reason);
        }

        @Override
        public void decided(
                String id, String remoteAddress, String fingerprint, KeyDecision decision, PolicyDecision policy) {
            audited.add(decision.getClass().getSimpleName() + " " + id + " [" + policy.rule() + "]");
        }
    };

    @BeforeEach
    void setUp() throws Exception {
        Path pki = Files.createDirectories(dir.resolve("pki"));
        Files.setPosixFilePermissions(pki, PosixFilePermissions.fromString("rwx------"));
        KeyPairFiles.writeNew(pki, "master", TestKeys.pair(250));
        store = new RecordingKeyStore(FileKeyStore.open(KeyStoreOptions.builder(pki)
                .maxMinions(1)
                .pollInterval(Duration.ZERO)
                .build()));
        MasterConfig config = MasterConfig.builder(dir)
                .acceptance(MasterConfig.Acceptance.builder()
                        .autosignTokens(List.of(TokenHashes.entry("web*", TOKEN, true)))
                        .build())
                .build();
        policies = AcceptancePolicies.fromConfig(config, store, Clock.systemUTC(), AuditLog.none());
        seen = SeenAuthRequests.open(dir.resolve("cache").resolve(SeenAuthRequests.FILE), Clock.systemUTC());
        auth = authService(store, new SessionTable());
    }

    @AfterEach
    void tearDown() {
        seen.close();
        policies.close();
        store.close();
    }

    private AuthStatus authenticate(String id, int keyIndex, String token) {
        return handle(id, keyIndex, token).status();
    }

    private AuthService authService(KeyStore keys, SessionTable sessions) {
        return authService(keys, sessions, new AuthWorkBudget(1_000_000, Clock.systemUTC()));
    }

    private AuthService authService(KeyStore keys, SessionTable sessions, AuthWorkBudget budget) {
        return new AuthService(
                keys,
                policies,
                sessions,
                new PublishKeyring(Clock.systemUTC()),
                audit,
                Clock.systemUTC(),
                peer -> 4505,
                0,
                seen,
                budget,
                new StoreWrites(Clock.systemUTC()),
                MasterKeyring.fixed(keys.masterKeyPair(), Clock.systemUTC()));
    }

    private AuthService.Outcome handle(String id, int keyIndex, String token) {
        return handle(auth, id, keyIndex, token);
    }

    private AuthService.Outcome handle(AuthService service, String id, int keyIndex, String token) {
        return handleAt(service, id, keyIndex, token, System.currentTimeMillis())
                .orElseThrow();
    }

    private Optional<AuthService.Outcome> handleAt(
            AuthService service, String id, int keyIndex, String token, long timestampMs) {
        KeyPair pair = TestKeys.pair(keyIndex);
        byte[] nonce = new byte[32];
        new SecureRandom().nextBytes(nonce);
        AuthRequest request = new AuthRequest(
                Suite.RSA_OAEP_PSS_AES256GCM,
                id,
                pair.getPublic().getEncoded(),
                nonce,
                timestampMs,
                Map.of(),
                null,
                token);
        Decoded.Ok frame =
                (Decoded.Ok) Codec.decode(Codec.encodeSigned(request, pair.getPrivate()), FrameLimits.MAX_FRAME);
        return service.handle(peer, new Signed<>((AuthRequest) frame.message(), frame));
    }

    private AuthService.Outcome handleRaw(String id, byte[] publicKey, PrivateKey signer, byte[] nonce) {
        return answerRaw(auth, id, publicKey, signer, nonce).orElseThrow();
    }

    private static Optional<AuthService.Outcome> answerRaw(
            AuthService service, String id, byte[] publicKey, PrivateKey signer, byte[] nonce) {
        AuthRequest request = new AuthRequest(
                Suite.RSA_OAEP_PSS_AES256GCM, id, publicKey, nonce, System.currentTimeMillis(), Map.of(), null, null);
        Decoded.Ok frame = (Decoded.Ok) Codec.decode(Codec.encodeSigned(request, signer), FrameLimits.MAX_FRAME);
        return service.handle(() -> "10.0.0.5", new Signed<>((AuthRequest) frame.message(), frame));
    }

    private static AuthReply replyOf(AuthService.Outcome outcome) {
        Decoded decoded = Codec.decode(outcome.reply(), 1 << 20);
        Decoded.Ok ok = (Decoded.Ok) decoded;
        assertThat(ok.verify(TestKeys.pair(250).getPublic()))
                .as("signed by the master")
                .isTrue();
        return (AuthReply) ok.message();
    }

    @Test
    void aBadKeyGetsASignedRefusalBoundToTheNonceABadSignatureNoAnswerAndNeitherStoresAnything() throws Exception {
        byte[] nonce = new byte[32];
        new SecureRandom().nextBytes(nonce);
        byte[] good = TestKeys.pair(3).getPublic().getEncoded();
        byte[] trailing = Arrays.copyOf(good, good.length + 64);

        AuthService.Outcome badKey =
                handleRaw("web1", trailing, TestKeys.pair(3).getPrivate(), nonce);
        assertThat(badKey.status()).isEqualTo(AuthStatus.REFUSED);
        assertThat(replyOf(badKey).nonce()).isEqualTo(nonce);
        assertThat(replyOf(badKey).reason()).contains("bad public key", "64 bytes follow the key");

        // Only the holder of the key offered could use an answer, and it never sends this: no private-key operation.
        AuthWorkBudget budget = new AuthWorkBudget(1_000_000, Clock.systemUTC());
        AuthService counted = authService(store, new SessionTable(), budget);
        assertThat(answerRaw(counted, "web2", good, TestKeys.pair(4).getPrivate(), nonce))
                .isEmpty();
        assertThat(budget.badSignatures()).isEqualTo(1);
        assertThat(budget.spent()).isZero();

        assertThat(audited)
                .containsExactly(
                        "refused web1: bad public key: not exactly one SubjectPublicKeyInfo: 64"
                                + " bytes follow the key",
                        "refused web2: bad signature: the request is not signed by the key it" + " offers");
        assertThat(store.list().ids(KeyState.PENDING)).isEmpty();
    }

    @Test
    void answersButAnAcceptedKeysArePaidFromTheBudgetAndOnePastItIsNotAnswered() throws Exception {
        MovableClock clock = new MovableClock(Instant.now());
        AuthWorkBudget budget = new AuthWorkBudget(2, clock);
        AuthService budgeted = authService(store, new SessionTable(), budget);
        byte[] bad = Arrays.copyOf(TestKeys.pair(3).getPublic().getEncoded(), 300);

        assertThat(answerRaw(budgeted, "web1", bad, TestKeys.pair(3).getPrivate(), nonce()))
                .isPresent();
        assertThat(answerRaw(budgeted, "web2", bad, TestKeys.pair(3).getPrivate(), nonce()))
                .isPresent();
        assertThat(answerRaw(budgeted, "web3", bad, TestKeys.pair(3).getPrivate(), nonce()))
                .as("one past it")
                .isEmpty();
        assertThat(budget.spent()).isEqualTo(2);
        assertThat(budget.unanswered()).isEqualTo(1);

        clock.advance(Duration.ofMillis(500)); // refilled at 2 a second: one more
        assertThat(answerRaw(budgeted, "web4", bad, TestKeys.pair(3).getPrivate(), nonce()))
                .isPresent();
        assertThat(answerRaw(budgeted, "web5", bad, TestKeys.pair(3).getPrivate(), nonce()))
                .isEmpty();

        // An accepted key's answer is never counted: web6 is accepted with the budget spent.
        store.offer("web6", (RSAPublicKey) TestKeys.pair(6).getPublic(), PolicyVerdict.ACCEPT);
        AuthService.Outcome accepted = answerRaw(
                        budgeted,
                        "web6",
                        TestKeys.pair(6).getPublic().getEncoded(),
                        TestKeys.pair(6).getPrivate(),
                        nonce())
                .orElseThrow();
        assertThat(accepted.status()).isEqualTo(AuthStatus.ACCEPTED);
        assertThat(budget.spent()).isEqualTo(3);
        assertThat(budget.unanswered()).isEqualTo(2);
    }

    private static byte[] nonce() {
        byte[] nonce = new byte[32];
        new SecureRandom().nextBytes(nonce);
        return nonce;
    }

    @Test
    void aSelfSignedKeyWithASmallPrimeFactorIsRefusedByTheStoresCheckAndStoresNothing() throws Exception {
        // n' = 7919 p q with a private exponent that works for n': the self-signature verifies, so only the
        // factor check (the key store's, once per offer of a key it does not hold) stands in the way.
        RSAPrivateCrtKey crt = (RSAPrivateCrtKey) TestKeys.pair(3).getPrivate();
        BigInteger r = BigInteger.valueOf(7919);
        BigInteger n = crt.getModulus().multiply(r);
        BigInteger phi = crt.getPrimeP()
                .subtract(BigInteger.ONE)
                .multiply(crt.getPrimeQ().subtract(BigInteger.ONE))
                .multiply(r.subtract(BigInteger.ONE));
        BigInteger d = crt.getPublicExponent().modInverse(phi);
        KeyFactory rsa = KeyFactory.getInstance("RSA");
        byte[] spki = rsa.generatePublic(new RSAPublicKeySpec(n, crt.getPublicExponent()))
                .getEncoded();
        byte[] nonce = new byte[32];
        new SecureRandom().nextBytes(nonce);

        AuthService.Outcome outcome = handleRaw("web1", spki, rsa.generatePrivate(new RSAPrivateKeySpec(n, d)), nonce);

        assertThat(outcome.status()).isEqualTo(AuthStatus.REFUSED);
        assertThat(replyOf(outcome).nonce()).isEqualTo(nonce);
        assertThat(replyOf(outcome).reason()).contains("bad public key", "small prime factor (7919)");
        assertThat(audited).singleElement().asString().startsWith("refused web1: bad public key: ");
        assertThat(store.list().ids(KeyState.PENDING)).isEmpty();
    }

    @Test
    void aStoreThatCannotWriteGetsASignedTryLaterNotABug() {
        store.failOffersWith(new UncheckedIOException(
                "key store " + dir + "/pki: cannot record the key of" + " web1: No space left on device",
                new IOException("No space left on device")));

        AuthService.Outcome outcome = handle("web1", 2, TOKEN);

        assertThat(outcome.status()).isEqualTo(AuthStatus.REFUSED);
        assertThat(replyOf(outcome).reason()).contains("try later");
        assertThat(replyOf(outcome).retryAfterSeconds()).isPositive();
        assertThat(auth.storeFailures()).isEqualTo(1);
    }

    @Test
    void aRecordOfTakenRequestsThatCannotBeWrittenGetsASignedTryLaterAndOpensNoSession() {
        SessionTable sessions = new SessionTable();
        AuthService service = authService(store, sessions);
        seen.close();

        AuthService.Outcome outcome = handle(service, "web1", 2, TOKEN);

        assertThat(outcome.status()).isEqualTo(AuthStatus.REFUSED);
        assertThat(replyOf(outcome).reason()).contains("try later");
        assertThat(sessions.byMinion("web1")).isEmpty();
        assertThat(service.storeFailures()).isEqualTo(1);
    }

    @Test
    void onlyRequestsFromTheKeyTheStoreHoldsMoveAnIdsTimeAndAnOlderOneOfThatKeyIsDropped() {
        long now = System.currentTimeMillis();
        assertThat(handleAt(auth, "web1", 2, TOKEN, now).orElseThrow().status()).isEqualTo(AuthStatus.ACCEPTED);
        // A stranger signs for web1 with a key of its own, dated as far ahead as the skew lets it: denied, and
        // web1's own next request, dated before it, is still taken.
        long ahead = now + Duration.ofMinutes(4).toMillis();
        assertThat(handleAt(auth, "web1", 5, null, ahead).orElseThrow().status())
                .isEqualTo(AuthStatus.DENIED);
        assertThat(handleAt(auth, "web1", 2, null, now + 1).orElseThrow().status())
                .isEqualTo(AuthStatus.ACCEPTED);
        // web1's key, dated no later than what was taken from it, to a master without its session (as after a
        // restart): dropped with no answer, and audited.
        AuthService restarted = authService(store, new SessionTable());
        audited.clear();
        assertThat(handleAt(restarted, "web1", 2, null, now + 1)).isEmpty();
        assertThat(audited)
                .containsExactly("refused web1: auth request not newer than one already taken from its " + "key");
    }

    @Test
    void aSessionHoldsTheKeyStoresInstanceOfTheMinionsKeyNotASecondCopy() {
        AuthService.Outcome first = handle("web1", 2, TOKEN);
        assertThat(first.status()).isEqualTo(AuthStatus.ACCEPTED);
        assertThat(first.session().orElseThrow().publicKey())
                .isSameAs(store.acceptedKey("web1").orElseThrow());

        AuthService.Outcome again = handle("web1", 2, null);
        assertThat(again.status()).isEqualTo(AuthStatus.ACCEPTED);
        assertThat(again.session().orElseThrow().publicKey())
                .isSameAs(store.acceptedKey("web1").orElseThrow())
                .isEqualTo(TestKeys.pair(2).getPublic());
    }

    @Test
    void aSingleUseTokenSpentOnARequestTheStoreRefusedIsGivenBack() {
        assertThat(authenticate("db1", 1, null)).isEqualTo(AuthStatus.PENDING);
        assertThat(store.accept("db1", null, "test").status().name()).isEqualTo("DONE");

        assertThat(authenticate("web1", 2, TOKEN)).isEqualTo(AuthStatus.FULL); // max_minions: 1
        store.delete("db1", "test");
        assertThat(authenticate("web1", 2, TOKEN)).isEqualTo(AuthStatus.ACCEPTED);
        assertThat(audited).last().isEqualTo("Accepted web1 [autosign_tokens[0] (match web*)]");

        store.delete("web1", "test");
        assertThat(authenticate("web1", 2, TOKEN)).isEqualTo(AuthStatus.PENDING);
    }

    @Test
    void policiesAreNotAskedForARejectedIdNorToReplaceAnAcceptedKey() {
        store.offer("web1", (RSAPublicKey) TestKeys.pair(1).getPublic(), PolicyVerdict.REJECT);
        assertThat(authenticate("web1", 2, TOKEN)).isEqualTo(AuthStatus.REJECTED);
        store.offer("web2", (RSAPublicKey) TestKeys.pair(3).getPublic(), PolicyVerdict.ACCEPT);
        assertThat(authenticate("web2", 4, TOKEN)).isEqualTo(AuthStatus.DENIED);
        assertThat(audited).allSatisfy(line -> assertThat(line).endsWith("[state]"));
        // The single-use token is still unspent.
        store.delete("web2", "test");
        assertThat(authenticate("web3", 5, TOKEN)).isEqualTo(AuthStatus.ACCEPTED);
    }

    @Test
    void quietRefusalsAreOneWarnEachNamingIdSourceAndReasonAndTheLogSaysTheAnswerGivenNotThePolicysVerdict() {
        try (LogCapture log = LogCapture.ofPackage("io.brine")) {
            store.offer("web1", (RSAPublicKey) TestKeys.pair(1).getPublic(), PolicyVerdict.ACCEPT);
            assertThat(authenticate("web1", 2, null)).isEqualTo(AuthStatus.DENIED);
            store.offer("db1", (RSAPublicKey) TestKeys.pair(3).getPublic(), PolicyVerdict.REJECT);
            assertThat(authenticate("db1", 4, null)).isEqualTo(AuthStatus.REJECTED);
            // The token accepts web9, but its key is web1's: pending, whatever the token says.
            assertThat(authenticate("web9", 1, TOKEN)).isEqualTo(AuthStatus.PENDING);

            List<String> warnings = log.at(Level.WARN);
            assertThat(warnings)
                    .anySatisfy(line -> assertThat(line)
                            .contains(
                                    "Minion web1 (10.0.0.5): denied", fingerprint(2), "stored key " + fingerprint(1)));
            assertThat(warnings)
                    .anySatisfy(line -> assertThat(line)
                            .contains("Minion db1 (10.0.0.5): rejected id " + "asked again with another key "
                                    + fingerprint(4) + " (the rejected key is " + fingerprint(3)));
            assertThat(warnings)
                    .anySatisfy(line -> assertThat(line)
                            .contains(
                                    "Minion web9 (10.0.0.5): answered " + "pending",
                                    "same key as web1",
                                    "autosign_tokens[0] (match web*) accepts"));
            assertThat(log.at(Level.INFO))
                    .noneSatisfy(line -> assertThat(line).contains("web9").contains("accepted"));
        }
    }

    private static String fingerprint(int key) {
        return Fingerprints.of(TestKeys.pair(key).getPublic());
    }

    @Test
    void anAuthReadsTheKeyStoreOnceWhetherPoliciesAcceptOrTheKeyIsAcceptedAlready() {
        assertThat(authenticate("web1", 2, TOKEN)).isEqualTo(AuthStatus.ACCEPTED);
        assertThat(store.calls()).containsExactly("offer");
        store.forget();

        assertThat(authenticate("web1", 2, null)).isEqualTo(AuthStatus.ACCEPTED);
        assertThat(store.calls()).containsExactly("offer");
    }

    @Test
    void aKeyRemovedBetweenTheDecisionAndTheReplyIsRefusedAndKeepsNoSession() {
        store.offer("web1", (RSAPublicKey) TestKeys.pair(2).getPublic(), PolicyVerdict.ACCEPT);
        KeyStore removedWhileAnswering = new RecordingKeyStore(store.delegate()) {
            @Override
            public Offer offer(String id, RSAPublicKey offered, MinionKind kind, Policies asked) {
                Offer offer = super.offer(id, offered, kind, asked);
                delegate().delete(id, "admin");
                return offer;
            }
        };
        SessionTable sessions = new SessionTable();

        AuthService.Outcome outcome = handle(authService(removedWhileAnswering, sessions), "web1", 2, null);

        assertThat(outcome.status()).isEqualTo(AuthStatus.REFUSED);
        assertThat(outcome.session()).isEmpty();
        assertThat(sessions.size()).isZero();
        assertThat(audited).containsExactly("refused web1: key removed while answering");
    }
}

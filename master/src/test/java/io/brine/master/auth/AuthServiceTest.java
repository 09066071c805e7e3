package io.brine.master.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.master.AuditLines;
import io.brine.master.HookedClock;
import io.brine.master.TestKeyStores;
import io.brine.master.events.EventStream;
import io.brine.master.metrics.MasterMetrics;
import io.brine.master.metrics.MeteredAuthAudit;
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
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.transport.Peer;
import java.io.IOException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the audit log says of a full auth is what came of it (PROTOCOL.md 8.1 steps 8 and 9): the service wired over a
 * real key store, session table, request record, audit log and metrics, with a race run while the request is being
 * recorded (after the key store's decision, before the session opens), as ResumeServiceTest does for resumptions.
 */
class AuthServiceTest {

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(Instant.now());
    final Peer peer = () -> "10.0.0.5";
    final KeyPair m1 = TestKeys.pair(1);
    final RSAPublicKey m1Key = (RSAPublicKey) m1.getPublic();
    final MasterMetrics metrics = new MasterMetrics();
    final EventStream events = new EventStream(clock);
    /** The request record's clock: its hook runs while a request's timestamp is recorded. */
    final HookedClock recordClock = new HookedClock(clock);

    FileKeyStore store;
    SeenAuthRequests seen;
    AuditLog audit;
    SessionTable sessions;
    AuthService service;

    @BeforeEach
    void setUp() throws Exception {
        store = TestKeyStores.open(dir);
        store.offer("m1", m1Key, PolicyVerdict.ACCEPT);
        seen = SeenAuthRequests.open(dir.resolve("cache").resolve(SeenAuthRequests.FILE), recordClock);
        audit = AuditLog.openFile(dir.resolve("audit.log"), clock);
        sessions = new SessionTable();
        service = new AuthService(
                store,
                AcceptancePolicies.manual(),
                sessions,
                new PublishKeyring(clock),
                new MeteredAuthAudit(new AuditedAuth(audit), metrics, events),
                clock,
                p -> 4505,
                0,
                seen,
                new AuthWorkBudget(1_000, clock),
                new StoreWrites(clock),
                MasterKeyring.fixed(store.masterKeyPair(), clock));
    }

    @AfterEach
    void tearDown() throws Exception {
        seen.close();
        audit.close();
        store.close();
    }

    @Test
    void anAcceptedAuthHasOneAcceptedLineAndItsSession() throws Exception {
        AuthService.Outcome outcome = service.handle(peer, request()).orElseThrow();

        assertThat(outcome.status()).isEqualTo(AuthStatus.ACCEPTED);
        assertThat(reply(outcome).session()).isNotNull();
        assertThat(outcome.session()).isEqualTo(sessions.byMinion("m1"));
        assertThat(AuditLines.of(dir.resolve("audit.log")))
                .singleElement()
                .asString()
                .startsWith("auth-accepted: ");
        assertThat(answers("accepted")).isEqualTo(1);
    }

    @Test
    void anAuthThatLosesItsSessionToANewerRequestIsAuditedAndCountedAsRefusedAndNotAnswered() throws Exception {
        Signed<AuthRequest> request = request();
        // The minion's next request (it asked again), accepted by another worker, opens the session while this one
        // is recorded.
        recordClock.onNextRead(() -> sessions.open(
                "m1", m1Key, peer, clock.millis(), request.message().timestampMs() + 1));

        assertThat(service.handle(peer, request)).isEmpty();
        assertThat(sessions.byMinion("m1").orElseThrow().authTimestampMs())
                .as("the newer request's session")
                .isEqualTo(request.message().timestampMs() + 1);
        assertThat(AuditLines.of(dir.resolve("audit.log")))
                .containsExactly("auth-refused: another request from its key, as new or newer, opened its session"
                        + " meanwhile");
        assertThat(answers("refused")).isEqualTo(1);
        assertThat(answers("accepted")).isZero();
    }

    @Test
    void anAuthWhoseKeyIsDeletedWhileItIsAnsweredIsAuditedOnlyAsRefused() throws Exception {
        recordClock.onNextRead(() -> store.delete("m1", "test-admin"));

        assertRefusedAsRemovedWhileAnswering(service.handle(peer, request()).orElseThrow());
    }

    @Test
    void anAuthWhoseKeyIsRejectedWhileItIsAnsweredIsAuditedOnlyAsRefused() throws Exception {
        recordClock.onNextRead(() -> store.reject("m1", Fingerprints.of(m1Key), "test-admin"));

        assertRefusedAsRemovedWhileAnswering(service.handle(peer, request()).orElseThrow());
    }

    private void assertRefusedAsRemovedWhileAnswering(AuthService.Outcome outcome) throws IOException {
        assertThat(outcome.status()).isEqualTo(AuthStatus.REFUSED);
        assertThat(outcome.session()).isEmpty();
        assertThat(reply(outcome).session()).isNull();
        assertThat(sessions.byMinion("m1")).isEmpty();
        assertThat(AuditLines.of(dir.resolve("audit.log")))
                .containsExactly("auth-refused: key removed while answering");
        assertThat(answers("refused")).isEqualTo(1);
        assertThat(answers("accepted")).isZero();
    }

    /** m1's auth request, signed, a millisecond later than the last. */
    private Signed<AuthRequest> request() {
        clock.advance(Duration.ofMillis(1));
        byte[] nonce = new byte[32];
        new SecureRandom().nextBytes(nonce);
        AuthRequest request = new AuthRequest(
                Suite.RSA_OAEP_PSS_AES256GCM, "m1", m1Key.getEncoded(), nonce, clock.millis(), Map.of(), null, null);
        Decoded.Ok frame =
                (Decoded.Ok) Codec.decode(Codec.encodeSigned(request, m1.getPrivate()), FrameLimits.MAX_FRAME);
        return new Signed<>((AuthRequest) frame.message(), frame);
    }

    /** The reply, verified against the master's key. */
    private static AuthReply reply(AuthService.Outcome outcome) {
        Decoded.Ok ok = (Decoded.Ok) Codec.decode(outcome.reply(), FrameLimits.MAX_FRAME);
        assertThat(ok.verify(TestKeys.pair(250).getPublic()))
                .as("signed by the master")
                .isTrue();
        return (AuthReply) ok.message();
    }

    /** brine_auth_answers_total for {@code outcome}, over every rule. */
    private double answers(String outcome) {
        Matcher sample = Pattern.compile("(?m)^brine_auth_answers_total\\{([^}]*)\\} (\\S+)$")
                .matcher(metrics.scrape());
        double sum = 0;
        while (sample.find()) {
            if (sample.group(1).contains("outcome=\"" + outcome + "\"")) {
                sum += Double.parseDouble(sample.group(2));
            }
        }
        return sum;
    }
}

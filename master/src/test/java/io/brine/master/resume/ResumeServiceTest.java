package io.brine.master.resume;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.master.AuditLines;
import io.brine.master.HookedClock;
import io.brine.master.TestKeyStores;
import io.brine.master.auth.SeenAuthRequests;
import io.brine.master.auth.StoreWrites;
import io.brine.master.session.MinionSession;
import io.brine.master.session.PublishKeyring;
import io.brine.master.session.SessionTable;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.RotationDecision;
import io.brine.transport.Peer;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the audit log says of a resumption is what came of it (PROTOCOL.md 8.9 step 4): the service wired over a real
 * key store, session table, request record and audit log, with a race run while the request is being recorded.
 */
class ResumeServiceTest {

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(Instant.now());
    final Peer peer = () -> "10.0.0.5";
    final RSAPublicKey m1Key = (RSAPublicKey) TestKeys.pair(1).getPublic();
    /** The request record's clock: its hook runs while a request's timestamp is recorded. */
    final HookedClock recordClock = new HookedClock(clock);

    FileKeyStore store;
    SeenAuthRequests seen;
    AuditLog audit;
    SessionTable sessions;
    ResumeService service;

    @BeforeEach
    void setUp() throws Exception {
        store = TestKeyStores.open(dir);
        store.offer("m1", m1Key, PolicyVerdict.ACCEPT);
        seen = SeenAuthRequests.open(dir.resolve("cache").resolve(SeenAuthRequests.FILE), recordClock);
        audit = AuditLog.openFile(dir.resolve("audit.log"), clock);
        sessions = new SessionTable();
        service = new ResumeService(
                TicketKeys.inMemory(clock),
                store,
                sessions,
                new PublishKeyring(clock),
                seen,
                audit,
                new StoreWrites(clock),
                clock,
                p -> 4505,
                Resumptions.MAX_LIFETIME_MS);
    }

    @AfterEach
    void tearDown() throws Exception {
        seen.close();
        audit.close();
        store.close();
    }

    @Test
    void aResumptionThatLosesItsSessionToAnotherRequestIsAuditedAsRefusedNotResumed() throws Exception {
        Resumption.Request request = request(ticket());
        // Another resumption of the same request, or a newer one, opens the session while this one is recorded.
        recordClock.onNextRead(() -> sessions.open("m1", m1Key, peer, clock.millis(), request.timestampMs()));

        assertThat(service.handle(peer, request)).isEmpty();
        assertThat(AuditLines.of(dir.resolve("audit.log")))
                .containsExactly("auth-refused: resumption refused: another request from its key, as new or newer,"
                        + " opened its session meanwhile");
    }

    @Test
    void aResumptionWhoseKeyIsDeletedWhileItIsAnsweredIsAuditedOnlyAsRefused() throws Exception {
        Resumption.Request request = request(ticket());
        recordClock.onNextRead(() -> store.delete("m1", "test-admin"));

        ResumeService.Outcome outcome = service.handle(peer, request).orElseThrow();

        assertThat(outcome.session()).isEmpty();
        assertThat(Resumptions.decode(outcome.reply()))
                .isInstanceOfSatisfying(
                        Resumption.Reply.class,
                        reply -> assertThat(reply.refused()).isTrue());
        assertThat(sessions.byMinion("m1")).isEmpty();
        assertThat(AuditLines.of(dir.resolve("audit.log")))
                .containsExactly("auth-refused: resumption refused: the key was removed while answering");
    }

    @Test
    void aTicketAskedForInAResumedSessionKeepsTheFullAuthsExpiryUntilARotationInItProvesTheNewKey() throws Exception {
        Resumption.Grant first = ticket();
        clock.advance(Duration.ofHours(1));
        MinionSession resumed =
                service.handle(peer, request(first)).orElseThrow().session().orElseThrow();

        // Resuming never extends the 24 h since the full auth, nor does a ticket asked for in the resumed session.
        assertThat(ticketIn(resumed).expiresMs()).isEqualTo(first.expiresMs());

        // A rotation in the session proves the new key's private key, as a full auth does: a ticket of its own.
        RSAPublicKey newKey = (RSAPublicKey) TestKeys.pair(2).getPublic();
        resumed.rotating(newKey);
        assertThat(store.rotate("m1", m1Key, newKey, KeyRotationPolicy.ALLOW, "minion m1"))
                .isInstanceOf(RotationDecision.Rotated.class);
        resumed.rotationDecided(true);
        Resumption.Grant renewed = ticketIn(resumed);
        assertThat(renewed.expiresMs()).isEqualTo(clock.millis() + Resumptions.MAX_LIFETIME_MS);
        clock.advance(Duration.ofMillis(1));
        assertThat(service.handle(peer, request(renewed)).orElseThrow().session())
                .as("resumed with the new key's ticket")
                .isPresent();
    }

    /** m1's ticket, given in {@code session}. */
    private Resumption.Grant ticketIn(MinionSession session) throws Exception {
        byte[] frame = service.ticketFor(Resumptions.ticketRequest(
                        session.requestKey(), session.sessionId().bytes(), clock.millis()))
                .orElseThrow();
        return Resumptions.openTicket(session.requestKey(), (Resumption.Ticket) Resumptions.decode(frame));
    }

    /** m1's ticket, given in a session opened as a full auth opens it. */
    private Resumption.Grant ticket() throws Exception {
        return ticketIn(
                sessions.open("m1", m1Key, peer, clock.millis(), clock.millis()).orElseThrow());
    }

    private Resumption.Request request(Resumption.Grant grant) {
        clock.advance(Duration.ofMillis(1));
        byte[] nonce = new byte[32];
        new SecureRandom().nextBytes(nonce);
        return Resumptions.request("m1", grant, nonce, clock.millis());
    }
}

package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.client.channel.ClientChannel;
import io.brine.client.channel.TcpClientChannel;
import io.brine.client.channel.ZmqClientChannel;
import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.master.resume.TicketKeys;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.KeyRotations;
import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.RotationDecision;
import io.micrometer.core.instrument.Counter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Session resumption against a real master on both transports (PROTOCOL.md 8.9): a ticket from a full auth resumes
 * the session with no RSA operation, across a restart; a hostile peer's every variation is refused, and the minion's
 * only way on is then a full auth.
 */
class ResumptionHostilePeersTest {

    static final Duration ANSWER = Duration.ofSeconds(10);
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(Instant.now());
    WiredMaster master;
    final List<ClientChannel> channels = new ArrayList<>();

    @AfterEach
    void stop() {
        channels.forEach(ClientChannel::close);
        if (master != null) {
            master.close();
        }
    }

    /** A minion's end of the protocol: its session, and the ticket it holds. */
    record Minion(String id, int key, byte[] sessionId, SessionKey requestKey, Resumption.Grant grant) {}

    @ParameterizedTest
    @EnumSource(names = {"TCP", "ZEROMQ"})
    void aTicketResumesTheSessionWithoutAnRsaOperationAndAgainAfterARestartThatRefusesItsFirstRequestReplayed(
            TransportKind kind) throws Exception {
        start(kind);
        Minion m1 = fullAuth(kind, "m1", 1);
        double signedAnswers = signedAuthAnswers();

        byte[] nonce = WiredMaster.nonce();
        clock.advance(Duration.ofMillis(1));
        byte[] request = Resumptions.encode(Resumptions.request("m1", m1.grant(), nonce, clock.millis()));
        Resumption.Resumed resumed = Resumptions.openReply(m1.grant().secret(), nonce, ask(kind, request, nonce));
        assertThat(resumed.sessionId()).isNotEqualTo(m1.sessionId());
        assertThat(resumed.generation())
                .isEqualTo(master.master().keyring().current().number());
        assertThat(resumed.publishKey())
                .isEqualTo(master.master().keyring().current().key().bytes());
        assertThat(master.master()
                        .sessions()
                        .byMinion("m1")
                        .orElseThrow()
                        .sessionId()
                        .bytes())
                .isEqualTo(resumed.sessionId());
        // No auth answer was signed, and the new session carries frames.
        assertThat(signedAuthAnswers()).isEqualTo(signedAnswers);
        assertHeartbeatAnswered(kind, resumed);

        // The master restarts: its ticket keys and the record of requests taken are on disk.
        restart(kind);
        clock.advance(Duration.ofSeconds(1));
        // The request that resumed before the restart, replayed: no session holds it back now, the record does.
        assertThat(ask(kind, request, nonce).refused()).isTrue();
        assertThat(refusalReasons()).containsExactly("a replay: not newer than a request already taken from its key");
        Resumption.Resumed again = resume(kind, m1, resumed.next()).orElseThrow();
        assertThat(master.master().sessions().byMinion("m1")).isPresent();
        assertThat(signedAuthAnswers()).isZero();
        assertHeartbeatAnswered(kind, again);
        assertThat(PosixFilePermissions.toString(
                        Files.getPosixFilePermissions(dir.resolve("pki").resolve(TicketKeys.FILE))))
                .isEqualTo("rw-------");
    }

    @ParameterizedTest
    @EnumSource(names = {"TCP", "ZEROMQ"})
    void aReplayABadProofAnotherMinionsTicketADamagedOneAndAFutureDatedRequestAreRefused(TransportKind kind)
            throws Exception {
        start(kind);
        Minion m1 = fullAuth(kind, "m1", 1);
        fullAuth(kind, "m2", 3);

        byte[] nonce = WiredMaster.nonce();
        clock.advance(Duration.ofMillis(1));
        byte[] request = Resumptions.encode(Resumptions.request("m1", m1.grant(), nonce, clock.millis()));
        assertThat(ask(kind, request, nonce)).isNotNull().matches(reply -> !reply.refused());
        byte[] resumedSession = master.master()
                .sessions()
                .byMinion("m1")
                .orElseThrow()
                .sessionId()
                .bytes();
        // The same request again, on another connection: refused, and the session it opened stays.
        assertThat(ask(kind, request, nonce).refused()).isTrue();
        assertThat(master.master()
                        .sessions()
                        .byMinion("m1")
                        .orElseThrow()
                        .sessionId()
                        .bytes())
                .isEqualTo(resumedSession);

        byte[] otherSecret = new byte[Resumptions.SECRET_LENGTH];
        Resumption.Grant wrongSecret =
                new Resumption.Grant(m1.grant().ticket(), m1.grant().expiresMs(), otherSecret);
        assertThat(resume(kind, m1, wrongSecret)).isEmpty();
        // m1's ticket, proven with its secret, for m2's session: the ticket names m1.
        Minion asM2 = new Minion("m2", m1.key(), null, null, m1.grant());
        assertThat(resume(kind, asM2, m1.grant())).isEmpty();
        // A ticket whose key id the master does not hold.
        byte[] unknownKey = m1.grant().ticket().clone();
        unknownKey[0] ^= 1;
        assertThat(resume(
                        kind,
                        m1,
                        new Resumption.Grant(
                                unknownKey, m1.grant().expiresMs(), m1.grant().secret())))
                .isEmpty();
        // A ticket under a key the master holds, damaged (or forged without the key): it does not open.
        byte[] damaged = m1.grant().ticket().clone();
        damaged[damaged.length - 1] ^= 1;
        assertThat(resume(
                        kind,
                        m1,
                        new Resumption.Grant(
                                damaged, m1.grant().expiresMs(), m1.grant().secret())))
                .isEmpty();
        // A request dated more than the clock skew ahead, with a valid ticket and proof.
        byte[] aheadNonce = WiredMaster.nonce();
        byte[] ahead = Resumptions.encode(Resumptions.request(
                "m1",
                m1.grant(),
                aheadNonce,
                clock.millis() + Duration.ofMinutes(6).toMillis()));
        assertThat(ask(kind, ahead, aheadNonce).refused()).isTrue();
        assertThat(master.master()
                        .sessions()
                        .byMinion("m1")
                        .orElseThrow()
                        .sessionId()
                        .bytes())
                .isEqualTo(resumedSession);
        assertThat(resumeRefusals()).isEqualTo(6);
        assertThat(refusalReasons())
                .containsExactly(
                        "a replay: not newer than a request already taken from its key",
                        "the proof of the ticket's secret fails",
                        "the ticket is another minion's",
                        "its ticket key is retired or unknown",
                        "the ticket does not open (forged or damaged)",
                        "clock skew of more than 300 s");

        // A ticket request for m1's session not sealed under its request key: dropped, no ticket.
        ClientChannel channel = connect(kind);
        double dropped = droppedFrames();
        channel.send(
                Resumptions.encode(Resumptions.ticketRequest(SessionKey.random(), resumedSession, clock.millis())));
        await().until(() -> droppedFrames() > dropped);
        assertThat(channel.receive(Duration.ofMillis(200))).isNull();
    }

    @ParameterizedTest
    @EnumSource(names = {"TCP", "ZEROMQ"})
    void aTicketIsRefusedOnceItsKeyIsDeletedRejectedReplacedRotatedOrASaltMinions(TransportKind kind) throws Exception {
        start(kind);
        Minion deleted = fullAuth(kind, "deleted", 1);
        Minion rejected = fullAuth(kind, "rejected", 3);
        Minion replaced = fullAuth(kind, "replaced", 4);
        Minion rotated = fullAuth(kind, "rotated", 6);
        Minion salted = fullAuth(kind, "salted", 8);
        master.keyStore().delete("deleted", "test-admin");
        master.keyStore().reject("rejected", KeyState.ACCEPTED, null, "test-admin");
        master.keyStore().delete("replaced", "test-admin");
        fullAuth(kind, "replaced", 5);
        // The store's change of a minion's key rotation (PROTOCOL.md 6.3): its session goes on, its ticket names the
        // key it replaced.
        assertThat(master.keyStore()
                        .rotate(
                                "rotated",
                                (RSAPublicKey) TestKeys.pair(6).getPublic(),
                                (RSAPublicKey) TestKeys.pair(7).getPublic(),
                                KeyRotationPolicy.ALLOW,
                                "rotated"))
                .isInstanceOf(RotationDecision.Rotated.class);
        // The same key, deleted and accepted again as a stock Salt minion's: a brine ticket does not resume a Salt
        // minion.
        master.keyStore().delete("salted", "test-admin");
        master.keyStore()
                .offer(
                        "salted",
                        (RSAPublicKey) TestKeys.pair(8).getPublic(),
                        MinionKind.SALT,
                        current -> PolicyVerdict.ACCEPT);

        assertThat(resume(kind, deleted, deleted.grant())).isEmpty();
        assertThat(resume(kind, rejected, rejected.grant())).isEmpty();
        assertThat(resume(kind, replaced, replaced.grant())).isEmpty();
        assertThat(resume(kind, rotated, rotated.grant())).isEmpty();
        assertThat(resume(kind, salted, salted.grant())).isEmpty();
        assertThat(master.master().sessions().byMinion("deleted")).isEmpty();
        assertThat(master.master().sessions().byMinion("rejected")).isEmpty();
        assertThat(resumeRefusals()).isEqualTo(5);
        assertThat(refusalReasons())
                .containsExactly(
                        "the key is no longer accepted",
                        "the key is no longer accepted",
                        "the id's accepted key is another",
                        "the id's accepted key is another",
                        "the id's accepted key is another");
    }

    @ParameterizedTest
    @EnumSource(names = {"TCP", "ZEROMQ"})
    void aMinionThatRotatedItsKeyInItsSessionIsGivenATicketForTheNewKeyAndResumesWithItAfterARestart(TransportKind kind)
            throws Exception {
        start(kind);
        Minion m1 = fullAuth(kind, "m1", 1);
        ClientChannel channel = rotate(kind, m1, 2);

        // Switched to the new key, the minion gives up its ticket and asks for one in the session, as after a full
        // auth (PROTOCOL.md 8.9 step 1): the session's key is the new one, and so is the ticket's.
        clock.advance(Duration.ofMillis(1));
        channel.send(Resumptions.encode(Resumptions.ticketRequest(m1.requestKey(), m1.sessionId(), clock.millis())));
        Resumption.Grant renewed = Resumptions.openTicket(
                m1.requestKey(), (Resumption.Ticket) Resumptions.decode(channel.receive(ANSWER)));

        restart(kind);
        clock.advance(Duration.ofSeconds(1));
        // The new key's ticket resumes the session: no full auth, no signed answer.
        Optional<Resumption.Resumed> resumption = resume(kind, m1, renewed);
        assertThat(resumption)
                .as("resumed with the new key's ticket (refused: %s)", refusalReasons())
                .isPresent();
        Resumption.Resumed resumed = resumption.orElseThrow();
        assertThat(signedAuthAnswers()).isZero();
        assertThat(master.master().sessions().byMinion("m1").orElseThrow().publicKey())
                .isEqualTo(TestKeys.pair(2).getPublic());
        assertHeartbeatAnswered(kind, resumed);
        // The full auth's ticket names the replaced key: refused once the new key is accepted.
        assertThat(resume(kind, m1, m1.grant())).isEmpty();
        assertThat(refusalReasons()).containsExactly("the id's accepted key is another");
    }

    @Test
    void aSessionWhoseMinionRotatedItsKeyOutlivesAPublishKeyRotation() throws Exception {
        TransportKind kind = TransportKind.TCP; // the master's, whatever the transport
        start(kind);
        Minion m1 = fullAuth(kind, "m1", 1);
        rotate(kind, m1, 2);

        long rotations = auditEvents("publish-key-rotated");
        master.master().requestRotation("test");
        await().until(() -> auditEvents("publish-key-rotated") > rotations);
        // A session whose key is not the accepted one is closed at a publish key rotation (a removal racing an auth):
        // the rotated minion's key is the accepted one.
        assertThat(master.master()
                        .sessions()
                        .byMinion("m1")
                        .map(session -> session.sessionId().bytes()))
                .as("the rotated minion's session after a publish key rotation")
                .hasValueSatisfying(id -> assertThat(id).isEqualTo(m1.sessionId()));
    }

    @ParameterizedTest
    @EnumSource(names = {"TCP", "ZEROMQ"})
    void aTicketWhoseKeyWasLostAnExpiredOneAndOneWhoseKeyIsRetiredAreRefused(TransportKind kind) throws Exception {
        start(kind);
        Minion lost = fullAuth(kind, "lost", 1);
        // The ticket keys are gone with the file (a new pki dir, a restore): its tickets open no more.
        master.close();
        Files.delete(dir.resolve("pki").resolve(TicketKeys.FILE));
        master = WiredMaster.start(dir, config(kind), clock);
        clock.advance(Duration.ofSeconds(1));
        assertThat(resume(kind, lost, lost.grant())).isEmpty();

        Minion m1 = fullAuth(kind, "m1", 3);
        Minion m2 = fullAuth(kind, "m2", 4);
        clock.advance(Duration.ofMillis(Resumptions.MAX_LIFETIME_MS));
        assertThat(resume(kind, m1, m1.grant())).isEmpty();
        // A period more: the key that sealed m2's ticket is retired (48 h after it began sealing), whatever the ticket.
        clock.advance(Duration.ofMillis(TicketKeys.PERIOD_MS));
        assertThat(resume(kind, m2, m2.grant())).isEmpty();
        assertThat(resumeRefusals()).isEqualTo(3);
        assertThat(refusalReasons())
                .containsExactly(
                        "its ticket key is retired or unknown",
                        "the ticket expired",
                        "its ticket key is retired or unknown");
    }

    @Test
    void aMinionResumingAfterAMasterKeyRotationIsShownTheChainInItsNewSession() throws Exception {
        TransportKind kind = TransportKind.TCP; // the dispatcher's, whatever the transport
        start(kind);
        Minion m1 = fullAuth(kind, "m1", 1);
        // brine-key --rotate-master-key while m1 is away; the running master loads it and tells the sessions it has.
        ((FileKeyStore) master.keyStore()).rotateMasterKey(2048, Duration.ofDays(7), 5, Optional.empty(), clock);
        await().until(() -> master.metrics()
                        .registry()
                        .get("brine.master.key.rotations")
                        .counter()
                        .count()
                == 1);

        byte[] nonce = WiredMaster.nonce();
        clock.advance(Duration.ofMillis(1));
        ClientChannel channel = connect(kind);
        channel.send(Resumptions.encode(Resumptions.request("m1", m1.grant(), nonce, clock.millis())));
        Resumption.Resumed resumed = Resumptions.openReply(
                m1.grant().secret(), nonce, (Resumption.Reply) Resumptions.decode(channel.receive(ANSWER)));
        // No auth reply shows a resumed minion the chain: its new session does, or it never follows the new key.
        byte[] next = channel.receive(ANSWER);
        assertThat(next).as("a frame after the resumption's reply").isNotNull();
        SessionMessage shown = Sessions.open(
                SessionKey.of(resumed.requestKey()),
                (SessionFrame) ((Decoded.Ok) Codec.decode(next, FrameLimits.MAX_FRAME)).message(),
                SessionFrame.Direction.MASTER_TO_MINION);
        assertThat(shown).isInstanceOf(SessionMessage.MasterKeySuccession.class);
        assertThat(MasterSuccessions.walk(
                        (RSAPublicKey) WiredMaster.masterKey(),
                        ((SessionMessage.MasterKeySuccession) shown).chain(),
                        Optional.empty()))
                .isInstanceOf(MasterSuccessions.Walk.Verified.class);
    }

    // ---- helpers ----

    private void start(TransportKind kind) throws Exception {
        master = WiredMaster.start(dir, config(kind), clock);
    }

    private void restart(TransportKind kind) throws Exception {
        master.close();
        master = WiredMaster.start(dir, config(kind), clock);
    }

    private static UnaryOperator<MasterConfig.Builder> config(TransportKind kind) {
        return config -> {
            MasterConfig.Builder builder = config.acceptance(
                    MasterConfig.Acceptance.builder().autoAccept(true).build());
            return kind == TransportKind.TCP
                    ? builder
                    : builder.transport(TransportKind.ZEROMQ).retPort(0).publishPort(0);
        };
    }

    private ClientChannel connect(TransportKind kind) throws Exception {
        ClientChannel channel = kind == TransportKind.TCP
                ? new TcpClientChannel("127.0.0.1", master.port(), ANSWER)
                : new ZmqClientChannel("127.0.0.1", master.port());
        channels.add(channel);
        return channel;
    }

    /** A full auth of {@code id} with test key {@code key}, on a connection of its own: the session and the ticket. */
    private Minion fullAuth(TransportKind kind, String id, int key) throws Exception {
        ClientChannel channel = connect(kind);
        channel.send(WiredMaster.authRequest(id, key, WiredMaster.nonce(), clock.millis()));
        AuthReply reply =
                (AuthReply) ((Decoded.Ok) Codec.decode(channel.receive(ANSWER), FrameLimits.MAX_FRAME)).message();
        assertThat(reply.status()).isEqualTo(AuthStatus.ACCEPTED);
        SessionKey requestKey = SessionKey.of(
                Rsa.unwrap(TestKeys.pair(key).getPrivate(), reply.session().wrappedRequestKey()));
        channel.send(Resumptions.encode(
                Resumptions.ticketRequest(requestKey, reply.session().sessionId(), clock.millis())));
        Resumption.Ticket ticket = (Resumption.Ticket) Resumptions.decode(channel.receive(ANSWER));
        return new Minion(id, key, reply.session().sessionId(), requestKey, Resumptions.openTicket(requestKey, ticket));
    }

    /**
     * {@code minion} rotates to test key {@code key} over its session, as KeyRotation does (PROTOCOL.md 6.3), on a new
     * connection: the master's signed answer says rotated. That connection, where its session's frames now go.
     */
    private ClientChannel rotate(TransportKind kind, Minion minion, int key) throws Exception {
        ClientChannel channel = connect(kind);
        channel.send(Codec.encode(Sessions.seal(
                minion.requestKey(),
                minion.sessionId(),
                SessionFrame.Direction.MINION_TO_MASTER,
                1,
                KeyRotations.signedRequest(
                        minion.sessionId(), minion.id(), TestKeys.pair(minion.key()), TestKeys.pair(key)))));
        SessionMessage.KeyRotateReply answer = (SessionMessage.KeyRotateReply) Sessions.open(
                minion.requestKey(),
                (SessionFrame) ((Decoded.Ok) Codec.decode(channel.receive(ANSWER), FrameLimits.MAX_FRAME)).message(),
                SessionFrame.Direction.MASTER_TO_MINION);
        assertThat(answer.rotated()).as(answer.reason()).isTrue();
        assertThat(KeyRotations.signedBy(WiredMaster.masterKey(), minion.sessionId(), answer))
                .isTrue();
        return channel;
    }

    /** Sends {@code request} on a new connection: the answer to {@code nonce}. */
    private Resumption.Reply ask(TransportKind kind, byte[] request, byte[] nonce) throws Exception {
        ClientChannel channel = connect(kind);
        channel.send(request);
        Resumption.Reply reply = (Resumption.Reply) Resumptions.decode(channel.receive(ANSWER));
        assertThat(reply.nonce()).isEqualTo(nonce);
        return reply;
    }

    /** Resumes as {@code minion} with {@code grant}: the session, or empty when refused. */
    private Optional<Resumption.Resumed> resume(TransportKind kind, Minion minion, Resumption.Grant grant)
            throws Exception {
        byte[] nonce = WiredMaster.nonce();
        clock.advance(Duration.ofMillis(1));
        Resumption.Reply reply =
                ask(kind, Resumptions.encode(Resumptions.request(minion.id(), grant, nonce, clock.millis())), nonce);
        if (reply.refused()) {
            return Optional.empty();
        }
        return Optional.of(Resumptions.openReply(grant.secret(), nonce, reply));
    }

    /** A heartbeat in the resumed session, on a new connection, is answered in it. */
    private void assertHeartbeatAnswered(TransportKind kind, Resumption.Resumed resumed) throws Exception {
        SessionKey requestKey = SessionKey.of(resumed.requestKey());
        ClientChannel channel = connect(kind);
        channel.send(Codec.encode(Sessions.seal(
                requestKey,
                resumed.sessionId(),
                SessionFrame.Direction.MINION_TO_MASTER,
                1,
                new SessionMessage.Heartbeat(resumed.generation()))));
        SessionFrame answer =
                (SessionFrame) ((Decoded.Ok) Codec.decode(channel.receive(ANSWER), FrameLimits.MAX_FRAME)).message();
        assertThat(Sessions.open(requestKey, answer, SessionFrame.Direction.MASTER_TO_MINION))
                .isInstanceOf(SessionMessage.HeartbeatReply.class);
    }

    /** Every signed auth answer of this master: each one a private-key operation. */
    private double signedAuthAnswers() {
        return master.metrics().registry().find("brine.auth.answers").counters().stream()
                .mapToDouble(Counter::count)
                .sum();
    }

    private double droppedFrames() {
        return master.metrics()
                .registry()
                .get("brine.frames.dropped")
                .functionCounter()
                .count();
    }

    /** Why each resumption was refused, in order, from the audit log (every master of the test writes to it). */
    private List<String> refusalReasons() throws IOException {
        String prefix = "resumption refused: ";
        List<String> reasons = new ArrayList<>();
        for (String line : Files.readAllLines(master.config().auditLog())) {
            JsonNode event = JSON.readTree(line);
            if (event.path("event").asText().equals("auth-refused")
                    && event.path("reason").asText().startsWith(prefix)) {
                reasons.add(event.path("reason").asText().substring(prefix.length()));
            }
        }
        return reasons;
    }

    /** How many lines of {@code event} the audit log holds. */
    private long auditEvents(String event) throws IOException {
        String quoted = "\"" + event + "\"";
        return Files.readAllLines(master.config().auditLog()).stream()
                .filter(line -> line.contains(quoted))
                .count();
    }

    private double resumeRefusals() {
        return master.metrics()
                .registry()
                .get("brine.resumptions.refused")
                .functionCounter()
                .count();
    }
}

package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.files.AtomicFiles;
import io.brine.minion.auth.MasterPin;
import io.brine.minion.auth.MinionKeyring;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The minion against a {@link FakeMaster} the test answers for: every check of the auth, publication and session
 * paths (PROTOCOL.md sections 8.2 to 8.6), each pinned by handing the minion one frame that is wrong in one way. Time
 * is the fixture's manual scheduler: the minion's event thread has handled everything once the fixture settles, so
 * "dropped" is checked exactly, and back-offs pass when the test moves the clock.
 */
class MinionProtocolTest {

    private static final KeyPair MASTER = TestKeys.pair(100);
    private static final KeyPair STRANGER = TestKeys.pair(102);
    private static final KeyPair OTHER_MASTER = FakeMaster.OTHER_MASTER;
    private static final String EVENT_THREAD = "brine-minion-test-loop";

    @TempDir
    Path pkiDir;

    @AutoClose
    private MinionFixture fixture;

    private MovableClock clock;
    private FakeMaster master;
    private List<String> ran;
    private Minion minion;
    private long floor;
    private long generation;

    @BeforeEach
    void setUp() {
        fixture = new MinionFixture(pkiDir);
        clock = fixture.clock;
        master = new FakeMaster(MASTER, clock);
        ran = fixture.ran;
    }

    // ---- set-up ----

    private void start(boolean rejectedRetry) throws Exception {
        start(null, rejectedRetry);
    }

    private void start(String masterFinger, boolean rejectedRetry) throws Exception {
        minion = fixture.start(master, MinionFixture.settings(rejectedRetry), masterFinger);
        floor = master.serialFloor;
        generation = master.generation;
    }

    private void startAccepted() throws Exception {
        start(false);
        master.reply(master.accept(authRequest(1)));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
        // The first thing an accepted minion sends is its grains (counter 1).
        assertThat(master.received(SessionMessage.Grains.class)).hasSize(1);
    }

    /** The {@code n}th auth request (from 1), which the minion must have sent by now. */
    private AuthRequest authRequest(int n) {
        fixture.settle();
        assertThat(master.authRequests()).as("auth requests sent").hasSizeGreaterThanOrEqualTo(n);
        return master.authRequests().get(n - 1);
    }

    private void barrier() {
        fixture.barrier(master);
    }

    private static AuthRequest withNonce(AuthRequest request, byte[] nonce) {
        return FakeMaster.withNonce(request, nonce);
    }

    private static byte[] randomBytes(int length) {
        return FakeMaster.randomBytes(length);
    }

    private <T extends SessionMessage> List<T> fromCurrentSession(Class<T> type) {
        String session = master.currentSession();
        return master.fromMinion().stream()
                .filter(m -> m.session().equals(session))
                .map(FakeMaster.FromMinion::message)
                .filter(type::isInstance)
                .map(type::cast)
                .toList();
    }

    // ---- auth ----

    @Test
    void anAcceptedMinionSubscribesAndPinsTheMasterKey() throws Exception {
        startAccepted();
        assertThat(master.subscriptions()).containsExactly("m/web1/@" + FakeMaster.PUBLISH_PORT);
        assertThat(Files.readString(pkiDir.resolve(MasterPin.FILE))).isEqualTo(Pem.publicKeySpki(MASTER.getPublic()));
        assertThat(master.authRequests().get(0).claims()).containsEntry("role", "web");
    }

    @Test
    void anAuthReplyForAnotherNonceIsIgnored() throws Exception {
        start(false);
        AuthRequest request = authRequest(1);
        master.reply(master.accept(withNonce(request, randomBytes(32))));
        // Handled in order on the minion's event thread: had the first been taken, this one would be stale.
        master.reply(master.refuse(request, AuthStatus.PENDING, "waiting for an admin"));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.PENDING);
        assertThat(master.subscriptions()).isEmpty();
        assertThat(master.fromMinion()).isEmpty();
    }

    @Test
    void anAuthReplyNotSignedByTheKeyItCarriesIsIgnored() throws Exception {
        start(false);
        AuthRequest request = authRequest(1);
        AuthReply forged = new AuthReply(
                Suite.RSA_OAEP_PSS_AES256GCM,
                AuthStatus.REJECTED,
                request.nonce(),
                clock.millis(),
                MASTER.getPublic().getEncoded(),
                "forged",
                0,
                null);
        master.reply(FakeMaster.authReply(forged, STRANGER.getPrivate()));
        master.reply(master.accept(request));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
        assertThat(minion.terminated()).isNotDone();
    }

    @Test
    void anAuthReplyWithAFarOffClockIsARefusalAndPinsNothing() throws Exception {
        start(false);
        AuthRequest request = authRequest(1);
        master.reply(
                master.accept(request, clock.millis() - Duration.ofMinutes(10).toMillis()));
        fixture.settle();
        assertThat(minion.state()).isNotEqualTo(MinionState.ACCEPTED);
        assertThat(master.subscriptions()).isEmpty();
        assertThat(pkiDir.resolve(MasterPin.FILE)).doesNotExist();
        // Not accepted: it asks again after its back-off (acceptance_wait_time).
        fixture.advancePast(MinionFixture.ACCEPTANCE_WAIT);
        AuthRequest again = authRequest(2);
        assertThat(again.nonce()).isNotEqualTo(request.nonce());
        master.reply(master.accept(again));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
    }

    @Test
    void aReplyUnderAnotherMasterKeyRacingTheMastersOwnIsDroppedAndTheMastersCounts() throws Exception {
        startAccepted();
        master.reply(master.sessionUnknown(master.lastCounterFromMinion(), MASTER.getPrivate()));
        fixture.advance(Duration.ofSeconds(2)); // re-auths after a lost session are spread over 2 s
        AuthRequest again = authRequest(2);
        FakeMaster impostor = new FakeMaster(OTHER_MASTER, clock);
        master.reply(impostor.accept(again)); // an on-path forger answers first, with the nonce it read
        fixture.settle();
        assertThat(minion.terminated()).isNotDone();
        assertThat(minion.state()).isEqualTo(MinionState.MASTER_KEY_MISMATCH);
        assertThat(minion.status().reason()).startsWith("master key changed");
        master.reply(master.accept(again));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
        assertThat(Files.readString(pkiDir.resolve(MasterPin.FILE))).isEqualTo(Pem.publicKeySpki(MASTER.getPublic()));
        assertThat(master.sessionsGranted()).isEqualTo(2);
    }

    @Test
    void anotherMasterKeyPresentedUnderThePinnedKeysOwnSignatureStopsTheMinion() throws Exception {
        startAccepted();
        master.reply(master.sessionUnknown(master.lastCounterFromMinion(), MASTER.getPrivate()));
        fixture.advance(Duration.ofSeconds(2));
        AuthRequest again = authRequest(2);
        // Authentic: only the pinned master could have signed it, so only an admin can settle it.
        master.reply(FakeMaster.authReply(
                new AuthReply(
                        Suite.RSA_OAEP_PSS_AES256GCM,
                        AuthStatus.PENDING,
                        again.nonce(),
                        clock.millis(),
                        OTHER_MASTER.getPublic().getEncoded(),
                        "new key",
                        0,
                        null),
                MASTER.getPrivate()));
        fixture.settle();
        assertThat(minion.terminated()).isCompletedWithValue(MinionState.MASTER_KEY_MISMATCH);
        assertThat(minion.state()).isEqualTo(MinionState.MASTER_KEY_MISMATCH);
        assertThat(Files.readString(pkiDir.resolve(MasterPin.FILE))).isEqualTo(Pem.publicKeySpki(MASTER.getPublic()));
    }

    @Test
    void aMasterFingerMismatchOnFirstContactIsShownAndTheMinionKeepsAsking() throws Exception {
        start(Fingerprints.of(OTHER_MASTER.getPublic()), false);
        master.reply(master.accept(authRequest(1)));
        fixture.settle();
        assertThat(minion.terminated()).isNotDone();
        assertThat(minion.state()).isEqualTo(MinionState.MASTER_KEY_MISMATCH);
        assertThat(minion.status().reason()).contains("master_finger");
        assertThat(pkiDir.resolve(MasterPin.FILE)).doesNotExist();
        assertThat(master.subscriptions()).isEmpty();
        fixture.advance(MinionFixture.AUTH_TIMEOUT);
        fixture.advancePast(MinionFixture.ACCEPTANCE_WAIT);
        authRequest(2);
        assertThat(minion.state()).isEqualTo(MinionState.MASTER_KEY_MISMATCH);
    }

    @Test
    void aRejectionUnderMasterFingersKeyStopsTheMinion() throws Exception {
        start(Fingerprints.of(MASTER.getPublic()), false);
        master.reply(master.refuse(authRequest(1), AuthStatus.REJECTED, "rejected by an admin"));
        fixture.settle();
        assertThat(minion.terminated()).isCompletedWithValue(MinionState.REJECTED);
    }

    @Test
    void aMatchingMasterFingerIsTrustedOnFirstContact() throws Exception {
        start(Fingerprints.of(MASTER.getPublic()), false);
        master.reply(master.accept(authRequest(1)));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
        assertThat(pkiDir.resolve(MasterPin.FILE)).exists();
    }

    @Test
    void aPinnedMinionRejectedByItsMasterStopsWithoutRejectedRetry() throws Exception {
        fixture.pin(MASTER);
        start(false);
        master.reply(master.refuse(authRequest(1), AuthStatus.REJECTED, "rejected by an admin"));
        fixture.settle();
        assertThat(minion.terminated()).isCompletedWithValue(MinionState.REJECTED);
        assertThat(minion.status().reason()).isEqualTo("rejected by an admin");
    }

    @Test
    void aRejectedMinionAsksAgainWithRejectedRetry() throws Exception {
        start(true);
        master.reply(master.refuse(authRequest(1), AuthStatus.REJECTED, "rejected by an admin"));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.REJECTED);
        fixture.advancePast(MinionFixture.ACCEPTANCE_WAIT);
        authRequest(2);
        assertThat(minion.terminated()).isNotDone();
    }

    @Test
    void aPendingMinionAsksAgainAfterTheAcceptanceWait() throws Exception {
        start(false);
        AuthRequest first = authRequest(1);
        master.reply(master.refuse(first, AuthStatus.PENDING, "waiting for an admin"));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.PENDING);
        assertThat(minion.status().nextAttempt())
                .isBetween(
                        clock.instant().plus(MinionFixture.ACCEPTANCE_WAIT),
                        clock.instant().plusMillis((long) (MinionFixture.ACCEPTANCE_WAIT.toMillis() * 1.25)));
        // acceptance_wait_time (plus up to 25 % jitter), and not a millisecond less.
        fixture.advance(MinionFixture.ACCEPTANCE_WAIT.minusMillis(1));
        assertThat(master.authRequests()).hasSize(1);
        fixture.advance(MinionFixture.ACCEPTANCE_WAIT.dividedBy(4).plusMillis(1));
        AuthRequest second = authRequest(2);
        assertThat(second.nonce()).isNotEqualTo(first.nonce());
        master.reply(master.accept(second));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
    }

    @Test
    void closingDoesNotWaitForAPendingAuthTimeout() throws Exception {
        // The daemon's event thread, not the manual one: what is pinned is that its pending timers are dropped.
        EventThread loop = new EventThread("brine-minion-close-test");
        AtomicBoolean stoppedCleanly = new AtomicBoolean();
        Scheduler watched = new Scheduler() {
            @Override
            public void execute(Runnable task) {
                loop.execute(task);
            }

            @Override
            public Timer schedule(Duration delay, Runnable task) {
                return loop.schedule(delay, task);
            }

            @Override
            public void close() {
                // Without dropping them, the thread would wait for the auth timeout and be stopped by force.
                stoppedCleanly.set(loop.stop(EventThread.CLOSE_WAIT));
            }
        };
        AtomicFiles.ensureDirectory(pkiDir);
        KeyPair keys = TestKeys.pair(MinionFixture.MINION_KEY);
        Minion.Settings settings = MinionFixture.settings(false);
        Minion closing = new Minion(
                settings,
                master,
                watched,
                Minion.Parts.wire(
                        settings,
                        MinionKeyring.of(pkiDir, keys),
                        new MasterPin(pkiDir, null),
                        master,
                        watched,
                        clock,
                        2048,
                        Optional.empty()),
                load -> {});
        closing.start();
        await().until(() -> master.authRequests().size() == 1); // the auth timeout, 30 s away, is pending
        closing.close();
        assertThat(stoppedCleanly).isTrue();
        assertThat(closing.terminated()).isCompletedWithValue(MinionState.STOPPED);
        assertThat(closing.state()).isEqualTo(MinionState.STOPPED);
    }

    // ---- publications ----

    @Test
    void aValidPublicationRunsOnce() throws Exception {
        startAccepted();
        master.publish(master.publication(floor + 1, "j1"));
        barrier();
        assertThat(ran).containsExactly("j1");
    }

    @Test
    void aReplayedPublicationIsDropped() throws Exception {
        startAccepted();
        byte[] frame = master.publication(floor + 1, "j1");
        master.publish(frame);
        master.publish(frame);
        barrier();
        assertThat(ran).containsExactly("j1");
    }

    @Test
    void aPublicationSignedByAnotherKeyIsDropped() throws Exception {
        startAccepted();
        master.publish(master.publication(master.publishKey, generation, floor + 1, "forged", STRANGER.getPrivate()));
        master.publish(master.publication(floor + 2, "j2"));
        barrier();
        assertThat(ran).containsExactly("j2");
    }

    @Test
    void aPublicationSealedWithAnotherPublishKeyIsDropped() throws Exception {
        startAccepted();
        master.publish(
                master.publication(SessionKey.random(), generation, floor + 1, "wrong-key", MASTER.getPrivate()));
        master.publish(master.publication(floor + 2, "j2"));
        barrier();
        assertThat(ran).containsExactly("j2");
    }

    @Test
    void aPublicationAtOrBelowTheSerialFloorIsDropped() throws Exception {
        startAccepted();
        master.publish(master.publication(floor, "at-floor"));
        master.publish(master.publication(floor - 1, "below-floor"));
        master.publish(master.publication(floor + 1, "above"));
        barrier();
        assertThat(ran).containsExactly("above");
    }

    @Test
    void aSecondPublicationWithTheSameJidIsDropped() throws Exception {
        startAccepted();
        master.publish(master.publication(floor + 1, "j1"));
        master.publish(master.publication(floor + 2, "j1"));
        barrier();
        assertThat(ran).containsExactly("j1");
    }

    @Test
    void outOfOrderSerialsWithinTheWindowAreAcceptedOnceEach() throws Exception {
        startAccepted();
        master.publish(master.publication(floor + 10, "a"));
        master.publish(master.publication(floor + 5, "b"));
        master.publish(master.publication(floor + 7, "c"));
        master.publish(master.publication(floor + 5, "b-again")); // serial seen: dropped
        master.publish(master.publication(floor + 80, "d"));
        master.publish(master.publication(floor + 16, "e")); // 64 below the highest: outside the window
        master.publish(master.publication(floor + 17, "f")); // 63 below: the window's oldest slot
        master.publish(master.publication(floor + 17, "f-again"));
        barrier();
        assertThat(ran).containsExactly("a", "b", "c", "d", "f");
    }

    @Test
    void aPublicationOfANewerGenerationWaitsForItsKey() throws Exception {
        startAccepted();
        SessionKey next = SessionKey.random();
        master.publish(master.publication(next, generation + 1, floor + 1, "j1", MASTER.getPrivate()));
        master.publish(master.publication(next, generation + 1, floor + 2, "j2", MASTER.getPrivate()));
        barrier();
        assertThat(ran).isEmpty();
        // One key request for the generation, however many publications wait for it.
        assertThat(master.received(SessionMessage.KeyRequest.class))
                .extracting(SessionMessage.KeyRequest::generation)
                .containsExactly(generation + 1);
        master.reply(master.sealed(new SessionMessage.KeyUpdate(generation + 1, next.bytes(), floor)));
        fixture.settle();
        assertThat(ran).containsExactly("j1", "j2");
        assertThat(minion.status().generation()).isEqualTo(generation + 1);
    }

    @Test
    void aHeartbeatReplyNamingANewerGenerationMakesTheMinionAskForIt() throws Exception {
        startAccepted();
        master.reply(master.sealed(new SessionMessage.HeartbeatReply(generation + 3)));
        fixture.settle();
        assertThat(master.received(SessionMessage.KeyRequest.class))
                .extracting(SessionMessage.KeyRequest::generation)
                .containsExactly(generation + 3);
    }

    // ---- sessions ----

    @Test
    void aSessionUnknownFromTheMasterMakesTheMinionAuthenticateAgain() throws Exception {
        startAccepted();
        String first = master.currentSession();
        master.reply(master.sessionUnknown(master.lastCounterFromMinion(), MASTER.getPrivate()));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.CONNECTING);
        fixture.advance(Duration.ofSeconds(2)); // re-auths after a lost session are spread over 2 s
        master.reply(master.accept(authRequest(2)));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
        assertThat(fromCurrentSession(SessionMessage.Grains.class)).hasSize(1);
        assertThat(master.currentSession()).isNotEqualTo(first);
        // The new session starts its counters again at 1.
        assertThat(master.lastCounterFromMinion()).isEqualTo(1);
    }

    @Test
    void aSessionUnknownThatFailsAnyCheckIsIgnored() throws Exception {
        startAccepted();
        long sent = master.lastCounterFromMinion();
        master.reply(master.sessionUnknown(sent, STRANGER.getPrivate()));
        master.reply(FakeMaster.sessionUnknown(randomBytes(16), sent, clock.millis(), MASTER.getPrivate()));
        master.reply(master.sessionUnknown(sent + 5, MASTER.getPrivate())); // a counter never sent
        byte[] stale = FakeMaster.sessionUnknown(
                fromHex(master.currentSession()),
                sent,
                clock.millis() - Duration.ofMinutes(10).toMillis(),
                MASTER.getPrivate());
        master.reply(stale);
        barrier();
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
        assertThat(master.authRequests()).hasSize(1);
    }

    @Test
    void aReconnectSendsAHeartbeatAtOnce() throws Exception {
        startAccepted();
        master.reconnected();
        fixture.settle();
        assertThat(master.received(SessionMessage.Heartbeat.class))
                .extracting(SessionMessage.Heartbeat::generation)
                .containsExactly(generation);
    }

    // ---- resumption after a failover (PROTOCOL.md 8.9) ----

    /**
     * A minion with {@code master: [a, b]} (failover) accepted by a, which gave it a ticket; b's connection is up only
     * when the test says ({@link FakeMaster#reconnected}). Both masters hold the cluster's one key.
     */
    private FakeMaster failoverHoldingATicket(Resumption.Grant grant) throws Exception {
        FakeMaster b = new FakeMaster(MASTER, clock);
        b.upOnStart = false;
        failover = new FailoverTransport(List.of("a", "b"), false, name -> name.equals("a") ? master : b);
        minion = fixture.start(master, failover, MinionFixture.settings(false), null);
        master.reply(master.accept(authRequest(1)));
        master.reply(master.ticket(grant));
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
        assertThat(minion.status().resumableUntil())
                .as("the ticket stored")
                .isEqualTo(Instant.ofEpochMilli(grant.expiresMs()));
        return b;
    }

    private FailoverTransport failover;

    /** Moves time a second at a time until the minion's transport moved to master b. */
    private void untilFailedOver() {
        for (int i = 0; i < 10_000 && failover.currentMaster().equals("a"); i++) {
            fixture.advance(Duration.ofSeconds(1));
        }
        assertThat(failover.currentMaster()).isEqualTo("b");
    }

    private Resumption.Grant grant() {
        return new Resumption.Grant(
                randomBytes(64), clock.millis() + Duration.ofHours(24).toMillis(), randomBytes(32));
    }

    @Test
    void aFailoverResumesOnTheNewMasterOnceItsConnectionIsUpAndNeverOvertakesItWithAFullAuth() throws Exception {
        Resumption.Grant grant = grant();
        FakeMaster b = failoverHoldingATicket(grant);

        // a answers nothing: its heartbeat goes unanswered and the transport moves to b, whose connection comes up
        // after the minion's re-auth spread (up to 2 s) is over.
        untilFailedOver();
        fixture.advance(Duration.ofSeconds(3));
        b.reconnected();
        fixture.settle();

        assertThat(b.authRequests()).as("no full auth beside the resumption").isEmpty();
        assertThat(b.resumptionRequests()).hasSize(1);
        Resumption.Grant next = grant();
        b.reply(b.resume(b.resumptionRequests().get(0), grant, next));
        fixture.barrier(b);
        assertThat(minion.status().reason()).isEqualTo("resumed");
        assertThat(minion.status().resumableUntil()).isEqualTo(Instant.ofEpochMilli(next.expiresMs()));
        assertThat(master.resumptionRequests())
                .as("nothing spent on the master left")
                .isEmpty();
        assertThat(b.authRequests()).isEmpty();
    }

    @Test
    void aResumptionTheMasterLeftUnansweredIsTriedOnTheNextMasterThenAFullAuth() throws Exception {
        FakeMaster b = failoverHoldingATicket(grant());

        // a's connection comes back while the session is open: the minion resumes there, and a (stopping) answers
        // nothing.
        master.reconnected();
        fixture.settle();
        assertThat(master.resumptionRequests()).hasSize(1);
        untilFailedOver();
        b.reconnected();
        fixture.advancePast(MinionFixture.ACCEPTANCE_WAIT.multipliedBy(2));
        assertThat(b.authRequests())
                .as("the ticket not spent on the master left")
                .isEmpty();
        assertThat(b.resumptionRequests()).hasSize(1);
        assertThat(minion.status().resumableUntil()).isNotNull();

        // b answers nothing either: back to a, where the ticket went unanswered already: a full auth (bounded).
        fixture.advance(MinionFixture.AUTH_TIMEOUT);
        master.reconnected();
        fixture.advancePast(MinionFixture.ACCEPTANCE_WAIT.multipliedBy(2));
        assertThat(master.resumptionRequests()).hasSize(1);
        assertThat(master.authRequests()).hasSize(2);
        assertThat(minion.status().resumableUntil()).as("the ticket given up").isNull();
    }

    @Test
    void aKeyOlderThanKeyMaxAgeIsRotatedAtAHeartbeatAndAskedAgainAnHourLaterAtTheSoonest() throws Exception {
        fixture.keyMaxAge(Duration.ofHours(2)); // minion.pem is written at start: its age is 0
        minion = fixture.start(master, MinionFixture.settings(false, Duration.ofDays(1)), null); // heartbeats by hand
        master.reply(master.accept(authRequest(1)));
        fixture.settle();
        assertThat(master.received(SessionMessage.KeyRotate.class))
                .as("asked when the session opens")
                .isEmpty();
        heartbeatReplyAt(Duration.ofMinutes(119));
        assertThat(master.received(SessionMessage.KeyRotate.class))
                .as("younger than key_max_age")
                .isEmpty();
        heartbeatReplyAt(Duration.ofMinutes(2));
        assertThat(master.received(SessionMessage.KeyRotate.class)).hasSize(1);
        assertThat(pkiDir.resolve(MinionKeyring.NEW_PRIVATE_FILE)).exists();
        heartbeatReplyAt(Duration.ofMinutes(58));
        assertThat(master.received(SessionMessage.KeyRotate.class))
                .as("unanswered, asked less than an hour ago")
                .hasSize(1);
        heartbeatReplyAt(Duration.ofMinutes(2));
        List<SessionMessage.KeyRotate> asked = master.received(SessionMessage.KeyRotate.class);
        assertThat(asked).as("an hour after the last ask").hasSize(2);
        assertThat(asked.get(1).newKey())
                .as("the same new key")
                .isEqualTo(asked.get(0).newKey());
    }

    @Test
    void aRotationsNewKeyIsMadeOffTheEventThreadWhichGoesOnServingTheSession() throws Exception {
        startAccepted();
        fixture.holdKeyMaking();
        CompletableFuture<KeyRotation.Result> rotated = minion.rotateKey();
        fixture.settle();
        barrier(); // the event thread answers while the key is being made
        assertThat(master.received(SessionMessage.KeyRotate.class))
                .as("asked before the key was made")
                .isEmpty();
        fixture.makeKeys();
        assertThat(fixture.keyMakers).doesNotContain(EVENT_THREAD);
        List<SessionMessage.KeyRotate> asked = fromCurrentSession(SessionMessage.KeyRotate.class);
        assertThat(asked).hasSize(1);
        String fingerprint =
                Fingerprints.of(RsaKeys.publicKeyFromDer(asked.get(0).newKey()));
        master.reply(master.keyRotateReply(true, fingerprint, "rotated"));
        fixture.settle();
        assertThat(rotated).isCompletedWithValue(new KeyRotation.Result(true, fingerprint, "rotated"));
        assertThat(minion.status().fingerprint()).isEqualTo(fingerprint);
    }

    @Test
    void aMinionThatSwitchedToItsNewKeyGivesUpTheOldKeysTicketAndResumesWithTheOneItAsksForInTheSession()
            throws Exception {
        startAccepted();
        Resumption.Grant oldKeys = grant();
        master.reply(master.ticket(oldKeys));
        fixture.settle();
        assertThat(ticketRequests()).as("asked after the full auth").isEqualTo(1);
        assertThat(minion.status().resumableUntil()).isEqualTo(Instant.ofEpochMilli(oldKeys.expiresMs()));

        CompletableFuture<KeyRotation.Result> rotated = minion.rotateKey();
        fixture.settle();
        byte[] newKey = master.received(SessionMessage.KeyRotate.class).get(0).newKey();
        master.reply(master.keyRotateReply(true, Fingerprints.of(RsaKeys.publicKeyFromDer(newKey)), "rotated"));
        fixture.settle();
        assertThat(rotated)
                .isCompletedWithValue(
                        new KeyRotation.Result(true, Fingerprints.of(RsaKeys.publicKeyFromDer(newKey)), "rotated"));
        // The ticket names the replaced key, which a master refuses to resume: given up, and one asked for in the
        // session, whose key is the new one from the master's answer on (PROTOCOL.md 6.3, 8.9).
        assertThat(minion.status().resumableUntil())
                .as("the old key's ticket given up")
                .isNull();
        assertThat(ticketRequests()).as("asked again once switched").isEqualTo(2);

        clock.advance(Duration.ofSeconds(1));
        Resumption.Grant newKeys = grant();
        master.reply(master.ticket(newKeys));
        fixture.settle();
        assertThat(minion.status().resumableUntil()).isEqualTo(Instant.ofEpochMilli(newKeys.expiresMs()));
        // The connection comes back (a restarted master): the minion resumes with the new key's ticket.
        master.reconnected();
        fixture.settle();
        assertThat(master.resumptionRequests())
                .singleElement()
                .satisfies(request -> assertThat(request.ticket()).isEqualTo(newKeys.ticket()));
        assertThat(master.authRequests()).as("no full auth").hasSize(1);
    }

    /** The ticket requests the minion sent, in any session. */
    private long ticketRequests() {
        return master.resumptionFrames.stream()
                .filter(Resumption.TicketRequest.class::isInstance)
                .count();
    }

    @Test
    void aRotationUnansweredWhenTheSessionIsLostIsAskedAgainInTheNextSession() throws Exception {
        startAccepted();
        CompletableFuture<KeyRotation.Result> rotated = minion.rotateKey();
        fixture.settle();
        assertThat(master.received(SessionMessage.KeyRotate.class)).hasSize(1);
        master.reply(master.sessionUnknown(master.lastCounterFromMinion(), MASTER.getPrivate()));
        fixture.advance(Duration.ofSeconds(2)); // re-auths after a lost session are spread over 2 s
        // The rotation never reached the master: it does not know the new key, and accepts the old one.
        master.reply(master.refuse(authRequest(2), AuthStatus.DENIED, "another key is accepted for this id"));
        fixture.settle();
        master.reply(master.accept(authRequest(3)));
        fixture.settle();
        List<SessionMessage.KeyRotate> again = fromCurrentSession(SessionMessage.KeyRotate.class);
        assertThat(again).as("asked again in the new session").hasSize(1);
        String fingerprint =
                Fingerprints.of(RsaKeys.publicKeyFromDer(again.get(0).newKey()));
        master.reply(master.keyRotateReply(true, fingerprint, "rotated"));
        fixture.settle();
        assertThat(rotated).isCompletedWithValue(new KeyRotation.Result(true, fingerprint, "rotated"));
    }

    @Test
    void aRotationWhoseAnswerWasLostIsDoneWhenTheNextAuthAcceptsTheNewKey() throws Exception {
        startAccepted();
        CompletableFuture<KeyRotation.Result> rotated = minion.rotateKey();
        fixture.settle();
        byte[] newKey = master.received(SessionMessage.KeyRotate.class).get(0).newKey();
        master.reply(master.sessionUnknown(master.lastCounterFromMinion(), MASTER.getPrivate()));
        fixture.advance(Duration.ofSeconds(2));
        AuthRequest again = authRequest(2);
        assertThat(again.publicKey()).as("the new key offered first").isEqualTo(newKey);
        master.reply(master.accept(again));
        fixture.settle();
        String fingerprint = Fingerprints.of(RsaKeys.publicKeyFromDer(newKey));
        assertThat(rotated)
                .isCompletedWithValue(new KeyRotation.Result(true, fingerprint, "accepted by the master at sign-in"));
        assertThat(fromCurrentSession(SessionMessage.KeyRotate.class))
                .as("not asked again")
                .isEmpty();
    }

    @Test
    void aRotationPendingOnTheMasterKeepsTheNewKeyThroughASignInWithTheOldOneAndIsAskedAgainAtAHeartbeat()
            throws Exception {
        minion = fixture.start(master, MinionFixture.settings(false, Duration.ofDays(1)), null); // heartbeats by hand
        master.reply(master.accept(authRequest(1)));
        fixture.settle();
        CompletableFuture<KeyRotation.Result> rotated = minion.rotateKey();
        fixture.settle();
        byte[] newKey = master.received(SessionMessage.KeyRotate.class).get(0).newKey();
        String fingerprint = Fingerprints.of(RsaKeys.publicKeyFromDer(newKey));
        String oldFingerprint = minion.status().fingerprint();
        master.reply(master.keyRotatePending(fingerprint, "the new key awaits an admin"));
        fixture.settle();
        assertThat(rotated)
                .isCompletedWithValue(new KeyRotation.Result(false, fingerprint, "the new key awaits an admin", true));
        assertThat(minion.status().fingerprint()).as("the old key stays in use").isEqualTo(oldFingerprint);
        assertThat(pkiDir.resolve(MinionKeyring.PENDING_FILE)).exists();
        // Signed in again before the admin decided: the new key is not accepted yet, the old one is; both are kept.
        master.reply(master.sessionUnknown(master.lastCounterFromMinion(), MASTER.getPrivate()));
        fixture.advance(Duration.ofSeconds(2));
        assertThat(authRequest(2).publicKey()).isEqualTo(newKey);
        master.reply(master.refuse(authRequest(2), AuthStatus.DENIED, "key differs from the accepted key"));
        fixture.settle();
        master.reply(master.accept(authRequest(3)));
        fixture.settle();
        assertThat(pkiDir.resolve(MinionKeyring.NEW_PRIVATE_FILE))
                .as("kept for the admin's word")
                .exists();
        assertThat(fromCurrentSession(SessionMessage.KeyRotate.class))
                .as("asked 2 minutes after the last ask (2 s ago)")
                .isEmpty();
        heartbeatReplyAt(Duration.ofSeconds(117));
        assertThat(fromCurrentSession(SessionMessage.KeyRotate.class)).isEmpty();
        heartbeatReplyAt(Duration.ofSeconds(1));
        List<SessionMessage.KeyRotate> again = fromCurrentSession(SessionMessage.KeyRotate.class);
        assertThat(again).hasSize(1);
        assertThat(again.get(0).newKey()).as("the same new key").isEqualTo(newKey);
        heartbeatReplyAt(Duration.ofMinutes(2)); // the master dropped that ask unanswered (one a minute)
        assertThat(fromCurrentSession(SessionMessage.KeyRotate.class))
                .as("asked again")
                .hasSize(2);
        master.reply(master.keyRotateReply(true, fingerprint, "key rotation accepted by an admin"));
        fixture.settle();
        assertThat(minion.status().fingerprint()).isEqualTo(fingerprint);
        assertThat(pkiDir.resolve(MinionKeyring.PENDING_FILE)).doesNotExist();
        assertThat(pkiDir.resolve(MinionKeyring.NEW_PRIVATE_FILE)).doesNotExist();
    }

    @Test
    void theMastersAskRotatesTheKeyItNamesOnlyAndAfterARefusalIsFollowedAnHourLaterAtTheSoonest() throws Exception {
        minion = fixture.start(master, MinionFixture.settings(false, Duration.ofDays(1)), null); // heartbeats by hand
        master.reply(master.accept(authRequest(1)));
        fixture.settle();
        String current = minion.status().fingerprint();
        master.reply(master.sealed(new SessionMessage.KeyRotateAsk(Fingerprints.of(STRANGER.getPublic()))));
        fixture.settle();
        assertThat(master.received(SessionMessage.KeyRotate.class))
                .as("an ask for another key")
                .isEmpty();
        master.reply(master.sealed(new SessionMessage.KeyRotateAsk(current)));
        fixture.settle();
        assertThat(master.received(SessionMessage.KeyRotate.class)).hasSize(1);
        master.reply(master.sealed(new SessionMessage.KeyRotateAsk(current)));
        fixture.settle();
        assertThat(master.received(SessionMessage.KeyRotate.class))
                .as("asked again while unanswered")
                .hasSize(1);
        String refusedKey = Fingerprints.of(RsaKeys.publicKeyFromDer(
                master.received(SessionMessage.KeyRotate.class).get(0).newKey()));
        master.reply(master.keyRotateReply(false, refusedKey, "the new key is held by another id"));
        fixture.settle();
        assertThat(pkiDir.resolve(MinionKeyring.NEW_PRIVATE_FILE))
                .as("the refused key dropped")
                .doesNotExist();
        fixture.advance(Duration.ofMinutes(59));
        master.reply(master.sealed(new SessionMessage.KeyRotateAsk(current)));
        fixture.settle();
        assertThat(master.received(SessionMessage.KeyRotate.class))
                .as("refused less than an hour ago")
                .hasSize(1);
        fixture.advance(Duration.ofMinutes(1));
        master.reply(master.sealed(new SessionMessage.KeyRotateAsk(current)));
        fixture.settle();
        List<SessionMessage.KeyRotate> asked = master.received(SessionMessage.KeyRotate.class);
        assertThat(asked).as("an hour after the refusal").hasSize(2);
        String fingerprint =
                Fingerprints.of(RsaKeys.publicKeyFromDer(asked.get(1).newKey()));
        master.reply(master.keyRotateReply(true, fingerprint, "rotated"));
        fixture.settle();
        assertThat(minion.status().fingerprint()).isEqualTo(fingerprint);
        master.reply(master.sealed(new SessionMessage.KeyRotateAsk(current)));
        fixture.settle();
        assertThat(master.received(SessionMessage.KeyRotate.class))
                .as("a stale ask for the retired key")
                .hasSize(2);
    }

    /** Moves time by {@code after}, then answers a heartbeat. */
    private void heartbeatReplyAt(Duration after) {
        fixture.advance(after);
        master.reply(master.sealed(new SessionMessage.HeartbeatReply(master.generation)));
        fixture.settle();
    }

    // ---- returns ----

    private static SessionMessage.Return ret(String jid) {
        return new SessionMessage.Return(jid, "test.ping", true, 0, true, 3);
    }

    @Test
    void aReturnIsResentUntilAcknowledged() throws Exception {
        startAccepted();
        minion.submitReturn(ret("j1"));
        fixture.settle();
        assertThat(master.received(SessionMessage.Return.class)).hasSize(1);
        // Unacknowledged, it goes again once the retry delay (5 s) has passed on the minion's clock, not before.
        fixture.advance(Duration.ofMillis(4_999));
        assertThat(master.received(SessionMessage.Return.class)).hasSize(1);
        fixture.advance(Duration.ofMillis(1));
        assertThat(master.received(SessionMessage.Return.class)).hasSize(2);
        master.reply(master.sealed(new SessionMessage.Ack(List.of("j1"))));
        barrier();
        fixture.advance(Duration.ofMinutes(10));
        assertThat(master.received(SessionMessage.Return.class)).containsExactly(ret("j1"), ret("j1"));
    }

    @Test
    void unacknowledgedReturnsAreResealedUnderTheNewSession() throws Exception {
        startAccepted();
        minion.submitReturn(ret("j1"));
        fixture.settle();
        assertThat(master.received(SessionMessage.Return.class)).hasSize(1);
        master.reply(master.sessionUnknown(master.lastCounterFromMinion(), MASTER.getPrivate()));
        fixture.advance(Duration.ofSeconds(2));
        master.reply(master.accept(authRequest(2)));
        fixture.settle();
        assertThat(fromCurrentSession(SessionMessage.Return.class)).containsExactly(ret("j1"));
    }

    private static byte[] fromHex(String hex) {
        return HexFormat.of().parseHex(hex);
    }
}

package io.brine.minion;

import io.brine.protocol.testing.MovableClock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeout;
import static org.awaitility.Awaitility.await;

import io.brine.minion.auth.MasterPin;
import io.brine.minion.auth.MinionKeys;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.SessionKey;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.TestKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The minion against a {@link FakeMaster}: every check of the auth, publication and session paths (PROTOCOL.md
 * sections 8.2 to 8.6), each pinned by handing the minion one frame that is wrong in one way. A frame the minion
 * must drop is followed by a barrier (a grains report through the minion's one event thread), so "dropped" is
 * checked after the frame was handled, without sleeping.
 */
class MinionProtocolTest {

    private static final Duration AWAIT = Duration.ofSeconds(10);
    private static final KeyPair MASTER = TestKeys.pair(100);
    private static final KeyPair MINION = TestKeys.pair(101);
    private static final KeyPair STRANGER = TestKeys.pair(102);
    private static final KeyPair OTHER_MASTER = TestKeys.pair(103);
    private static final SecureRandom RANDOM = new SecureRandom();

    @TempDir
    Path pkiDir;

    private final MovableClock clock = new MovableClock(Instant.now());
    private final FakeMaster master = new FakeMaster(MASTER, clock);
    private final List<String> ran = new CopyOnWriteArrayList<>();
    private Minion minion;
    private int barriers;
    private long floor;
    private long generation;

    @AfterEach
    void stop() {
        if (minion != null) {
            minion.close();
        }
        assertThat(master.unreadable()).as("frames from the minion the master could not read").isEmpty();
    }

    // ---- set-up ----

    /** Awaitility with this class's one timeout, polling often: the minion answers within milliseconds. */
    private static ConditionFactory waiting() {
        return await().atMost(AWAIT).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10));
    }

    /** acceptance_wait_time 200 ms, so tests of a retry are quick; auth timeout 30 s; heartbeats hourly. */
    private Minion.Settings settings(String masterFinger, boolean rejectedRetry) {
        return settings(masterFinger, rejectedRetry, Duration.ofMillis(200));
    }

    private Minion.Settings settings(String masterFinger, boolean rejectedRetry, Duration acceptanceWait) {
        return new Minion.Settings("web1", pkiDir, 2048, masterFinger, acceptanceWait, acceptanceWait.multipliedBy(2),
                rejectedRetry, Duration.ofSeconds(30), Duration.ofHours(1), null, Map.of("role", "web"), null, null,
                16, Duration.ofMinutes(1));
    }

    private void start(Minion.Settings settings) throws Exception {
        AtomicFiles.ensureDirectory(pkiDir);
        AtomicFiles.write(pkiDir.resolve(MinionKeys.PRIVATE_FILE), Pem.bytes(TestKeys.privatePem(101)),
                AtomicFiles.OWNER_READ);
        minion = new Minion(settings, master, clock, load -> ran.add(load.jid()));
        minion.start();
        floor = master.serialFloor;
        generation = master.generation;
    }

    private void startAccepted() throws Exception {
        start(settings(null, false));
        master.reply(master.accept(authRequest(1)));
        waiting().until(() -> minion.state() == MinionState.ACCEPTED);
        // The first thing an accepted minion sends is its grains (counter 1).
        waiting().until(() -> !master.received(SessionMessage.Grains.class).isEmpty());
    }

    /** The {@code n}th auth request (from 1), once the minion has sent it. */
    private AuthRequest authRequest(int n) {
        waiting().until(() -> master.authRequests().size() >= n);
        return master.authRequests().get(n - 1);
    }

    /**
     * Waits until the minion's event thread has handled everything handed to it before: a grains report goes
     * through the same thread and needs the session, so this also checks the session is still there.
     */
    private void barrier() {
        long n = ++barriers; // integers come back from the wire as longs
        minion.reportGrains(Map.of("barrier", n));
        waiting().until(() -> master.received(SessionMessage.Grains.class).stream()
                .anyMatch(g -> Long.valueOf(n).equals(g.grains().get("barrier"))));
    }

    private static AuthRequest withNonce(AuthRequest request, byte[] nonce) {
        return new AuthRequest(request.suite(), request.id(), request.publicKey(), nonce, request.timestampMs(),
                request.claims(), request.grant(), request.token());
    }

    private static byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    private <T extends SessionMessage> List<T> fromCurrentSession(Class<T> type) {
        String session = master.currentSession();
        return master.fromMinion().stream().filter(m -> m.session().equals(session)).map(FakeMaster.FromMinion::message)
                .filter(type::isInstance).map(type::cast).toList();
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
        start(settings(null, false));
        AuthRequest request = authRequest(1);
        master.reply(master.accept(withNonce(request, randomBytes(32))));
        // Handled in order on the minion's event thread: had the first been taken, this one would be stale.
        master.reply(master.refuse(request, AuthStatus.PENDING, "waiting for an admin"));
        waiting().until(() -> minion.state() == MinionState.PENDING);
        assertThat(master.subscriptions()).isEmpty();
        assertThat(master.fromMinion()).isEmpty();
    }

    @Test
    void anAuthReplyNotSignedByTheKeyItCarriesIsIgnored() throws Exception {
        start(settings(null, false));
        AuthRequest request = authRequest(1);
        AuthReply forged = new AuthReply(Suite.RSA_OAEP_PSS_AES256GCM, AuthStatus.REJECTED, request.nonce(),
                clock.millis(), MASTER.getPublic().getEncoded(), "forged", 0, null);
        master.reply(FakeMaster.authReply(forged, STRANGER.getPrivate()));
        master.reply(master.accept(request));
        waiting().until(() -> minion.state() == MinionState.ACCEPTED);
        assertThat(minion.terminated()).isNotDone();
    }

    @Test
    void anAuthReplyWithAFarOffClockIsARefusalAndPinsNothing() throws Exception {
        start(settings(null, false));
        AuthRequest request = authRequest(1);
        master.reply(master.accept(request, clock.millis() - Duration.ofMinutes(10).toMillis()));
        // Not accepted: it asks again after its back-off (acceptance_wait_time).
        AuthRequest again = authRequest(2);
        assertThat(again.nonce()).isNotEqualTo(request.nonce());
        assertThat(minion.state()).isNotEqualTo(MinionState.ACCEPTED);
        assertThat(master.subscriptions()).isEmpty();
        assertThat(pkiDir.resolve(MasterPin.FILE)).doesNotExist();
        master.reply(master.accept(again));
        waiting().until(() -> minion.state() == MinionState.ACCEPTED);
    }

    @Test
    void aChangedMasterKeyAfterPinningStopsTheMinion() throws Exception {
        startAccepted();
        master.reply(master.sessionUnknown(master.lastCounterFromMinion(), MASTER.getPrivate()));
        AuthRequest again = authRequest(2);
        FakeMaster impostor = new FakeMaster(OTHER_MASTER, clock);
        master.reply(impostor.accept(again));
        assertThat(minion.terminated()).succeedsWithin(AWAIT).isEqualTo(MinionState.MASTER_KEY_MISMATCH);
        assertThat(minion.state()).isEqualTo(MinionState.MASTER_KEY_MISMATCH);
        assertThat(Files.readString(pkiDir.resolve(MasterPin.FILE))).isEqualTo(Pem.publicKeySpki(MASTER.getPublic()));
        assertThat(master.subscriptions()).hasSize(1);
    }

    @Test
    void aMasterFingerMismatchOnFirstContactStopsTheMinion() throws Exception {
        start(settings(Fingerprints.of(OTHER_MASTER.getPublic()), false));
        master.reply(master.accept(authRequest(1)));
        assertThat(minion.terminated()).succeedsWithin(AWAIT).isEqualTo(MinionState.MASTER_KEY_MISMATCH);
        assertThat(pkiDir.resolve(MasterPin.FILE)).doesNotExist();
        assertThat(master.subscriptions()).isEmpty();
    }

    @Test
    void aMatchingMasterFingerIsTrustedOnFirstContact() throws Exception {
        start(settings(Fingerprints.of(MASTER.getPublic()), false));
        master.reply(master.accept(authRequest(1)));
        waiting().until(() -> minion.state() == MinionState.ACCEPTED);
        assertThat(pkiDir.resolve(MasterPin.FILE)).exists();
    }

    @Test
    void aRejectedMinionStopsWithoutRejectedRetry() throws Exception {
        start(settings(null, false));
        master.reply(master.refuse(authRequest(1), AuthStatus.REJECTED, "rejected by an admin"));
        assertThat(minion.terminated()).succeedsWithin(AWAIT).isEqualTo(MinionState.REJECTED);
        assertThat(minion.status().reason()).isEqualTo("rejected by an admin");
    }

    @Test
    void aRejectedMinionAsksAgainWithRejectedRetry() throws Exception {
        start(settings(null, true));
        master.reply(master.refuse(authRequest(1), AuthStatus.REJECTED, "rejected by an admin"));
        waiting().until(() -> minion.state() == MinionState.REJECTED);
        authRequest(2);
        assertThat(minion.terminated()).isNotDone();
    }

    @Test
    void aPendingMinionAsksAgainAfterTheAcceptanceWait() throws Exception {
        start(settings(null, false, Duration.ofSeconds(1)));
        AuthRequest first = authRequest(1);
        master.reply(master.refuse(first, AuthStatus.PENDING, "waiting for an admin"));
        waiting().until(() -> minion.state() == MinionState.PENDING);
        assertThat(minion.status().nextAttempt()).isNotNull();
        // acceptance_wait_time is 1 s (plus up to 25 % jitter).
        waiting().atLeast(Duration.ofMillis(800)).until(() -> master.authRequests().size() == 2);
        AuthRequest second = master.authRequests().get(1);
        assertThat(second.nonce()).isNotEqualTo(first.nonce());
        master.reply(master.accept(second));
        waiting().until(() -> minion.state() == MinionState.ACCEPTED);
    }

    @Test
    void closingDoesNotWaitForAPendingAuthTimeout() throws Exception {
        start(settings(null, false)); // the auth timeout, 30 s away, is pending
        authRequest(1);
        assertTimeout(Duration.ofSeconds(3), minion::close);
        assertThat(minion.terminated()).isCompletedWithValue(MinionState.STOPPED);
        assertThat(minion.state()).isEqualTo(MinionState.STOPPED);
    }

    // ---- publications ----

    @Test
    void aValidPublicationRunsOnce() throws Exception {
        startAccepted();
        master.publish(master.publication(floor + 1, "j1"));
        waiting().until(() -> ran.contains("j1"));
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
        master.publish(FakeMaster.publication(master.publishKey, generation, floor + 1, "forged",
                STRANGER.getPrivate()));
        master.publish(master.publication(floor + 2, "j2"));
        barrier();
        assertThat(ran).containsExactly("j2");
    }

    @Test
    void aPublicationSealedWithAnotherPublishKeyIsDropped() throws Exception {
        startAccepted();
        master.publish(FakeMaster.publication(SessionKey.random(), generation, floor + 1, "wrong-key",
                MASTER.getPrivate()));
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
        master.publish(FakeMaster.publication(next, generation + 1, floor + 1, "j1", MASTER.getPrivate()));
        master.publish(FakeMaster.publication(next, generation + 1, floor + 2, "j2", MASTER.getPrivate()));
        barrier();
        assertThat(ran).isEmpty();
        // One key request for the generation, however many publications wait for it.
        assertThat(master.received(SessionMessage.KeyRequest.class)).extracting(SessionMessage.KeyRequest::generation)
                .containsExactly(generation + 1);
        master.reply(master.sealed(new SessionMessage.KeyUpdate(generation + 1, next.bytes(), floor)));
        waiting().until(() -> ran.size() == 2);
        assertThat(ran).containsExactly("j1", "j2");
        assertThat(minion.status().generation()).isEqualTo(generation + 1);
    }

    @Test
    void aHeartbeatReplyNamingANewerGenerationMakesTheMinionAskForIt() throws Exception {
        startAccepted();
        master.reply(master.sealed(new SessionMessage.HeartbeatReply(generation + 3)));
        waiting().until(() -> !master.received(SessionMessage.KeyRequest.class).isEmpty());
        assertThat(master.received(SessionMessage.KeyRequest.class).get(0).generation()).isEqualTo(generation + 3);
    }

    // ---- sessions ----

    @Test
    void aSessionUnknownFromTheMasterMakesTheMinionAuthenticateAgain() throws Exception {
        startAccepted();
        String first = master.currentSession();
        master.reply(master.sessionUnknown(master.lastCounterFromMinion(), MASTER.getPrivate()));
        master.reply(master.accept(authRequest(2)));
        waiting().until(() -> minion.state() == MinionState.ACCEPTED
                && !fromCurrentSession(SessionMessage.Grains.class).isEmpty());
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
        byte[] stale = FakeMaster.sessionUnknown(fromHex(master.currentSession()), sent,
                clock.millis() - Duration.ofMinutes(10).toMillis(), MASTER.getPrivate());
        master.reply(stale);
        barrier();
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
        assertThat(master.authRequests()).hasSize(1);
    }

    @Test
    void aReconnectSendsAHeartbeatAtOnce() throws Exception {
        startAccepted();
        master.reconnected();
        waiting().until(() -> !master.received(SessionMessage.Heartbeat.class).isEmpty());
        assertThat(master.received(SessionMessage.Heartbeat.class).get(0).generation()).isEqualTo(generation);
    }

    // ---- returns ----

    private static SessionMessage.Return ret(String jid) {
        return new SessionMessage.Return(jid, "test.ping", true, 0, true, 3);
    }

    @Test
    void aReturnIsResentUntilAcknowledged() throws Exception {
        startAccepted();
        minion.submitReturn(ret("j1"));
        waiting().until(() -> master.received(SessionMessage.Return.class).size() == 1);
        // Unacknowledged, it goes again once the retry delay (5 s) has passed on the minion's clock.
        clock.advance(Duration.ofSeconds(6));
        waiting().until(() -> master.received(SessionMessage.Return.class).size() == 2);
        master.reply(master.sealed(new SessionMessage.Ack(List.of("j1"))));
        barrier();
        clock.advance(Duration.ofMinutes(10));
        // The minion checks for due returns every second: a check passes without a resend.
        waiting().during(Duration.ofMillis(1500))
                .until(() -> master.received(SessionMessage.Return.class).size() == 2);
        assertThat(master.received(SessionMessage.Return.class)).containsOnly(ret("j1"));
    }

    @Test
    void unacknowledgedReturnsAreResealedUnderTheNewSession() throws Exception {
        startAccepted();
        minion.submitReturn(ret("j1"));
        waiting().until(() -> master.received(SessionMessage.Return.class).size() == 1);
        master.reply(master.sessionUnknown(master.lastCounterFromMinion(), MASTER.getPrivate()));
        master.reply(master.accept(authRequest(2)));
        waiting().until(() -> fromCurrentSession(SessionMessage.Return.class).size() == 1);
        assertThat(fromCurrentSession(SessionMessage.Return.class)).containsExactly(ret("j1"));
    }

    private static byte[] fromHex(String hex) {
        return java.util.HexFormat.of().parseHex(hex);
    }
}

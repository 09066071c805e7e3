package io.brine.minion;

import static io.brine.minion.MinionFixture.ACCEPTANCE_WAIT;
import static io.brine.minion.MinionFixture.AUTH_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import io.brine.minion.FakeMaster.FailAt;
import io.brine.minion.auth.MasterPin;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.testing.TestKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The minion against a whole fake master that breaks the protocol once, at one step of {@link FailAt}, and behaves
 * from then on: one test per step, each naming what the minion does about it. Time is moved, never slept through.
 */
class MinionAgainstFailingMasterTest {

    private static final KeyPair MASTER = TestKeys.pair(100);

    @TempDir
    Path pkiDir;

    @AutoClose
    private MinionFixture fixture;

    private FakeMaster master;
    private Minion minion;

    @BeforeEach
    void setUp() {
        fixture = new MinionFixture(pkiDir);
    }

    private void start(FailAt step) throws Exception {
        start(step, false);
    }

    private void start(FailAt step, boolean pinned) throws Exception {
        master = FakeMaster.failingAt(step, MASTER, fixture.clock);
        if (pinned) {
            fixture.pin(MASTER);
        }
        minion = fixture.start(master, MinionFixture.settings(false), null);
    }

    private int authRequests() {
        fixture.settle();
        return master.authRequests().size();
    }

    private void assertAccepted() {
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
        assertThat(master.subscriptions()).isNotEmpty();
    }

    /** Not accepted, nothing subscribed, nothing pinned, and it has not stopped. */
    private void assertStillAsking(MinionState state) {
        fixture.settle();
        assertThat(minion.state()).isEqualTo(state);
        assertThat(master.subscriptions()).isEmpty();
        assertThat(minion.terminated()).isNotDone();
    }

    /** Times out the first request, then lets the back-off pass: the next request goes out then, not before. */
    private void timeOutAndBackOff() {
        fixture.advance(AUTH_TIMEOUT);
        assertThat(minion.status().reason()).isEqualTo("no answer from the master");
        backOff();
    }

    /** Lets one first back-off pass (acceptance_wait_time plus jitter), checking nobody asks a millisecond early. */
    private void backOff() {
        int before = authRequests();
        fixture.advance(ACCEPTANCE_WAIT.minusMillis(1));
        assertThat(authRequests()).as("asked again before acceptance_wait_time").isEqualTo(before);
        fixture.advancePast(Duration.ofMillis(1).plus(ACCEPTANCE_WAIT.dividedBy(4)));
        assertThat(authRequests()).isEqualTo(before + 1);
    }

    // ---- a master that never fails: the baseline the steps below break ----

    @Test
    void aMasterThatNeverFailsAcceptsRunsJobsAcknowledgesReturnsAndAnswersHeartbeats() throws Exception {
        start(FailAt.NEVER);
        assertAccepted();
        master.publishJob("j1");
        fixture.settle();
        assertThat(fixture.ran).containsExactly("j1");
        minion.submitReturn(new SessionMessage.Return("j1", "test.ping", true, 0, true, 1));
        fixture.advance(Duration.ofMinutes(10));
        assertThat(master.received(SessionMessage.Return.class))
                .as("acknowledged: never resent")
                .hasSize(1);
        fixture.advancePast(MinionFixture.HEARTBEAT);
        fixture.advance(AUTH_TIMEOUT);
        assertThat(master.received(SessionMessage.Heartbeat.class)).hasSize(1);
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
        assertThat(master.authRequests()).hasSize(1);
    }

    // ---- the auth reply ----

    @Test
    void anUnansweredRequestIsAskedAgainAfterTheAuthTimeoutAndTheBackoff() throws Exception {
        start(FailAt.AUTH_NO_ANSWER);
        fixture.advance(AUTH_TIMEOUT.minusMillis(1));
        assertThat(authRequests()).isEqualTo(1);
        assertStillAsking(MinionState.CONNECTING);
        assertThat(minion.status().reason()).isEqualTo("connecting to the master");
        assertThat(master.reconnects()).isZero();
        fixture.advance(Duration.ofMillis(1));
        assertThat(minion.status().reason()).isEqualTo("no answer from the master");
        assertThat(minion.status().nextAttempt()).isNotNull();
        assertThat(master.reconnects())
                .as("a new connection asked for, the old one may be half-open")
                .isEqualTo(1);
        backOff();
        assertAccepted();
    }

    @Test
    void aMasterThatWasUnreachableIsAskedAsSoonAsTheConnectionComesUp() throws Exception {
        start(FailAt.AUTH_NO_ANSWER);
        master.connectionUp = false;
        fixture.advance(AUTH_TIMEOUT);
        assertThat(master.reconnects()).isEqualTo(1);
        int before = authRequests();
        master.reconnected();
        fixture.advance(Duration.ofSeconds(1)); // reconnections' requests are spread over 1 s
        assertThat(authRequests())
                .as("asked when the connection came up, not after the back-off")
                .isEqualTo(before + 1);
        assertAccepted();
    }

    @Test
    void theNewConnectionAfterAnUnansweredRequestDoesNotCutTheBackoffShort() throws Exception {
        start(FailAt.AUTH_NO_ANSWER);
        fixture.advance(AUTH_TIMEOUT);
        assertThat(master.reconnects()).isEqualTo(1);
        master.reconnected();
        backOff();
        assertAccepted();
    }

    @Test
    void aReplyWithAnotherNonceIsIgnoredAndTheRequestTimesOut() throws Exception {
        start(FailAt.AUTH_WRONG_NONCE);
        assertStillAsking(MinionState.CONNECTING);
        timeOutAndBackOff();
        assertAccepted();
    }

    @Test
    void anUnsignedReplyIsDroppedAndNeverStopsAPinnedMinion() throws Exception {
        start(FailAt.AUTH_UNSIGNED, true);
        assertStillAsking(MinionState.CONNECTING);
        timeOutAndBackOff();
        assertAccepted();
    }

    @Test
    void aReplyNotSignedByTheKeyItCarriesIsDroppedAndPinsNothing() throws Exception {
        start(FailAt.AUTH_BAD_SIGNATURE);
        assertStillAsking(MinionState.CONNECTING);
        assertThat(pkiDir.resolve(MasterPin.FILE)).doesNotExist();
        timeOutAndBackOff();
        assertAccepted();
        assertThat(Files.readString(pkiDir.resolve(MasterPin.FILE))).isEqualTo(Pem.publicKeySpki(MASTER.getPublic()));
    }

    @Test
    void aReplyUnderAnotherMasterKeyIsShownAsAMismatchButNeverStopsAPinnedMinion() throws Exception {
        // Anybody on the path can send it: the nonce travels in clear, and the other key signs it well enough.
        start(FailAt.AUTH_OTHER_MASTER_KEY, true);
        fixture.settle();
        assertThat(minion.terminated()).isNotDone();
        assertThat(minion.state()).isEqualTo(MinionState.MASTER_KEY_MISMATCH);
        assertThat(minion.status().reason()).startsWith("master key changed");
        assertThat(master.subscriptions()).isEmpty();
        fixture.advance(AUTH_TIMEOUT);
        assertThat(minion.state())
                .as("shown while it lasts: no other reply came")
                .isEqualTo(MinionState.MASTER_KEY_MISMATCH);
        assertThat(minion.status().nextAttempt()).isNotNull();
        backOff();
        assertAccepted();
        assertThat(Files.readString(pkiDir.resolve(MasterPin.FILE))).isEqualTo(Pem.publicKeySpki(MASTER.getPublic()));
    }

    @Test
    void aRejectionTheMinionCannotAuthenticateKeepsItAskingLongerInsteadOfStopping() throws Exception {
        // Nothing pinned, no master_finger: a REJECTED reply verifies only with the key it carries itself.
        start(FailAt.AUTH_REJECTED);
        fixture.settle();
        assertThat(minion.terminated()).isNotDone();
        assertThat(minion.state()).isEqualTo(MinionState.REJECTED);
        Duration longer = ACCEPTANCE_WAIT.multipliedBy(Handshake.UNVERIFIED_REJECTION_FACTOR);
        fixture.advance(longer.minusMillis(1));
        assertThat(authRequests()).as("asked again before the longer back-off").isEqualTo(1);
        fixture.advancePast(longer);
        assertThat(authRequests()).isEqualTo(2);
        assertAccepted();
    }

    @Test
    void aPendingKeyIsAskedAgainAfterTheAcceptanceWait() throws Exception {
        start(FailAt.AUTH_PENDING);
        assertStillAsking(MinionState.PENDING);
        assertThat(minion.status().reason()).isEqualTo("waiting for an admin");
        assertThat(pkiDir.resolve(MasterPin.FILE))
                .as("a master that never accepted is not pinned")
                .doesNotExist();
        backOff();
        assertAccepted();
    }

    @Test
    void aFullMasterIsAskedAgainNoSoonerThanItsRetryAfter() throws Exception {
        start(FailAt.AUTH_FULL);
        assertStillAsking(MinionState.PENDING);
        Duration retryAfter = Duration.ofSeconds(FakeMaster.FULL_RETRY_AFTER_SECONDS);
        fixture.advance(retryAfter.minusMillis(1)); // well past the minion's own back-off
        assertThat(authRequests()).isEqualTo(1);
        fixture.advance(Duration.ofMillis(1));
        assertThat(authRequests()).isEqualTo(2);
        assertAccepted();
    }

    @Test
    void aRefusedRequestIsAskedAgainAfterTheAcceptanceWait() throws Exception {
        start(FailAt.AUTH_REFUSED);
        assertStillAsking(MinionState.PENDING);
        assertThat(minion.status().reason()).isEqualTo("rate limited");
        backOff();
        assertAccepted();
    }

    @Test
    void aDeniedMinionKeepsAskingForAnAdminToAct() throws Exception {
        start(FailAt.AUTH_DENIED);
        assertStillAsking(MinionState.DENIED);
        backOff();
        assertAccepted();
    }

    @Test
    void aPinnedMinionRejectedByItsMasterStopsAndAsksNoMore() throws Exception {
        start(FailAt.AUTH_REJECTED, true);
        fixture.settle();
        assertThat(minion.terminated()).isCompletedWithValue(MinionState.REJECTED);
        fixture.advance(Duration.ofHours(1));
        assertThat(authRequests()).isEqualTo(1);
        assertThat(minion.state()).isEqualTo(MinionState.REJECTED);
    }

    // ---- the session ----

    @Test
    void aConnectionDroppedAfterAcceptIsCheckedAtOnceAndAnUnansweredCheckEndsTheSession() throws Exception {
        start(FailAt.DROP_AFTER_ACCEPT);
        assertAccepted();
        assertThat(master.received(SessionMessage.Heartbeat.class))
                .as("a heartbeat as the connection came back")
                .hasSize(1);
        fixture.advance(AUTH_TIMEOUT.minusMillis(1));
        assertThat(minion.state()).isEqualTo(MinionState.ACCEPTED);
        assertThat(master.reconnects()).isZero();
        fixture.advance(Duration.ofMillis(1));
        assertThat(minion.state()).isEqualTo(MinionState.CONNECTING);
        assertThat(minion.status().reason()).isEqualTo("no answer from the master");
        assertThat(master.reconnects())
                .as("the unanswered heartbeat's connection replaced")
                .isEqualTo(1);
        fixture.advance(Duration.ofSeconds(2)); // re-auths after a lost session are spread over 2 s
        assertThat(authRequests()).isEqualTo(2);
        assertAccepted();
        assertThat(master.sessionsGranted()).isEqualTo(2);
    }

    @Test
    void aSessionUnknownFromARestartedMasterLeadsToANewSessionWithinTwoSeconds() throws Exception {
        start(FailAt.SESSION_UNKNOWN);
        fixture.settle();
        assertThat(minion.state()).isEqualTo(MinionState.CONNECTING);
        assertThat(minion.status().reason()).isEqualTo("master lost the session");
        fixture.advance(Duration.ofSeconds(2));
        assertAccepted();
        assertThat(master.sessionsGranted()).isEqualTo(2);
        // The new session starts its counters again at 1: its grains report.
        assertThat(master.lastCounterFromMinion()).isEqualTo(1);
    }

    @Test
    void anUnannouncedKeyUpdateIsInstalledAndTheGenerationBeforeItStillOpens() throws Exception {
        start(FailAt.KEY_UPDATE_UNANNOUNCED);
        assertAccepted();
        long announced = master.generation;
        assertThat(minion.status().generation()).isEqualTo(announced + 1);
        master.publishJob("j1");
        fixture.settle();
        assertThat(fixture.ran).containsExactly("j1");
        // Only two generations are kept: a second update retires the one the master still publishes under.
        master.reply(master.sealed(
                new SessionMessage.KeyUpdate(announced + 2, SessionKey.random().bytes(), master.serialFloor)));
        master.publishJob("j2");
        fixture.settle();
        assertThat(fixture.ran).containsExactly("j1");
        assertThat(master.received(SessionMessage.KeyRequest.class))
                .as("no key asked for an old generation")
                .isEmpty();
    }

    // ---- publications ----

    @Test
    void aPublicationAtTheSerialFloorIsDroppedAndTheNextOneRuns() throws Exception {
        start(FailAt.PUBLISH_STALE_SERIAL);
        assertAccepted();
        master.publishJob("stale");
        master.publishJob("j2");
        fixture.settle();
        assertThat(fixture.ran).containsExactly("j2");
    }

    @Test
    void aPublicationReplayingASeenJidUnderANewSerialIsDropped() throws Exception {
        start(FailAt.PUBLISH_REPLAYED_JID);
        assertAccepted();
        master.publishJob("j1");
        master.publishJob("j2"); // goes out as j1 again
        master.publishJob("j3");
        fixture.settle();
        assertThat(fixture.ran).containsExactly("j1", "j3");
    }

    @Test
    void aPublicationOfAGenerationWithoutAKeyWaitsAsksOnceAndNeverRuns() throws Exception {
        start(FailAt.PUBLISH_UNKNOWN_GENERATION);
        assertAccepted();
        master.publishJob("future");
        master.publishJob("j2");
        fixture.settle();
        assertThat(fixture.ran).containsExactly("j2");
        assertThat(master.received(SessionMessage.KeyRequest.class))
                .extracting(SessionMessage.KeyRequest::generation)
                .containsExactly(master.generation + 1);
        fixture.advance(Duration.ofMinutes(10));
        assertThat(fixture.ran).containsExactly("j2");
        assertThat(master.received(SessionMessage.KeyRequest.class)).hasSize(1);
    }

    @Test
    void aPublicationWithheldPastPublishMaxAgeAndDeliveredAfterARotationIsNotRun() throws Exception {
        start(FailAt.NEVER);
        assertAccepted();
        long generation = master.generation;
        byte[] withheld = master.nextPublication("withheld"); // signed now, held back on the way
        fixture.advance(MinionFixture.PUBLISH_MAX_AGE.plusSeconds(1));
        // A rotation: the minion keeps the generation before it, for publications still in flight.
        master.reply(master.sealed(
                new SessionMessage.KeyUpdate(generation + 1, SessionKey.random().bytes(), master.serialFloor)));
        fixture.settle();
        assertThat(minion.status().generation()).isEqualTo(generation + 1);
        master.publish(withheld);
        master.publish(withheld); // a replay of it is a replay: refused, and not counted twice
        fixture.settle();
        assertThat(fixture.ran).isEmpty();
        assertThat(minion.status().stalePublications()).isEqualTo(1);
        // One signed just now, of the generation before, still runs.
        master.publish(master.nextPublication("fresh"));
        fixture.settle();
        assertThat(fixture.ran).containsExactly("fresh");
    }

    @Test
    void aPublicationIssuedFurtherAheadThanTheClockSkewIsNotRun() throws Exception {
        start(FailAt.NEVER);
        assertAccepted();
        fixture.clock.advance(Duration.ofMinutes(6)); // the master's clock runs ahead: ours is set back
        byte[] ahead = master.nextPublication("ahead");
        fixture.clock.advance(Duration.ofMinutes(-6));
        master.publish(ahead);
        fixture.settle();
        assertThat(fixture.ran).isEmpty();
        assertThat(minion.status().stalePublications()).isEqualTo(1);
    }
}

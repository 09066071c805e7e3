package io.brine.master.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionFrame.Direction;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionUnknown;
import io.brine.protocol.testing.TestKeys;
import io.brine.transport.Peer;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The session frames the master's workers open (PROTOCOL.md 8.4), over the objects alone: no transport, no daemon.
 * What a minion's session sends is authentic only under its own request key, once, in its direction; anything else
 * is dropped with a reason the dispatcher can log once per source.
 */
class SessionServiceTest {

    private static final KeyPair MASTER = TestKeys.pair(140);
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-28T19:00:00Z"), ZoneOffset.UTC);
    private static final Peer PEER = () -> "10.0.0.7";

    private final SessionTable sessions = new SessionTable();
    private final PublishKeyring keyring = new PublishKeyring(CLOCK);
    private final SessionService service = new SessionService(sessions, keyring, MASTER::getPrivate, CLOCK);
    private final MinionSession web1 =
            sessions.open("web1", (RSAPublicKey) TestKeys.pair(0).getPublic(), PEER, CLOCK.millis());

    private static SessionFrame sealed(
            Session session, SessionKey key, Direction direction, long counter, SessionMessage message) {
        return Sessions.seal(key, session.sessionId().bytes(), direction, counter, message);
    }

    private SessionFrame fromWeb1(long counter, SessionMessage message) {
        return sealed(web1, web1.requestKey(), Direction.MINION_TO_MASTER, counter, message);
    }

    @Test
    void aFrameSealedUnderTheSessionsKeyIsAuthenticAndNamesItsSession() {
        SessionService.Opened opened = service.open(PEER, fromWeb1(1, new SessionMessage.Heartbeat(0)));

        assertThat(opened).isInstanceOfSatisfying(SessionService.Opened.Authentic.class, authentic -> {
            assertThat(authentic.session()).isSameAs(web1);
            assertThat(authentic.message()).isEqualTo(new SessionMessage.Heartbeat(0));
        });
    }

    @Test
    void eachCounterIsTakenOnceAndAnOlderOneStillInTheWindowOnce() {
        assertThat(service.open(PEER, fromWeb1(5, new SessionMessage.Heartbeat(0))))
                .isInstanceOf(SessionService.Opened.Authentic.class);
        assertThat(service.open(PEER, fromWeb1(5, new SessionMessage.Heartbeat(0))))
                .isEqualTo(new SessionService.Opened.Dropped(web1 + ": a replayed session frame"));
        assertThat(service.open(PEER, fromWeb1(3, new SessionMessage.Heartbeat(0))))
                .isInstanceOf(SessionService.Opened.Authentic.class);
        assertThat(service.open(PEER, fromWeb1(3, new SessionMessage.Heartbeat(0))))
                .isInstanceOf(SessionService.Opened.Dropped.class);
    }

    @Test
    void aFrameUnderAnotherKeyOrDamagedIsDroppedAndDoesNotSpendItsCounter() {
        SessionFrame forged =
                sealed(web1, SessionKey.random(), Direction.MINION_TO_MASTER, 1, new SessionMessage.Heartbeat(0));
        SessionFrame genuine = fromWeb1(2, new SessionMessage.Heartbeat(0));
        byte[] box = genuine.box().clone();
        box[box.length - 1] ^= 1;
        SessionFrame damaged = new SessionFrame(genuine.sessionId(), genuine.direction(), genuine.counter(), box);

        String reason = web1 + ": a session frame that does not open (forged, damaged or malformed)";
        assertThat(service.open(PEER, forged)).isEqualTo(new SessionService.Opened.Dropped(reason));
        assertThat(service.open(PEER, damaged)).isEqualTo(new SessionService.Opened.Dropped(reason));
        assertThat(service.open(PEER, fromWeb1(1, new SessionMessage.Heartbeat(0))))
                .isInstanceOf(SessionService.Opened.Authentic.class);
        assertThat(service.open(PEER, genuine)).isInstanceOf(SessionService.Opened.Authentic.class);
    }

    @Test
    void theMastersOwnFramesReflectedBackAreDropped() {
        SessionFrame reflected =
                sealed(web1, web1.requestKey(), Direction.MASTER_TO_MINION, 1, new SessionMessage.HeartbeatReply(0));

        assertThat(service.open(PEER, reflected))
                .isEqualTo(new SessionService.Opened.Dropped("a session frame that is not minion-to-master"));
    }

    @Test
    void aFrameOfASessionTheMasterDoesNotHoldIsUnknownAndAnsweredSignedWithItsIdAndCounter() {
        SessionFrame frame = fromWeb1(7, new SessionMessage.Heartbeat(0));
        sessions.remove(web1);

        SessionService.Opened opened = service.open(PEER, frame);

        assertThat(opened).isEqualTo(new SessionService.Opened.Unknown(frame));
        byte[] answer = service.unknown((SessionService.Opened.Unknown) opened);
        Decoded decoded = Codec.decode(answer, Integer.MAX_VALUE);
        assertThat(decoded).isInstanceOfSatisfying(Decoded.Ok.class, ok -> {
            assertThat(ok.verify(MASTER.getPublic())).isTrue();
            assertThat(ok.verify(TestKeys.pair(0).getPublic())).isFalse();
            SessionUnknown unknown = (SessionUnknown) ok.message();
            assertThat(unknown.sessionId()).isEqualTo(frame.sessionId());
            assertThat(unknown.counter()).isEqualTo(7);
            assertThat(unknown.timestampMs()).isEqualTo(CLOCK.millis());
        });
    }

    @Test
    void aHeartbeatIsAnsweredWithTheGenerationAndTheKeyOnlyWhenTheMinionHoldsAnother() {
        long current = keyring.current().number();

        assertThat(service.heartbeat(new SessionMessage.Heartbeat(current)))
                .containsExactly(new SessionMessage.HeartbeatReply(current));

        keyring.rotate();
        List<SessionMessage> stale = service.heartbeat(new SessionMessage.Heartbeat(current));
        assertThat(stale).hasSize(2);
        assertThat(stale.get(0)).isEqualTo(new SessionMessage.HeartbeatReply(current + 1));
        assertThat(stale.get(1))
                .isInstanceOfSatisfying(
                        SessionMessage.KeyUpdate.class,
                        update -> assertThat(update.generation()).isEqualTo(current + 1));
    }

    @Test
    void aKeyRequestIsAnsweredWithTheCurrentGenerationNeverAnOlderOne() {
        long first = keyring.current().number();
        keyring.rotate();

        assertThat(service.keyRequest().generation()).isEqualTo(first + 1);
    }
}

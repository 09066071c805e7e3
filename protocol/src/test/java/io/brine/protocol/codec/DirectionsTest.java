package io.brine.protocol.codec;

import static io.brine.protocol.message.SessionFrame.Direction.MASTER_TO_MINION;
import static io.brine.protocol.message.SessionFrame.Direction.MINION_TO_MASTER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.Message;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.testing.TestKeys;
import java.security.PrivateKey;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Each message travels one way; arriving the other way it is malformed (PROTOCOL.md 5). */
class DirectionsTest {

    private static final PrivateKey KEY = TestKeys.pair(0).getPrivate();
    private static final List<Class<? extends SessionMessage>> RECEIVERS = List.of(
            SessionMessage.FromMinion.class,
            SessionMessage.FromPublisher.class,
            SessionMessage.ToMinion.class,
            SessionMessage.ToPublisher.class);

    private static byte[] encode(Message message) {
        return message.type().signed() ? Codec.encodeSigned(message, KEY) : Codec.encode(message);
    }

    private static SessionFrame sessionFrame(SessionFrame.Direction direction) {
        return new SessionFrame(Samples.SID, direction, 7, Samples.filled(28, 0xaa));
    }

    @Test
    void aFrameTheMasterSendsIsMalformedArrivingAtTheMaster() {
        for (Message fromMaster : List.of(
                Samples.authReplyAccepted(),
                Samples.publish(),
                Samples.sessionUnknown(),
                sessionFrame(MASTER_TO_MINION))) {
            byte[] frame = encode(fromMaster);
            assertThat(Codec.decode(frame, FrameLimits.MAX_FRAME, MINION_TO_MASTER))
                    .as("%s", fromMaster)
                    .isInstanceOfSatisfying(
                            Decoded.Malformed.class,
                            malformed -> assertThat(malformed.reason())
                                    .containsAnyOf(
                                            "does not travel MINION_TO_MASTER", "expected direction MINION_TO_MASTER"));
            assertThat(Codec.decode(frame, FrameLimits.MAX_FRAME, MASTER_TO_MINION))
                    .isInstanceOfSatisfying(
                            Decoded.Ok.class, ok -> assertThat(ok.message()).isInstanceOf(Message.ToPeer.class));
        }
    }

    @Test
    void aFrameForTheMasterIsMalformedArrivingAtAMinionOrPublisher() {
        for (Message toMaster : List.of(Samples.authRequest(), Samples.clientAuth(), sessionFrame(MINION_TO_MASTER))) {
            byte[] frame = encode(toMaster);
            assertThat(Codec.decode(frame, FrameLimits.MAX_FRAME, MASTER_TO_MINION))
                    .as("%s", toMaster)
                    .isInstanceOfSatisfying(
                            Decoded.Malformed.class,
                            malformed -> assertThat(malformed.reason())
                                    .containsAnyOf(
                                            "does not travel MASTER_TO_MINION", "expected direction MASTER_TO_MINION"));
            assertThat(Codec.decode(frame, FrameLimits.MAX_FRAME, MINION_TO_MASTER))
                    .isInstanceOfSatisfying(
                            Decoded.Ok.class, ok -> assertThat(ok.message()).isInstanceOf(Message.ToMaster.class));
        }
    }

    /** From a minion, from a publisher, to a minion, to a publisher: each receiver opens its own direction only. */
    @Test
    void aSessionMessageOpensOnlyForTheReceiverItsDirectionNames() throws Exception {
        SessionKey key = SessionKey.random();
        long counter = 1;
        for (SessionMessage message : Samples.innerMessages()) {
            SessionFrame frame = Sessions.seal(key, Samples.SID, Sessions.direction(message), counter++, message);
            for (Class<? extends SessionMessage> receiver : RECEIVERS) {
                if (receiver.isInstance(message)) {
                    assertThat(Sessions.open(key, frame, receiver))
                            .usingRecursiveComparison()
                            .isEqualTo(message);
                } else {
                    assertThatThrownBy(() -> Sessions.open(key, frame, receiver))
                            .as("%s at %s", message, receiver.getSimpleName())
                            .isInstanceOf(MalformedException.class);
                }
            }
        }
        // A publisher's heartbeat is a minion's too; a publisher's request is not.
        SessionFrame publish = Sessions.seal(
                key,
                Samples.SID,
                MINION_TO_MASTER,
                counter,
                new SessionMessage.PublishRequest("glob", "*", "test.ping", List.of(), Map.of(), 5));
        assertThatThrownBy(() -> Sessions.open(key, publish, SessionMessage.FromMinion.class))
                .isInstanceOf(MalformedException.WrongDirection.class)
                .hasMessage("PUBLISH_REQUEST does not travel in a minion's session");
    }

    @Test
    void aResumptionFrameIsMalformedArrivingTheOtherWay() throws Exception {
        byte[] nonce = Samples.seq(32);
        byte[] box = Samples.filled(40, 0xaa);
        byte[] reply = Resumptions.encode(new Resumption.Reply(nonce, null));
        byte[] ticket = Resumptions.encode(new Resumption.Ticket(Samples.SID, box));
        byte[] request = Resumptions.encode(new Resumption.Request("web1", box, nonce, 1, nonce));
        byte[] ticketRequest = Resumptions.encode(new Resumption.TicketRequest(Samples.SID, box));
        for (byte[] toMinion : List.of(reply, ticket)) {
            assertThatThrownBy(() -> Resumptions.decodeToMaster(toMinion))
                    .isInstanceOf(MalformedException.class)
                    .hasMessageContaining("does not travel to the master");
            assertThat(Resumptions.decodeToMinion(toMinion)).isInstanceOf(Resumption.ToMinion.class);
        }
        for (byte[] toMaster : List.of(request, ticketRequest)) {
            assertThatThrownBy(() -> Resumptions.decodeToMinion(toMaster))
                    .isInstanceOf(MalformedException.class)
                    .hasMessageContaining("does not travel to a minion");
            assertThat(Resumptions.decodeToMaster(toMaster)).isInstanceOf(Resumption.ToMaster.class);
        }
    }
}

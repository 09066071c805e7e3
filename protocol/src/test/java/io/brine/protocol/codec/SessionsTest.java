package io.brine.protocol.codec;

import static io.brine.protocol.codec.Samples.hex;
import static io.brine.protocol.message.SessionFrame.Direction.MASTER_TO_MINION;
import static io.brine.protocol.message.SessionFrame.Direction.MINION_TO_MASTER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.crypto.Aead;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import java.util.List;
import org.junit.jupiter.api.Test;

class SessionsTest {

    private final SessionKey key = SessionKey.random();
    private final SessionMessage.Heartbeat heartbeat = new SessionMessage.Heartbeat(4);
    private final SessionMessage.Ack ack = new SessionMessage.Ack(List.of("j1"));

    @Test
    void theAssociatedDataIsContextSessionIdDirectionAndCounter() {
        assertThat(hex(Sessions.associatedData(Samples.SID, MASTER_TO_MINION, 258)))
                .isEqualTo("6272696e652d73657373696f6e2d7631" + hex(Samples.SID) + "01" + "0000000000000102");
    }

    @Test
    void everyInnerMessageSealsAndOpensInItsDirection() throws Exception {
        long counter = 1;
        for (SessionMessage message : Samples.innerMessages()) {
            SessionFrame.Direction direction = Sessions.direction(message);
            SessionFrame frame = Sessions.seal(key, Samples.SID, direction, counter++, message);
            assertThat(frame.box()).hasSize(Codec.encodeInner(message).length + Aead.OVERHEAD);
            assertThat(Sessions.open(key, frame)).usingRecursiveComparison().isEqualTo(message);
        }
    }

    @Test
    void aSealedFrameSurvivesTheWire() throws Exception {
        SessionFrame frame = Sessions.seal(key, Samples.SID, MINION_TO_MASTER, 9, heartbeat);
        Decoded.Ok ok = (Decoded.Ok) Codec.decode(Codec.encode(frame), FrameLimits.MAX_FRAME);
        assertThat(Sessions.open(key, (SessionFrame) ok.message())).isEqualTo(heartbeat);
    }

    @Test
    void anotherKeyCannotOpen() {
        SessionFrame frame = Sessions.seal(key, Samples.SID, MINION_TO_MASTER, 1, heartbeat);
        assertThatThrownBy(() -> Sessions.open(SessionKey.random(), frame)).isInstanceOf(CryptoException.class);
    }

    @Test
    void aFrameReflectedInTheOtherDirectionDoesNotOpen() {
        SessionFrame frame = Sessions.seal(key, Samples.SID, MINION_TO_MASTER, 1, heartbeat);
        SessionFrame reflected = new SessionFrame(frame.sessionId(), MASTER_TO_MINION, 1, frame.box());
        assertThatThrownBy(() -> Sessions.open(key, reflected)).isInstanceOf(CryptoException.class);
    }

    @Test
    void aReceiverThatStatesItsDirectionRefusesItsOwnFramesReflectedBack() throws Exception {
        SessionFrame fromMaster = Sessions.seal(key, Samples.SID, MASTER_TO_MINION, 1, ack);
        // Sent back to the master unchanged, the frame is authentic and its type matches its direction field...
        assertThat(Sessions.open(key, fromMaster)).isEqualTo(ack);
        // ...so the master must say which direction it receives.
        assertThatThrownBy(() -> Sessions.open(key, fromMaster, MINION_TO_MASTER))
                .isInstanceOf(MalformedException.class)
                .hasMessage("SessionFrame: expected direction MINION_TO_MASTER, got MASTER_TO_MINION");
        assertThat(Sessions.open(key, fromMaster, MASTER_TO_MINION)).isEqualTo(ack);
    }

    @Test
    void anAlteredCounterOrSessionIdDoesNotOpen() {
        SessionFrame frame = Sessions.seal(key, Samples.SID, MASTER_TO_MINION, 5, ack);
        assertThatThrownBy(
                        () -> Sessions.open(key, new SessionFrame(frame.sessionId(), MASTER_TO_MINION, 6, frame.box())))
                .isInstanceOf(CryptoException.class);
        byte[] otherId = Samples.SID.clone();
        otherId[15] ^= 1;
        assertThatThrownBy(() -> Sessions.open(key, new SessionFrame(otherId, MASTER_TO_MINION, 5, frame.box())))
                .isInstanceOf(CryptoException.class);
        byte[] tampered = frame.box().clone();
        tampered[Aead.NONCE_LENGTH] ^= 1;
        assertThatThrownBy(() -> Sessions.open(key, new SessionFrame(Samples.SID, MASTER_TO_MINION, 5, tampered)))
                .isInstanceOf(CryptoException.class);
    }

    @Test
    void sealRefusesAMessageInTheWrongDirection() {
        assertThatThrownBy(() -> Sessions.seal(key, Samples.SID, MASTER_TO_MINION, 1, heartbeat))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("HEARTBEAT may not be sent MASTER_TO_MINION");
        assertThatThrownBy(() -> Sessions.seal(key, Samples.SID, MINION_TO_MASTER, 1, ack))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Sessions.seal(key, Samples.SID, MINION_TO_MASTER, 0, heartbeat))
                .hasMessageContaining("start at 1");
        assertThatThrownBy(() -> Sessions.seal(key, new byte[15], MINION_TO_MASTER, 1, heartbeat))
                .hasMessageContaining("16 bytes");
    }

    @Test
    void openRefusesAnAuthenticMessageInTheWrongDirection() {
        // A minion holds its request key, so it could seal an Ack "from itself to the master": refused on open.
        for (SessionMessage message : Samples.innerMessages()) {
            SessionFrame.Direction wrong =
                    Sessions.direction(message) == MINION_TO_MASTER ? MASTER_TO_MINION : MINION_TO_MASTER;
            SessionFrame frame = new SessionFrame(
                    Samples.SID,
                    wrong,
                    3,
                    Aead.seal(key, Sessions.associatedData(Samples.SID, wrong, 3), Codec.encodeInner(message)));
            assertThatThrownBy(() -> Sessions.open(key, frame))
                    .isInstanceOf(MalformedException.class)
                    .hasMessage(message.type() + " may not be sent " + wrong);
        }
    }

    @Test
    void openRefusesAnAuthenticPlaintextThatIsNotAnInnerMessage() {
        byte[] outer = Codec.encode(Samples.sessionFrame());
        SessionFrame frame = new SessionFrame(
                Samples.SID,
                MINION_TO_MASTER,
                1,
                Aead.seal(key, Sessions.associatedData(Samples.SID, MINION_TO_MASTER, 1), outer));
        assertThatThrownBy(() -> Sessions.open(key, frame))
                .isInstanceOf(MalformedException.class)
                .hasMessage("inner message: unknown type 0x4");
    }
}

package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.KeyRotations;
import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.TestKeys;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A simulated minion rotates its key and follows the master's as {@code brine-minion} does (the keyrotate and
 * masterkey scenarios): asked for its current key, it sends a request signed by both keys and switches only on the
 * pinned master's signed answer; shown a chain, it pins the new master key only when every step verifies.
 */
class SimMinionRotationTest {

    private static final byte[] SESSION_ID = new byte[16];
    private static KeyPair master;
    private static KeyPair first;
    private static KeyPair second;
    private static KeyPair stranger;

    private final RecordingTransport transport = new RecordingTransport();
    private final List<byte[]> sent = transport.sent;
    private final List<String> events = new ArrayList<>();
    private SessionKey requestKey;
    private long counter;
    private SimMinion minion;

    @BeforeAll
    static void keys() throws Exception {
        master = TestKeys.pair(0);
        first = TestKeys.pair(1);
        second = TestKeys.pair(2);
        stranger = TestKeys.pair(3);
    }

    @BeforeEach
    void accepted() throws Exception {
        minion = new SimMinion(7, "bench-00007", first, new CountingSwarm(), (RSAPublicKey) master.getPublic());
        minion.secondKey(second);
        minion.connect(transport);
        minion.sendAuth(System.nanoTime());
        Decoded.Ok request = (Decoded.Ok)
                Codec.decode(sent.get(sent.size() - 1), FrameLimits.MAX_FRAME, SessionFrame.Direction.MINION_TO_MASTER);
        requestKey = SessionKey.random();
        AuthReply reply = new AuthReply(
                Suite.RSA_OAEP_PSS_AES256GCM,
                AuthStatus.ACCEPTED,
                ((AuthRequest) request.message()).nonce(),
                System.currentTimeMillis(),
                master.getPublic().getEncoded(),
                "accepted",
                0,
                new AuthReply.Session(
                        SESSION_ID,
                        1,
                        Rsa.wrap(first.getPublic(), SessionKey.random().bytes()),
                        Rsa.wrap(first.getPublic(), requestKey.bytes()),
                        0,
                        0));
        transport.listener.onReply(Codec.encodeSigned(reply, master.getPrivate()));
        assertThat(minion.unwrap()).isTrue();
        sent.clear();
    }

    @Test
    void askedToRotateItSendsARequestSignedByBothKeysAndSwitchesOnTheMastersSignedAnswer() throws Exception {
        fromMaster(new SessionMessage.KeyRotateAsk(Fingerprints.of(first.getPublic())));

        assertThat(sent).hasSize(1);
        SessionMessage.KeyRotate request = (SessionMessage.KeyRotate) fromMinion(sent.get(0));
        byte[] signed = KeyRotations.request(
                SESSION_ID,
                "bench-00007",
                first.getPublic().getEncoded(),
                second.getPublic().getEncoded());
        assertThat(request.newKey()).isEqualTo(second.getPublic().getEncoded());
        assertThat(Rsa.verify(first.getPublic(), signed, request.oldSignature()))
                .isTrue();
        assertThat(Rsa.verify(second.getPublic(), signed, request.newSignature()))
                .isTrue();

        // Another ask while the request is outstanding sends nothing more; an answer not signed by the pinned master
        // key changes nothing.
        fromMaster(new SessionMessage.KeyRotateAsk(Fingerprints.of(first.getPublic())));
        fromMaster(answer(stranger, true));
        assertThat(sent).hasSize(1);
        assertThat(minion.keys()).isSameAs(first);
        assertThat(events).containsExactly("asked");

        fromMaster(answer(master, true));
        assertThat(minion.keys()).isSameAs(second);
        assertThat(events).containsExactly("asked", "rotated");
        // As brine-minion: its ticket named the old key; it asks for one naming the new key in the session.
        assertThat(sent).hasSize(2);
        assertThat(Resumptions.decode(sent.get(1))).isInstanceOf(Resumption.TicketRequest.class);

        // Its next auth offers the new key; an ask for the old key is stale and ignored.
        fromMaster(new SessionMessage.KeyRotateAsk(Fingerprints.of(first.getPublic())));
        minion.resetSession();
        minion.sendAuth(System.nanoTime());
        Decoded.Ok auth = (Decoded.Ok)
                Codec.decode(sent.get(sent.size() - 1), FrameLimits.MAX_FRAME, SessionFrame.Direction.MINION_TO_MASTER);
        assertThat(((AuthRequest) auth.message()).publicKey())
                .isEqualTo(second.getPublic().getEncoded());
        assertThat(sent).hasSize(3);
    }

    @Test
    void anUnansweredRequestIsSentAgainForTheSameKeyWhenAskedPastTheBoundAndEitherAnswerRotatesItOnce()
            throws Exception {
        minion.rotationResendAfter(Duration.ZERO);
        fromMaster(new SessionMessage.KeyRotateAsk(Fingerprints.of(first.getPublic())));
        fromMaster(new SessionMessage.KeyRotateAsk(Fingerprints.of(first.getPublic())));

        assertThat(sent).hasSize(2);
        assertThat(((SessionMessage.KeyRotate) fromMinion(sent.get(1))).newKey())
                .isEqualTo(second.getPublic().getEncoded());
        fromMaster(answer(master, true));
        fromMaster(answer(master, true));
        assertThat(minion.keys()).isSameAs(second);
        assertThat(events).containsExactly("asked", "rotated");
    }

    @Test
    void aRefusalKeepsTheKeyAndIsCounted() throws Exception {
        fromMaster(new SessionMessage.KeyRotateAsk(Fingerprints.of(first.getPublic())));
        fromMaster(answer(master, false));

        assertThat(minion.keys()).isSameAs(first);
        assertThat(events).containsExactly("asked", "refused: no");
    }

    @Test
    void itPinsTheNewMasterKeyOnlyWhenTheChainVerifiesFromItsPin() throws Exception {
        KeyPair next = TestKeys.pair(4);

        // Signed by a stranger, not by the pinned key: refused, the pin unchanged.
        fromMaster(succession(next, stranger));
        assertThat(minion.pinned()).isEqualTo(master.getPublic());
        assertThat(events).hasSize(1).first().asString().startsWith("chain refused: ");

        fromMaster(succession(next, master));
        assertThat(minion.pinned()).isEqualTo(next.getPublic());
        assertThat(events).last().isEqualTo("pinned");
    }

    /** The master key's chain of one record, from the pinned key to {@code next}, signed by {@code signer}. */
    private static SessionMessage.MasterKeySuccession succession(KeyPair next, KeyPair signer) {
        long now = System.currentTimeMillis();
        byte[] previous = master.getPublic().getEncoded();
        byte[] nextKey = next.getPublic().getEncoded();
        byte[] signed = MasterSuccessions.signedBytes(previous, nextKey, now, now + 60_000);
        return new SessionMessage.MasterKeySuccession(List.of(new MasterSuccession(
                previous, nextKey, now, now + 60_000, Rsa.sign(signer.getPrivate(), signed), null)));
    }

    private SessionMessage.KeyRotateReply answer(KeyPair signer, boolean rotated) {
        String fingerprint = Fingerprints.of(second.getPublic());
        String reason = rotated ? "rotated" : "no";
        return new SessionMessage.KeyRotateReply(
                rotated,
                fingerprint,
                reason,
                Rsa.sign(signer.getPrivate(), KeyRotations.reply(SESSION_ID, rotated, fingerprint, reason)));
    }

    private void fromMaster(SessionMessage message) {
        transport.listener.onReply(Codec.encode(
                Sessions.seal(requestKey, SESSION_ID, SessionFrame.Direction.MASTER_TO_MINION, ++counter, message)));
    }

    private SessionMessage fromMinion(byte[] frame) throws Exception {
        Decoded.Ok ok =
                (Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_FRAME, SessionFrame.Direction.MINION_TO_MASTER);
        return Sessions.open(requestKey, (SessionFrame) ok.message(), SessionMessage.FromMinion.class);
    }

    /** Checks the master's signatures as the worker does, and records what the minion reports of its rotations. */
    private final class CountingSwarm extends QuietSwarm {
        @Override
        public boolean verifiedByMaster(Decoded.Ok ok) {
            return ok.verify(master.getPublic());
        }

        @Override
        public boolean verifyReply(Decoded.Ok ok) {
            return ok.verify(master.getPublic());
        }

        @Override
        public void rotationAsked(BenchMinion minion, long nanos) {
            events.add("asked");
        }

        @Override
        public void keyRotated(BenchMinion minion, long askedNanos, long nanos) {
            events.add("rotated");
        }

        @Override
        public void rotationRefused(BenchMinion minion, String reason) {
            events.add("refused: " + reason);
        }

        @Override
        public void masterKeyPinned(BenchMinion minion, long nanos) {
            events.add("pinned");
        }

        @Override
        public void masterChainRefused(BenchMinion minion, String reason) {
            events.add("chain refused: " + reason);
        }
    }
}

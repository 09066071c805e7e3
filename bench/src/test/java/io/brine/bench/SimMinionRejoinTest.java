package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.TestKeys;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A simulated minion rejoins by itself when its connection comes back, as {@code brine-minion} does after a master
 * restart (the restart scenario): with its ticket, or in full when told not to use it, with no command from the
 * bench; and not at all when rejoining is off (every other scenario).
 */
class SimMinionRejoinTest {

    private static final byte[] SESSION_ID = new byte[16];
    /** A ticket as the master seals one (opaque to the minion; long enough to be one). */
    private static final byte[] TICKET = ticket((byte) 1);

    private static KeyPair master;
    private static KeyPair own;

    private final RecordingTransport transport = new RecordingTransport();
    private final List<byte[]> sent = transport.sent;
    private final List<String> rejoined = new ArrayList<>();
    private SessionKey requestKey;
    private SimMinion minion;

    @BeforeAll
    static void keys() throws Exception {
        master = TestKeys.pair(0);
        own = TestKeys.pair(1);
    }

    /** Accepted by a full auth, its keys unwrapped, holding a ticket: a minion connected before the restart. */
    @BeforeEach
    void accepted() throws Exception {
        minion = new SimMinion(3, "bench-00003", own, new RejoinSwarm(), (RSAPublicKey) master.getPublic());
        minion.connect(transport);
        transport.listener.onConnected(); // the first connection: nothing to rejoin
        assertThat(sent).isEmpty();
        minion.sendAuth(System.nanoTime());
        AuthRequest request = (AuthRequest) decode(sent.get(sent.size() - 1)).message();
        requestKey = SessionKey.random();
        transport.listener.onReply(accept(request.nonce()));
        assertThat(minion.unwrap()).isTrue();
        transport.listener.onReply(Resumptions.encode(Resumptions.sealTicket(
                requestKey,
                SESSION_ID,
                new Resumption.Grant(TICKET, System.currentTimeMillis() + 60_000, new byte[32]))));
        assertThat(minion.holdsTicket()).isTrue();
        sent.clear();
    }

    @Test
    void itResumesWithItsTicketWhenItsConnectionComesBackAndSaysSoOnceResumed() throws Exception {
        minion.useTickets(true);
        minion.rejoinOnReconnect(true);

        transport.listener.onConnected();

        assertThat(sent).hasSize(1);
        Resumption.Request request = (Resumption.Request) Resumptions.decodeToMaster(sent.get(0));
        assertThat(request.id()).isEqualTo("bench-00003");
        assertThat(request.ticket()).isEqualTo(TICKET);
        assertThat(minion.accepted()).isFalse();

        transport.listener.onReply(Resumptions.encode(Resumptions.sealReply(
                new byte[32],
                request.nonce(),
                new Resumption.Resumed(
                        SESSION_ID,
                        2,
                        SessionKey.random().bytes(),
                        SessionKey.random().bytes(),
                        0,
                        0,
                        new Resumption.Grant(ticket((byte) 2), System.currentTimeMillis() + 60_000, new byte[32])))));

        assertThat(minion.accepted()).isTrue();
        assertThat(rejoined).containsExactly("bench-00003");
    }

    @Test
    void withoutTicketsItAuthenticatesInFullWithTheRequestSignedAheadAndUnwrapsByItself() throws Exception {
        minion.useTickets(false);
        minion.prepareAuth();
        minion.rejoinOnReconnect(true);

        transport.listener.onConnected();

        assertThat(sent).hasSize(1);
        AuthRequest request = (AuthRequest) decode(sent.get(0)).message();
        transport.listener.onReply(accept(request.nonce()));

        // Unwrapped by itself (the swarm runs the work at once here), then its grains and a ticket request sent.
        assertThat(rejoined).containsExactly("bench-00003");
        assertThat(minion.accepted()).isTrue();
        assertThat(sent).hasSize(3);
    }

    @Test
    void withRejoiningOffAReconnectionChangesNothing() {
        minion.useTickets(true);

        transport.listener.onConnected();

        assertThat(sent).isEmpty();
        assertThat(minion.accepted()).isTrue();
        assertThat(rejoined).isEmpty();
    }

    private static byte[] ticket(byte fill) {
        byte[] ticket = new byte[64];
        Arrays.fill(ticket, fill);
        return ticket;
    }

    private byte[] accept(byte[] nonce) {
        AuthReply reply = new AuthReply(
                Suite.RSA_OAEP_PSS_AES256GCM,
                AuthStatus.ACCEPTED,
                nonce,
                System.currentTimeMillis(),
                master.getPublic().getEncoded(),
                "accepted",
                0,
                new AuthReply.Session(
                        SESSION_ID,
                        1,
                        Rsa.wrap(own.getPublic(), SessionKey.random().bytes()),
                        Rsa.wrap(own.getPublic(), requestKey.bytes()),
                        0,
                        0));
        return Codec.encodeSigned(reply, master.getPrivate());
    }

    private static Decoded.Ok decode(byte[] frame) {
        return (Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_FRAME, SessionFrame.Direction.MINION_TO_MASTER);
    }

    /** Checks the master's signatures as the worker does, and records which minions rejoined. */
    private final class RejoinSwarm extends QuietSwarm {
        @Override
        public boolean verifyReply(Decoded.Ok ok) {
            return ok.verify(master.getPublic());
        }

        @Override
        public void rejoined(BenchMinion rejoining, long nanos) {
            rejoined.add(((SimMinion) rejoining).id);
        }
    }
}

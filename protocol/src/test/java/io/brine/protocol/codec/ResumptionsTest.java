package io.brine.protocol.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.Resumption;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Session resumption's frames, proofs and boxes (PROTOCOL.md 8.9), byte by byte where it matters. */
class ResumptionsTest {

    private static final byte[] KEY_ID = {1, 2, 3, 4, 5, 6, 7, 8};
    private final SessionKey ticketKey = SessionKey.random();
    private final byte[] secret = filled(Resumptions.SECRET_LENGTH, 7);
    private final byte[] nonce = filled(32, 9);

    private Resumption.Grant grant(String id) {
        byte[] ticket = Resumptions.sealContents(
                ticketKey, KEY_ID, new Resumption.Contents(id, "aa:bb", 3, 1000, 2000, secret));
        return new Resumption.Grant(ticket, 2000, secret);
    }

    @Test
    void aRequestRoundTripsAndItsProofHoldsOnlyForItsSecretAndFields() throws Exception {
        Resumption.Request request = Resumptions.request("web1", grant("web1"), nonce, 1_700_000_000_000L);
        byte[] frame = Resumptions.encode(request);
        assertThat(frame[0]).isEqualTo((byte) 1);
        assertThat(frame[1]).isEqualTo((byte) Resumption.REQUEST);
        Resumption.Request read = (Resumption.Request) Resumptions.decode(frame);
        assertThat(read.id()).isEqualTo("web1");
        assertThat(Resumptions.proofHolds(secret, read)).isTrue();
        assertThat(Resumptions.proofHolds(filled(32, 8), read)).isFalse();
        // Every field is bound: another time, nonce or id fails the proof.
        assertThat(Resumptions.proofHolds(
                        secret,
                        new Resumption.Request(
                                "web1", read.ticket(), read.nonce(), read.timestampMs() + 1, read.proof())))
                .isFalse();
        assertThat(Resumptions.proofHolds(
                        secret,
                        new Resumption.Request("web1", read.ticket(), filled(32, 1), read.timestampMs(), read.proof())))
                .isFalse();
        assertThat(Resumptions.proofHolds(
                        secret,
                        new Resumption.Request("web2", read.ticket(), read.nonce(), read.timestampMs(), read.proof())))
                .isFalse();
    }

    @Test
    void aTicketOpensOnlyUnderItsKeyAndItsKeyIdIsInClear() throws Exception {
        byte[] ticket = grant("web1").ticket();
        assertThat(Resumptions.keyId(ticket)).isEqualTo(KEY_ID);
        Resumption.Contents contents = Resumptions.openContents(ticketKey, ticket);
        assertThat(contents.id()).isEqualTo("web1");
        assertThat(contents.fingerprint()).isEqualTo("aa:bb");
        assertThat(contents.expiresMs()).isEqualTo(2000);
        assertThat(contents.secret()).isEqualTo(secret);
        assertThatThrownBy(() -> Resumptions.openContents(SessionKey.random(), ticket))
                .isInstanceOf(CryptoException.class);
        byte[] relabelled = ticket.clone();
        relabelled[0] ^= 1; // the key id is in the associated data
        assertThatThrownBy(() -> Resumptions.openContents(ticketKey, relabelled))
                .isInstanceOf(CryptoException.class);
    }

    @Test
    void aReplyOpensOnlyWithTheSecretAndTheNonceOfItsRequest() throws Exception {
        Resumption.Resumed resumed =
                new Resumption.Resumed(filled(16, 1), 5, filled(32, 2), filled(32, 3), 4505, 99, grant("web1"));
        Resumption.Reply reply = (Resumption.Reply)
                Resumptions.decode(Resumptions.encode(Resumptions.sealReply(secret, nonce, resumed)));
        Resumption.Resumed opened = Resumptions.openReply(secret, nonce, reply);
        assertThat(opened.generation()).isEqualTo(5);
        assertThat(opened.publishKey()).isEqualTo(filled(32, 2));
        assertThat(opened.requestKey()).isEqualTo(filled(32, 3));
        assertThat(opened.next().secret()).isEqualTo(secret);
        assertThatThrownBy(() -> Resumptions.openReply(filled(32, 8), nonce, reply))
                .isInstanceOf(CryptoException.class);
        assertThatThrownBy(() -> Resumptions.openReply(secret, filled(32, 1), reply))
                .isInstanceOf(CryptoException.class);
        Resumption.Reply refused =
                (Resumption.Reply) Resumptions.decode(Resumptions.encode(new Resumption.Reply(nonce, null)));
        assertThat(refused.refused()).isTrue();
        assertThatThrownBy(() -> Resumptions.openReply(secret, nonce, refused)).isInstanceOf(CryptoException.class);
    }

    @Test
    void aTicketFrameOpensUnderItsSessionsRequestKeyOnly() throws Exception {
        SessionKey requestKey = SessionKey.random();
        byte[] sessionId = filled(16, 4);
        Resumption.Ticket frame = (Resumption.Ticket)
                Resumptions.decode(Resumptions.encode(Resumptions.sealTicket(requestKey, sessionId, grant("web1"))));
        assertThat(Resumptions.openTicket(requestKey, frame).secret()).isEqualTo(secret);
        assertThatThrownBy(() -> Resumptions.openTicket(SessionKey.random(), frame))
                .isInstanceOf(CryptoException.class);
        assertThatThrownBy(() -> Resumptions.openTicket(requestKey, new Resumption.Ticket(filled(16, 5), frame.box())))
                .isInstanceOf(CryptoException.class);
    }

    @Test
    void aTicketRequestHoldsOnlyUnderItsSessionsRequestKey() throws Exception {
        SessionKey requestKey = SessionKey.random();
        byte[] sessionId = filled(16, 4);
        Resumption.TicketRequest request = (Resumption.TicketRequest) Resumptions.decode(
                Resumptions.encode(Resumptions.ticketRequest(requestKey, sessionId, 1_700_000_000_000L)));
        assertThat(Resumptions.ticketRequestHolds(requestKey, request)).isTrue();
        assertThat(Resumptions.ticketRequestHolds(SessionKey.random(), request)).isFalse();
        assertThat(Resumptions.ticketRequestHolds(
                        requestKey, new Resumption.TicketRequest(filled(16, 5), request.box())))
                .isFalse();
    }

    @Test
    void boundsAreCheckedOnePastTheLimit() {
        byte[] atLimit = new byte[Resumptions.MAX_TICKET];
        assertThat(Resumptions.encode(new Resumption.Request("web1", atLimit, nonce, 1, filled(32, 0))))
                .isNotEmpty();
        assertThatThrownBy(() -> Resumptions.encode(
                        new Resumption.Request("web1", new byte[Resumptions.MAX_TICKET + 1], nonce, 1, filled(32, 0))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ticket");
        assertThatThrownBy(() -> Resumptions.encode(new Resumption.Request("Web1", atLimit, nonce, 1, filled(32, 0))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("id");
        byte[] big = new byte[FrameLimits.MAX_UNAUTHENTICATED + 1];
        big[0] = 1;
        big[1] = Resumption.REQUEST;
        assertThatThrownBy(() -> Resumptions.decode(big))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("exceeds the limit");
        byte[] frame = Resumptions.encode(new Resumption.Reply(nonce, null));
        byte[] trailing = Arrays.copyOf(frame, frame.length + 1);
        assertThatThrownBy(() -> Resumptions.decode(trailing)).isInstanceOf(MalformedException.class);
        assertThat(Resumptions.isResumption(new byte[] {1, 0x06})).isFalse();
        assertThat(Resumptions.isResumption(new byte[] {2, Resumption.REQUEST})).isFalse();
    }

    private static byte[] filled(int length, int value) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, (byte) value);
        return bytes;
    }
}

package io.brine.protocol.salt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * A whole Salt minion's life against brine's side of the protocol, in bytes, with fresh keys: sign-in while
 * pending, accepted sign-in, a restart with a token, a session request and its reply, a publication — on both
 * transports' encodings. The shape a master implementation follows.
 */
class SaltConversationTest {

    private static final KeyPair MASTER = TestKeys.pair(0);
    private static final KeyPair MINION = TestKeys.pair(1);
    private static final SaltRsa.Encryption ENC = SaltRsa.Encryption.OAEP_SHA224;
    private static final SaltRsa.Signing SIG = SaltRsa.Signing.PKCS1V15_SHA224;

    /** The master's side of one request: bytes in, bytes out, on ZeroMQ (payload dialect) or TCP. */
    private static byte[] overTheWire(byte[] request, boolean tcp, Function<SaltRequest, SaltValue> master)
            throws Exception {
        if (tcp) {
            SaltStreamScanner scanner = new SaltStreamScanner(SaltLimits.UNAUTHENTICATED);
            assertThat(scanner.scan(request, 0, request.length)).isEqualTo(request.length);
            SaltTcpFrame frame = SaltTcpFrame.decode(request, SaltLimits.UNAUTHENTICATED);
            return SaltTcpFrame.encode(frame.reply(master.apply(SaltRequest.decode(frame.body()))));
        }
        SaltValue payload = SaltMsgpack.read(request, SaltLimits.UNAUTHENTICATED);
        return SaltMsgpack.write(master.apply(SaltRequest.decode(payload)), SaltDialect.PAYLOAD);
    }

    private static byte[] send(SaltValue payload, boolean tcp) {
        if (tcp) {
            SaltValue.Map head = SaltValue.Map.builder()
                    .put("mid", "3f1c2d4e-0000-4000-8000-000000000001")
                    .build();
            return SaltTcpFrame.encode(new SaltTcpFrame(head, payload));
        }
        return SaltMsgpack.write(payload, SaltDialect.PAYLOAD);
    }

    private static SaltValue received(byte[] reply, boolean tcp) throws Exception {
        return tcp
                ? SaltTcpFrame.decode(reply, SaltLimits.SESSION).body()
                : SaltMsgpack.read(reply, SaltLimits.SESSION);
    }

    @Test
    void aMinionSignsInRunsAJobAndReturnsOnBothTransports() throws Exception {
        for (boolean tcp : List.of(false, true)) {
            Crypticle aes = Crypticle.generate();
            Crypticle session = Crypticle.generate();
            SaltAuthResponder responder = new SaltAuthResponder(MASTER, aes, 4505);

            // 1. A new minion: pending, and it cannot check the signature yet (no master key cached).
            String nonce1 = "00000000000000000000000000000001";
            SaltAuthRequest first = SaltAuthRequest.of(
                    "web1.example.com", MINION.getPublic(), nonce1, ENC, SIG, Optional.empty(), Optional.empty());
            byte[] reply = overTheWire(
                    send(first.envelope(), tcp),
                    tcp,
                    r -> responder
                            .respond((SaltRequest.Auth) r, SaltAuthResponder.Decision.PENDING, session)
                            .encode(MASTER.getPrivate()));
            assertThat(SaltSignIn.check(
                            received(reply, tcp),
                            nonce1,
                            Optional.empty(),
                            MINION.getPrivate(),
                            ENC,
                            SIG,
                            Optional.empty(),
                            SaltLimits.SESSION))
                    .isInstanceOf(SaltSignIn.Waiting.class);

            // 2. Accepted: the minion pins the master key it is given.
            String nonce2 = "00000000000000000000000000000002";
            SaltAuthRequest second = SaltAuthRequest.of(
                    "web1.example.com", MINION.getPublic(), nonce2, ENC, SIG, Optional.empty(), Optional.empty());
            reply = overTheWire(
                    send(second.envelope(), tcp),
                    tcp,
                    r -> responder
                            .respond((SaltRequest.Auth) r, SaltAuthResponder.Decision.ACCEPTED, session)
                            .encode(MASTER.getPrivate()));
            SaltSignIn.Accepted accepted = (SaltSignIn.Accepted) SaltSignIn.check(
                    received(reply, tcp),
                    nonce2,
                    Optional.empty(),
                    MINION.getPrivate(),
                    ENC,
                    SIG,
                    Optional.empty(),
                    SaltLimits.SESSION);
            RSAPublicKey pinned = accepted.master();
            assertThat(accepted.aes()).isEqualTo(aes);
            assertThat(accepted.session()).isEqualTo(session);

            // 3. Restarted: it sends a token for the pinned key and checks it comes back.
            String nonce3 = "00000000000000000000000000000003";
            byte[] token = Crypticle.generate().keyString().getBytes(StandardCharsets.US_ASCII);
            SaltAuthRequest third = SaltAuthRequest.of(
                    "web1.example.com", MINION.getPublic(), nonce3, ENC, SIG, Optional.of(pinned), Optional.of(token));
            reply = overTheWire(
                    send(third.envelope(), tcp),
                    tcp,
                    r -> responder
                            .respond((SaltRequest.Auth) r, SaltAuthResponder.Decision.ACCEPTED, session)
                            .encode(MASTER.getPrivate()));
            assertThat(SaltSignIn.check(
                            received(reply, tcp),
                            nonce3,
                            Optional.of(token),
                            MINION.getPrivate(),
                            ENC,
                            SIG,
                            Optional.of(pinned),
                            SaltLimits.SESSION))
                    .isInstanceOf(SaltSignIn.Accepted.class);

            // 4. A publication reaches it, signed over the sealed load.
            SaltPublication job = new SaltPublication(
                    "test.echo",
                    new SaltValue.Array(List.of(SaltValue.str("hi"))),
                    SaltValue.str("web1.example.com"),
                    "20261125193000000001",
                    "",
                    "list",
                    "root",
                    List.of(),
                    1);
            byte[] envelope = job.envelope(aes, MASTER.getPrivate(), SaltRsa.Signing.PKCS1V15_SHA1);
            byte[] delivered = tcp
                    ? SaltTcpFrame.decode(SaltPublication.tcpFrame(envelope), SaltLimits.SESSION)
                            .body()
                            .bytes()
                            .orElseThrow()
                    : envelope;
            assertThat(SaltPublication.open(delivered, pinned, accepted.aes(), 0, SaltLimits.SESSION))
                    .contains(job);

            // 5. Its return, sealed with its session key; the master's reply bound to the request's nonce.
            byte[] tok = SaltRsa.x931Sign(MINION.getPrivate(), "salt".getBytes(StandardCharsets.US_ASCII));
            String nonce5 = "00000000000000000000000000000005";
            byte[] load = SaltSessionRequest.seal(
                    accepted.session(),
                    SaltValue.Map.builder()
                            .put("cmd", "_return")
                            .put("jid", job.jid())
                            .put("fun", "test.echo")
                            .put("return", "hi")
                            .put("retcode", 0)
                            .put("success", true)
                            .build(),
                    "web1.example.com",
                    nonce5,
                    1795315684L,
                    tok);
            SaltRequest.Encrypted request =
                    new SaltRequest.Encrypted("web1.example.com", load, 3, ENC.wireName(), SIG.wireName());
            reply = overTheWire(send(request.encode(), tcp), tcp, r -> {
                try {
                    SaltSessionRequest opened =
                            SaltSessionRequest.open((SaltRequest.Encrypted) r, session, SaltLimits.SESSION);
                    assertThat(SaltRsa.x931Verify(MINION.getPublic(), "salt".getBytes(), opened.tok()))
                            .isTrue();
                    SaltCommand.Return ret = (SaltCommand.Return) opened.command();
                    assertThat(ret.ret()).isEqualTo(SaltValue.str("hi"));
                    return SaltReplies.sealed(session, opened.nonce(), SaltValue.nil());
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            assertThat(SaltReplies.openSealed(received(reply, tcp), accepted.session(), nonce5, SaltLimits.SESSION))
                    .isEqualTo(SaltValue.nil());
            byte[] replayedReply = reply;
            assertThatThrownBy(() -> SaltReplies.openSealed(
                            received(replayedReply, tcp),
                            accepted.session(),
                            "00000000000000000000000000000006",
                            SaltLimits.SESSION))
                    .isInstanceOf(CryptoException.class);
        }
    }
}

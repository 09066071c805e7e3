package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.salt.Crypticle;
import io.brine.protocol.salt.SaltAuthResponder;
import io.brine.protocol.salt.SaltCommand;
import io.brine.protocol.salt.SaltDialect;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltMsgpack;
import io.brine.protocol.salt.SaltPublication;
import io.brine.protocol.salt.SaltRequest;
import io.brine.protocol.salt.SaltSessionRequest;
import io.brine.protocol.salt.SaltValue;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** A simulated Salt minion after its master restarted with a new aes, as a stock minion: sign in again, then return. */
class SaltSimMinionSignInAgainTest {

    private final RecordingTransport transport = new RecordingTransport();
    private final List<byte[]> sent = transport.sent;
    private final List<Runnable> timers = new ArrayList<>();
    private KeyPair master;
    private int signedInAgain;

    @Test
    void aPublicationItsAesDoesNotOpenMakesItSignInAgainThenReturnWithTheNewKeys() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        master = generator.generateKeyPair();
        SaltSimMinion minion = new SaltSimMinion(1, "bench-00001", generator.generateKeyPair(), new FakeSwarm());
        minion.connect(transport);
        Crypticle session = Crypticle.generate();
        minion.sendAuth(0);
        answer(new SaltAuthResponder(master, Crypticle.generate(), 4505), session);
        assertThat(minion.unwrap()).isTrue(); // _pillar and minion_start follow
        int before = sent.size();

        // The master restarted: a new aes, which the minion does not hold.
        Crypticle newAes = Crypticle.generate();
        Crypticle newSession = Crypticle.generate();
        SaltPublication ping = new SaltPublication(
                "test.ping",
                new SaltValue.Array(List.of()),
                SaltValue.str("bench-*"),
                "20261129051500000001",
                "",
                "glob",
                "root",
                List.of(),
                1);
        transport.listener.onPublication(ping.envelope(newAes, master.getPrivate(), SaltSimMinion.SIG));

        assertThat(sent).hasSize(before + 1);
        assertThat(request(sent.get(before))).isInstanceOf(SaltRequest.Auth.class);
        assertThat(timers).hasSize(1); // its request again after auth_timeout without an answer
        answer(new SaltAuthResponder(master, newAes, 4505), newSession);

        assertThat(signedInAgain).isEqualTo(1);
        SaltSessionRequest ret = SaltSessionRequest.open(
                (SaltRequest.Encrypted) request(sent.get(sent.size() - 1)), newSession, SaltLimits.SESSION);
        assertThat(ret.command())
                .isInstanceOfSatisfying(
                        SaltCommand.Return.class, r -> assertThat(r.jid()).isEqualTo(ping.jid()));
    }

    /** The master's accepting answer to the minion's last request, an auth request. */
    private void answer(SaltAuthResponder responder, Crypticle session) throws Exception {
        SaltRequest.Auth auth = (SaltRequest.Auth) request(sent.get(sent.size() - 1));
        transport.listener.onReply(SaltMsgpack.write(
                responder
                        .respond(auth, SaltAuthResponder.Decision.ACCEPTED, session)
                        .encode(master.getPrivate()),
                SaltDialect.PAYLOAD));
    }

    private static SaltRequest request(byte[] frame) throws Exception {
        return SaltRequest.read(frame, 0, frame.length);
    }

    private final class FakeSwarm extends QuietSwarm implements SaltSimMinion.Swarm {
        @Override
        public RSAPublicKey masterKey() {
            return (RSAPublicKey) master.getPublic();
        }

        @Override
        public SaltSimMinion.Opened open(byte[] envelope, Crypticle aes) {
            try {
                SaltPublication publication = SaltPublication.open(
                                envelope, master.getPublic(), aes, -1, SaltLimits.SESSION)
                        .orElseThrow();
                return new SaltSimMinion.Opened(publication, SaltSimMinion.targets(publication));
            } catch (Exception e) {
                return null;
            }
        }

        @Override
        public void stateRun(BenchMinion minion, int requests, long bytes, Optional<String> failure) {}

        @Override
        public Future<?> schedule(Runnable task, long delayMillis) {
            timers.add(task);
            return new CompletableFuture<>();
        }

        @Override
        public void signInAgainSent(BenchMinion minion) {}

        @Override
        public void signedInAgain(BenchMinion minion) {
            signedInAgain++;
        }
    }
}

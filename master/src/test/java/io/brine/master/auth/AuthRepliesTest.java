package io.brine.master.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.client.channel.TcpClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.master.WiredMaster;
import io.brine.protocol.RootPublisher;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.ClientAuth;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.TestKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every kind of auth reply, as the master sends it over a real connection: bound to the request's nonce and signed
 * by the master's key (DESIGN §4.4), refusals too, or a minion could not tell them from forgeries.
 */
class AuthRepliesTest {

    static final int WEB1_KEY = 1;
    static final int OTHER_KEY = 2;
    static final int DB_KEY = 3;

    @TempDir
    Path dir;

    WiredMaster master;

    @BeforeEach
    void start() throws Exception {
        Path autosign = policyFile("autosign.conf", "web1\n");
        Path autoreject = policyFile("autoreject.conf", "bad1\n");
        master = WiredMaster.start(
                dir,
                config -> config.maxPending(1)
                        .acceptance(MasterConfig.Acceptance.builder()
                                .autosignFile(autosign)
                                .autorejectFile(autoreject)
                                .build()));
    }

    @AfterEach
    void stop() {
        master.close();
    }

    @Test
    void acceptedCarriesTheNonceAndTheMastersSignature() throws Exception {
        AuthReply reply = ask("web1", WEB1_KEY);
        assertThat(reply.status()).isEqualTo(AuthStatus.ACCEPTED);
        assertThat(reply.session()).isNotNull();
    }

    @Test
    void pendingCarriesTheNonceAndTheMastersSignature() throws Exception {
        assertThat(ask("db1", DB_KEY).status()).isEqualTo(AuthStatus.PENDING);
    }

    @Test
    void rejectedCarriesTheNonceAndTheMastersSignature() throws Exception {
        assertThat(ask("bad1", DB_KEY).status()).isEqualTo(AuthStatus.REJECTED);
    }

    @Test
    void deniedCarriesTheNonceAndTheMastersSignature() throws Exception {
        assertThat(ask("web1", WEB1_KEY).status()).isEqualTo(AuthStatus.ACCEPTED);
        assertThat(ask("web1", OTHER_KEY).status()).isEqualTo(AuthStatus.DENIED);
    }

    @Test
    void fullCarriesTheNonceAndTheMastersSignature() throws Exception {
        assertThat(ask("db1", DB_KEY).status()).isEqualTo(AuthStatus.PENDING); // max_pending: 1
        assertThat(ask("db2", OTHER_KEY).status()).isEqualTo(AuthStatus.FULL);
    }

    @Test
    void aRefusalForClockSkewCarriesTheNonceAndTheMastersSignature() throws Exception {
        byte[] nonce = WiredMaster.nonce();
        long tenMinutesAgo = System.currentTimeMillis() - Duration.ofMinutes(10).toMillis();
        assertThat(ask(WiredMaster.authRequest("web1", WEB1_KEY, nonce, tenMinutesAgo), nonce)
                        .status())
                .isEqualTo(AuthStatus.REFUSED);
    }

    @Test
    void aPublishersRepliesCarryTheNonceAndTheMastersSignature() throws Exception {
        assertThat(askAsPublisher(RootPublisher.NAME, WiredMaster.ROOT_KEY).status())
                .isEqualTo(AuthStatus.ACCEPTED);
        assertThat(askAsPublisher("ci", OTHER_KEY).status()).isEqualTo(AuthStatus.REJECTED);
    }

    private AuthReply ask(String id, int key) throws Exception {
        byte[] nonce = WiredMaster.nonce();
        return ask(WiredMaster.authRequest(id, key, nonce), nonce);
    }

    private AuthReply askAsPublisher(String name, int key) throws Exception {
        KeyPair pair = TestKeys.pair(key);
        byte[] nonce = WiredMaster.nonce();
        return ask(
                Codec.encodeSigned(
                        new ClientAuth(
                                Suite.RSA_OAEP_PSS_AES256GCM,
                                name,
                                pair.getPublic().getEncoded(),
                                nonce,
                                System.currentTimeMillis()),
                        pair.getPrivate()),
                nonce);
    }

    private AuthReply ask(byte[] request, byte[] nonce) throws Exception {
        return ask(master, request, nonce);
    }

    /** Sends {@code request} on a connection of its own; the reply must echo {@code nonce} and verify. */
    static AuthReply ask(WiredMaster master, byte[] request, byte[] nonce) throws Exception {
        try (TcpClientChannel channel = master.connect()) {
            channel.send(request);
            byte[] frame = channel.receive(Duration.ofSeconds(10));
            assertThat(frame).as("an answer").isNotNull();
            Decoded decoded = Codec.decode(frame, FrameLimits.MAX_FRAME);
            assertThat(decoded).isInstanceOf(Decoded.Ok.class);
            Decoded.Ok ok = (Decoded.Ok) decoded;
            AuthReply reply = (AuthReply) ok.message();
            assertThat(reply.nonce()).as("the request's nonce").isEqualTo(nonce);
            assertThat(ok.verify(WiredMaster.masterKey()))
                    .as("signed by the master's key")
                    .isTrue();
            assertThat(reply.masterPublicKey())
                    .isEqualTo(WiredMaster.masterKey().getEncoded());
            return reply;
        }
    }

    private Path policyFile(String name, String content) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }
}

package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.channel.TcpClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.KeyState;
import io.brine.transport.tcp.TcpServerOptions;
import io.brine.transport.tcp.TcpServerTransport;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's inbound path over a real connection: one decode, one session table for minions and publishers, what
 * each session may carry, replays, and the one place that holds auth frames to 64 KiB (the codec).
 */
class InboundDispatcherTest {

    static final int MINION_KEY = 1;
    /** Long enough for an answer that should come; an answer that should not is checked by a later one. */
    static final Duration ANSWER = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    WiredMaster master;

    /** A minion's side of one session: the key it unwrapped and its next counter. */
    private record MinionEnd(
            TcpClientChannel channel, byte[] sessionId, SessionKey requestKey, long generation, long[] counter) {

        void send(SessionMessage message) throws Exception {
            send(message, ++counter[0]);
        }

        void send(SessionMessage message, long at) throws Exception {
            channel.send(Codec.encode(
                    Sessions.seal(requestKey, sessionId, SessionFrame.Direction.MINION_TO_MASTER, at, message)));
        }

        SessionMessage receive() throws Exception {
            byte[] frame = channel.receive(ANSWER);
            assertThat(frame).as("an answer").isNotNull();
            SessionFrame sealed = (SessionFrame) ((Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_FRAME)).message();
            return Sessions.open(requestKey, sealed, SessionFrame.Direction.MASTER_TO_MINION);
        }
    }

    @BeforeEach
    void start() throws Exception {
        // The transport lets 8 MiB through before auth, so that only the codec stands between a big auth frame and
        // the handlers.
        TcpServerOptions options =
                TcpServerOptions.defaults().withFrameLimits(FrameLimits.MAX_FRAME, FrameLimits.MAX_FRAME);
        master = WiredMaster.start(
                dir,
                config -> config.acceptance(
                        MasterConfig.Acceptance.builder().autoAccept(true).build()),
                undelivered -> new TcpServerTransport("127.0.0.1", 0, options, null, null, undelivered));
    }

    @AfterEach
    void stop() {
        master.close();
    }

    @Test
    void aMinionsSessionCarriesHeartbeatsAndTheCurrentKey() throws Exception {
        try (TcpClientChannel channel = master.connect()) {
            MinionEnd minion = accepted(channel, "web1");
            minion.send(new SessionMessage.Heartbeat(minion.generation()));
            assertThat(minion.receive()).isEqualTo(new SessionMessage.HeartbeatReply(minion.generation()));
            minion.send(new SessionMessage.KeyRequest(minion.generation()));
            assertThat(((SessionMessage.KeyUpdate) minion.receive()).generation())
                    .isEqualTo(minion.generation());
        }
    }

    @Test
    void aHeartbeatOfAMinionAnAdminAskedToRotateItsKeyIsAnsweredThenAskedInItsSession() throws Exception {
        try (TcpClientChannel channel = master.connect()) {
            MinionEnd minion = accepted(channel, "web1");
            master.master().keyStore().askRotation(List.of("web1"), "brine-key:admin");
            minion.send(new SessionMessage.Heartbeat(minion.generation()));
            assertThat(minion.receive()).isEqualTo(new SessionMessage.HeartbeatReply(minion.generation()));
            assertThat(minion.receive())
                    .isEqualTo(new SessionMessage.KeyRotateAsk(
                            Fingerprints.of(TestKeys.pair(MINION_KEY).getPublic())));
        }
    }

    @Test
    void aPublishRequestInAMinionsSessionIsDroppedAMinionCannotPublish() throws Exception {
        try (TcpClientChannel channel = master.connect()) {
            MinionEnd minion = accepted(channel, "web1");
            minion.send(new SessionMessage.PublishRequest("glob", "*", "cmd.run", List.of("id"), Map.of(), 5));
            minion.send(new SessionMessage.JobQuery(null, 0));
            minion.send(new SessionMessage.Heartbeat(minion.generation()));
            // The first answer is the heartbeat's: nothing came for the publisher's messages.
            assertThat(minion.receive()).isInstanceOf(SessionMessage.HeartbeatReply.class);
            assertThat(master.master().jobs().cache().list()).isEmpty();
        }
    }

    @Test
    void aReplayedSessionFrameIsDropped() throws Exception {
        try (TcpClientChannel channel = master.connect()) {
            MinionEnd minion = accepted(channel, "web1");
            minion.send(new SessionMessage.KeyRequest(minion.generation()), 1);
            assertThat(minion.receive()).isInstanceOf(SessionMessage.KeyUpdate.class);
            minion.send(new SessionMessage.KeyRequest(minion.generation()), 1);
            minion.send(new SessionMessage.Heartbeat(minion.generation()), 2);
            assertThat(minion.receive()).isInstanceOf(SessionMessage.HeartbeatReply.class);
        }
    }

    @Test
    void anAuthRequestOverSixtyFourKibIsDroppedUnansweredAndEndsItsConnection() throws Exception {
        // No encoder makes one: a real request with bytes after it, which the codec refuses on its length alone.
        byte[] request = WiredMaster.authRequest("web1", MINION_KEY, WiredMaster.nonce());
        byte[] big = Arrays.copyOf(request, FrameLimits.MAX_UNAUTHENTICATED + 1);
        try (TcpClientChannel channel = master.connect()) {
            long dropped = master.master().droppedFrames();
            channel.send(big);
            await().until(() -> master.master().droppedFrames() > dropped);
            assertThatThrownBy(() -> channel.receive(ANSWER)).isInstanceOf(IOException.class);
        }
        // The master still serves, and the next answer is to the next request.
        try (TcpClientChannel channel = master.connect()) {
            byte[] nonce = WiredMaster.nonce();
            channel.send(WiredMaster.authRequest("web1", MINION_KEY, nonce));
            AuthReply reply = reply(channel.receive(ANSWER));
            assertThat(reply.nonce()).isEqualTo(nonce);
            assertThat(master.master().sessions().byMinion("web1")).isPresent();
        }
    }

    @Test
    void authRequestsOverTheRateLimitOfTheirAddressAreAnsweredTryLaterNotLeftToTimeOut(@TempDir Path other)
            throws Exception {
        // Minions behind one address (a NAT) after a restart: the burst is answered, the rest told when to ask again.
        try (WiredMaster limited =
                WiredMaster.start(other, b -> b.authRatePerSource(1).authBurst(2))) {
            List<TcpClientChannel> channels = new ArrayList<>();
            try {
                List<byte[]> nonces = new ArrayList<>();
                List<byte[]> requests = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    channels.add(limited.connect());
                    nonces.add(WiredMaster.nonce());
                    requests.add(WiredMaster.authRequest("nat" + i, 20 + i, nonces.get(i)));
                }
                for (int i = 0; i < 4; i++) {
                    channels.get(i).send(requests.get(i));
                }
                List<AuthReply> replies = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    AuthReply reply = reply(channels.get(i).receive(ANSWER));
                    assertThat(reply.nonce()).isEqualTo(nonces.get(i));
                    replies.add(reply);
                }
                List<AuthReply> later = replies.stream()
                        .filter(r -> r.status() == AuthStatus.REFUSED)
                        .toList();
                assertThat(later).isNotEmpty().allSatisfy(r -> {
                    assertThat(r.reason()).contains("try later");
                    assertThat(r.retryAfterSeconds()).isBetween(1, 2);
                });
                assertThat(replies)
                        .filteredOn(r -> r.status() == AuthStatus.PENDING)
                        .hasSize(4 - later.size());
                // Nothing filed for those told to try later.
                assertThat(limited.keyStore().list().ids(KeyState.PENDING)).hasSize(4 - later.size());
            } finally {
                for (TcpClientChannel channel : channels) {
                    channel.close();
                }
            }
        }
    }

    @Test
    void minionsAndPublishersShareOneSessionTable() throws Exception {
        try (TcpClientChannel channel = master.connect();
                BrineClient root = master.root()) {
            MinionEnd minion = accepted(channel, "web1");
            assertThat(root.jobs(0)).isEmpty();
            BrineClient.Published published =
                    root.publish(new BrineClient.Job("glob", "web1", "test.ping", List.of(), Map.of(), 5));
            assertThat(published.minions()).containsExactly("web1");
            // Over TCP the publication comes down the minion's own connection.
            Decoded publication = Codec.decode(channel.receive(ANSWER), FrameLimits.MAX_FRAME);
            assertThat(((Decoded.Ok) publication).message()).isInstanceOf(Publish.class);
            minion.send(new SessionMessage.Heartbeat(minion.generation()));
            assertThat(minion.receive()).isInstanceOf(SessionMessage.HeartbeatReply.class);
        }
    }

    private MinionEnd accepted(TcpClientChannel channel, String id) throws Exception {
        byte[] nonce = WiredMaster.nonce();
        channel.send(WiredMaster.authRequest(id, MINION_KEY, nonce));
        AuthReply reply = reply(channel.receive(ANSWER));
        assertThat(reply.status()).isEqualTo(AuthStatus.ACCEPTED);
        SessionKey requestKey = SessionKey.of(Rsa.unwrap(
                TestKeys.pair(MINION_KEY).getPrivate(), reply.session().wrappedRequestKey()));
        return new MinionEnd(
                channel,
                reply.session().sessionId(),
                requestKey,
                reply.session().generation(),
                new long[1]);
    }

    private static AuthReply reply(byte[] frame) {
        assertThat(frame).as("an answer").isNotNull();
        return (AuthReply) ((Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_FRAME)).message();
    }
}

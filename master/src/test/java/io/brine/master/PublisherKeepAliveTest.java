package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.channel.ClientChannel;
import io.brine.client.channel.ZmqClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.master.HostilePeersTest.MinionEnd;
import io.brine.protocol.RootPublisher;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.testing.TestKeys;
import io.brine.transport.tcp.TcpServerOptions;
import io.brine.transport.tcp.TcpServerTransport;
import io.brine.transport.zmtp.ZmtpServerOptions;
import io.brine.transport.zmtp.ZmtpServerTransport;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A publisher waiting quietly for returns longer than the master keeps an idle authenticated connection (120 s in
 * production, 2 s here) keeps its connection: {@code brine -t 600} over either transport. Over TCP that is the
 * client's session heartbeat alone (the case fails without it); over ZeroMQ the channel's ZMTP heartbeats keep it too.
 */
class PublisherKeepAliveTest {

    private static final Duration UNAUTHENTICATED = Duration.ofSeconds(2);
    private static final Duration IDLE = Duration.ofSeconds(2);

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(TransportKind.class)
    void aPublisherAwaitingReturnsLongerThanTheIdleTimeoutKeepsItsConnection(TransportKind kind) throws Exception {
        try (WiredMaster master = WiredMaster.start(
                        dir,
                        config -> config.acceptance(MasterConfig.Acceptance.builder()
                                .autoAccept(true)
                                .build()),
                        undelivered -> switch (kind) {
                            case TCP ->
                                new TcpServerTransport(
                                        "127.0.0.1",
                                        0,
                                        TcpServerOptions.defaults()
                                                .withTimeouts(UNAUTHENTICATED, IDLE, Duration.ofSeconds(10)),
                                        null,
                                        null,
                                        undelivered);
                            case ZEROMQ ->
                                new ZmtpServerTransport(
                                        "127.0.0.1",
                                        0,
                                        0,
                                        ZmtpServerOptions.defaults().withTimeouts(UNAUTHENTICATED, IDLE),
                                        null,
                                        undelivered);
                        });
                ClientChannel channel = kind == TransportKind.TCP
                        ? master.connect()
                        : new ZmqClientChannel("127.0.0.1", master.port())) {
            MinionEnd web1 = HostilePeersTest.accepted(channel, "web1");
            try (BrineClient root = BrineClient.connect(
                            kind,
                            "127.0.0.1",
                            master.port(),
                            RootPublisher.NAME,
                            TestKeys.pair(WiredMaster.ROOT_KEY),
                            (RSAPublicKey) WiredMaster.masterKey(),
                            Duration.ofSeconds(10))
                    .heartbeatEvery(Duration.ofMillis(200))) {
                awaitReturnsPastTheTimeout(master, root, web1);
            }
        }
    }

    private static void awaitReturnsPastTheTimeout(WiredMaster master, BrineClient root, MinionEnd web1)
            throws Exception {
        String jid =
                root.publish(BrineClient.Job.of("list", "web1", "test.ping")).jid();
        // The minion answers once a connection opened after the publisher's last request has been closed for
        // its silence: the publisher has been quiet for longer than the idle timeout (here equal to the
        // unauthenticated one) by then. The minion's own heartbeats keep its connection meanwhile.
        CompletableFuture<Void> answered = CompletableFuture.runAsync(() -> {
            try (Socket witness = new Socket(InetAddress.getLoopbackAddress(), master.port())) {
                // closedWithin skips what the master sent meanwhile (ZeroMQ's 64-byte greeting), so the witness
                // sees the close when it comes, not a poll per byte later.
                await().pollInterval(Duration.ofMillis(300)).until(() -> {
                    web1.send(new SessionMessage.Heartbeat(0));
                    return HostilePeersTest.closedWithin(witness, Duration.ofMillis(50));
                });
                web1.send(new SessionMessage.Return(jid, "test.ping", true, 0, true, 1));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });

        Map<String, SessionMessage.ReturnEvent> returns =
                root.awaitReturns(jid, List.of("web1"), Duration.ofSeconds(30), event -> {});
        answered.join();
        assertThat(returns).containsOnlyKeys("web1");
        // The same session still answers a job query.
        assertThat(root.job(jid)).containsKey("returns");
    }
}

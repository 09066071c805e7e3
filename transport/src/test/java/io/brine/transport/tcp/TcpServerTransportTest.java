package io.brine.transport.tcp;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.codec.FrameLimits;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.ServerTransport.Addresses;
import io.brine.transport.testing.TestCertificates;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The master's TCP transport against raw sockets on loopback. */
class TcpServerTransportTest {

    private static final Duration CLOSE_WITHIN = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    private final BlockingQueue<Inbound> inbound = new LinkedBlockingQueue<>();
    private final Map<String, Peer> peersByText = new ConcurrentHashMap<>();
    private final Set<Peer> disconnected = ConcurrentHashMap.newKeySet();
    private final Set<String> lost = ConcurrentHashMap.newKeySet();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private TcpServerTransport server;

    private record Inbound(Peer peer, byte[] frame) {
        String text() {
            return new String(frame, US_ASCII);
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private TcpServerTransport start(TcpServerOptions options) throws IOException {
        return start(options, null, null, false);
    }

    /** Records every frame (and who sent it, by its text); with {@code echo}, answers "re:" + frame. */
    private TcpServerTransport start(TcpServerOptions options, SslContext tls, EventLoopGroup group, boolean echo)
            throws IOException {
        server = new TcpServerTransport("127.0.0.1", 0, options, tls, group, (ids, frame) -> lost.addAll(ids));
        TcpServerTransport self = server;
        server.start(new ServerTransport.InboundHandler() {
            @Override
            public void onFrame(Peer from, byte[] frame) {
                Inbound in = new Inbound(from, frame);
                peersByText.put(in.text(), from);
                inbound.add(in);
                if (echo) {
                    self.send(from, ("re:" + in.text()).getBytes(US_ASCII));
                }
            }

            @Override
            public void onDisconnect(Peer peer) {
                disconnected.add(peer);
            }
        });
        return server;
    }

    private int port() {
        return server.addresses().request().getPort();
    }

    private RawPeer peer() throws IOException {
        RawPeer peer = RawPeer.connect(port());
        closeables.add(peer);
        return peer;
    }

    /** A raw peer that said {@code hello} and is bound as minion {@code id}. */
    private RawPeer boundPeer(String id) throws IOException {
        RawPeer peer = peer();
        peer.send("hello " + id);
        await().pollInterval(Duration.ofMillis(5)).until(() -> peersByText.containsKey("hello " + id));
        server.bind(id, peersByText.get("hello " + id));
        return peer;
    }

    private static TcpServerOptions fast() {
        return TcpServerOptions.defaults().withIo(TcpIo.NIO, 1);
    }

    private static byte[] text(String s) {
        return s.getBytes(US_ASCII);
    }

    // ---- basics ----

    @Test
    void reportsOneAddressForBothChannelsAndPublishPortZero() throws IOException {
        Addresses addresses = start(fast()).addresses();

        assertThat(addresses.request().getPort()).isPositive();
        assertThat(addresses.publish()).isEqualTo(addresses.request());
        RawPeer peer = peer().send("x");
        await().until(() -> peersByText.containsKey("x"));
        assertThat(server.publishPort(peersByText.get("x"))).isZero();
        assertThat(peer.socket.isConnected()).isTrue();
    }

    @Test
    void startFailsWithIoExceptionWhenThePortIsTaken() throws IOException {
        int taken = start(fast()).addresses().request().getPort();

        try (TcpServerTransport second = new TcpServerTransport("127.0.0.1", taken, fast(), null, null, null)) {
            assertThatThrownBy(() -> second.start((peer, frame) -> {}))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("cannot bind");
        }
    }

    @Test
    void routesEachReplyToThePeerThatAsked() throws IOException {
        start(fast(), null, null, true);
        RawPeer a = peer();
        RawPeer b = peer();

        b.send("from b");
        a.send("from a");

        assertThat(a.receiveText()).isEqualTo("re:from a");
        assertThat(b.receiveText()).isEqualTo("re:from b");
        assertThat(peersByText.get("from a")).isNotEqualTo(peersByText.get("from b"));
        assertThat(peersByText.get("from a").remoteAddress()).isEqualTo("127.0.0.1");
    }

    @Test
    void manyClientsEachGetTheirOwnRepliesInOrder() throws IOException {
        start(fast(), null, null, true);
        List<RawPeer> clients = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            clients.add(peer());
        }
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < clients.size(); i++) {
                clients.get(i).send("c" + i + "r" + round);
            }
        }
        for (int i = 0; i < clients.size(); i++) {
            for (int round = 0; round < 3; round++) {
                assertThat(clients.get(i).receiveText()).isEqualTo("re:c" + i + "r" + round);
            }
        }
    }

    @Test
    void tellsTheHandlerWhenAConnectionCloses() throws IOException {
        start(fast());
        RawPeer peer = peer().send("bye");
        await().until(() -> peersByText.containsKey("bye"));

        peer.close();

        await().until(() -> disconnected.contains(peersByText.get("bye")));
        assertThat(server.send(peersByText.get("bye"), text("late"))).isFalse();
    }

    @Test
    void refusesFramesOverTheLimitOnTheWayOut() throws IOException {
        start(fast());
        RawPeer peer = boundPeer("web1");

        assertThat(server.send(peersByText.get("hello web1"), new byte[FrameLimits.MAX_FRAME + 1]))
                .isFalse();
        assertThat(server.publish(List.of("web1"), new byte[FrameLimits.MAX_FRAME + 1]))
                .containsExactly("web1");
        assertThat(server.publish(List.of("web1"), text("fine"))).isEmpty();
        assertThat(peer.receiveText()).isEqualTo("fine");
    }

    // ---- publish and routing ----

    @Test
    void publishReachesBoundMinionsOnceAndReportsTheOthers() throws IOException {
        start(fast());
        RawPeer web1 = boundPeer("web1");
        RawPeer web2 = boundPeer("web2");
        RawPeer stranger = peer().send("hello stranger");

        Set<String> undeliverable = server.publish(List.of("web1", "web2", "web1", "db1"), text("job"));

        assertThat(undeliverable).containsExactly("db1");
        assertThat(web1.receiveText()).isEqualTo("job");
        assertThat(web2.receiveText()).isEqualTo("job");
        assertThat(server.publish(List.of("web2"), text("second"))).isEmpty();
        assertThat(web2.receiveText()).isEqualTo("second");
        assertThat(web1.closedWithin(Duration.ofMillis(200))).isFalse(); // nothing else came
        assertThat(stranger.closedWithin(Duration.ofMillis(200))).isFalse();
        assertThat(server.boundMinions()).containsExactlyInAnyOrder("web1", "web2");
    }

    @Test
    void aFanOutBatchIsFlushedOncePerConnection() throws Exception {
        EventLoopGroup group = TcpIo.NIO.newGroup(1, "test-tcp");
        closeables.add(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly());
        start(fast(), null, group, false);
        List<RawPeer> minions = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ids.add("m" + i);
            minions.add(boundPeer("m" + i));
        }
        TcpServerTransport.OutboundStats before = server.outboundStats();
        CountDownLatch release = new CountDownLatch(1);
        group.next().execute(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });

        for (int j = 0; j < 50; j++) {
            assertThat(server.publish(ids, text("p" + j))).isEmpty();
        }
        release.countDown();

        for (RawPeer minion : minions) {
            for (int j = 0; j < 50; j++) {
                assertThat(minion.receiveText()).isEqualTo("p" + j);
            }
        }
        TcpServerTransport.OutboundStats after = server.outboundStats();
        assertThat(after.writes() - before.writes()).isEqualTo(1000);
        assertThat(after.flushes() - before.flushes()).isEqualTo(20);
    }

    @Test
    void theLatestConnectionOfAMinionWinsAndUnbindClosesIt() throws IOException {
        start(fast());
        RawPeer first = boundPeer("web1");
        RawPeer second = peer().send("again web1");
        await().until(() -> peersByText.containsKey("again web1"));
        server.bind("web1", peersByText.get("again web1"));

        server.publish(List.of("web1"), text("to the new one"));
        assertThat(second.receiveText()).isEqualTo("to the new one");

        first.close();
        await().until(() -> disconnected.contains(peersByText.get("hello web1")));
        assertThat(server.boundMinions()).containsExactly("web1"); // the old connection's close kept the new route

        server.unbind("web1");
        assertThat(second.closedWithin(CLOSE_WITHIN)).isTrue();
        assertThat(server.publish(List.of("web1"), text("gone"))).containsExactly("web1");
    }

    @Test
    void bindOnAConnectionThatClosedIsIgnored() throws IOException {
        start(fast());
        RawPeer peer = peer().send("hello web1");
        await().until(() -> peersByText.containsKey("hello web1"));
        peer.close();
        await().until(() -> disconnected.contains(peersByText.get("hello web1")));

        server.bind("web1", peersByText.get("hello web1"));

        assertThat(server.boundMinions()).isEmpty();
        assertThat(server.publish(List.of("web1"), text("x"))).containsExactly("web1");
    }

    // ---- back-pressure ----

    @Test
    void aMinionThatStopsReadingIsDisconnectedAndTheOthersCarryOn() throws IOException {
        start(fast().withFrameLimits(FrameLimits.MAX_UNAUTHENTICATED, 256 * 1024)
                .withMaxQueuedBytes(1024 * 1024));
        RawPeer healthy = boundPeer("healthy");
        RawPeer stalled = RawPeer.connect(port(), 4096);
        closeables.add(stalled);
        stalled.send("hello stalled");
        await().until(() -> peersByText.containsKey("hello stalled"));
        server.bind("stalled", peersByText.get("hello stalled"));
        byte[] frame = new byte[64 * 1024];
        DataInputStream healthyIn = new DataInputStream(healthy.socket.getInputStream());

        boolean reported = false;
        int sent = 0;
        // Kernel buffers on loopback take a few MiB; the cap is 1 MiB on top. Bounded: 256 MiB in all at most.
        while (!reported && sent < 4096) {
            Arrays.fill(frame, 0, 4, (byte) sent);
            Set<String> undeliverable = server.publish(List.of("healthy", "stalled"), frame);
            assertThat(undeliverable).doesNotContain("healthy");
            reported = undeliverable.contains("stalled");
            sent++;
            int length = healthyIn.readInt();
            assertThat(length).isEqualTo(frame.length);
            healthyIn.skipNBytes(length);
        }

        assertThat(reported)
                .as("the stalled minion is reported once its queue is over the cap")
                .isTrue();
        assertThat(stalled.closedWithin(CLOSE_WITHIN)).isTrue();
        await().until(() -> !server.boundMinions().contains("stalled"));
        assertThat(server.publish(List.of("healthy", "stalled"), text("after"))).containsExactly("stalled");
        assertThat(healthy.receiveText()).isEqualTo("after");
    }

    // ---- the unauthenticated path ----

    @Test
    void aHugeLengthPrefixClosesTheConnectionBeforeTheFrameArrives() throws IOException {
        start(fast());

        assertThat(peer().sendPrefix(0xFFFF_FFFFL).closedWithin(CLOSE_WITHIN)).isTrue();
        assertThat(peer().sendPrefix(Integer.MAX_VALUE).closedWithin(CLOSE_WITHIN))
                .isTrue();
        assertThat(peer().sendPrefix(FrameLimits.MAX_UNAUTHENTICATED + 1).closedWithin(CLOSE_WITHIN))
                .isTrue();
        assertThat(peer().sendPrefix(0).closedWithin(CLOSE_WITHIN)).isTrue();
        assertThat(inbound).isEmpty();
    }

    @Test
    void theFrameLimitRisesOnceAMinionIsBoundAndAFrameExactlyAtEitherLimitPasses() throws IOException {
        start(fast());
        RawPeer unbound = peer();
        RawPeer bound = boundPeer("web1");

        unbound.send(new byte[FrameLimits.MAX_UNAUTHENTICATED]);
        await().until(() -> inbound.stream().anyMatch(in -> in.frame().length == FrameLimits.MAX_UNAUTHENTICATED));
        bound.send(new byte[FrameLimits.MAX_UNAUTHENTICATED + 1]);
        await().until(() -> inbound.stream().anyMatch(in -> in.frame().length == FrameLimits.MAX_UNAUTHENTICATED + 1));
        bound.send(new byte[FrameLimits.MAX_FRAME]);
        await().until(() -> inbound.stream().anyMatch(in -> in.frame().length == FrameLimits.MAX_FRAME));
        unbound.sendPrefix(FrameLimits.MAX_UNAUTHENTICATED + 1);
        assertThat(unbound.closedWithin(CLOSE_WITHIN)).isTrue();
        bound.sendPrefix(FrameLimits.MAX_FRAME + 1);
        assertThat(bound.closedWithin(CLOSE_WITHIN)).isTrue();
    }

    @Test
    void aConnectionThatNeverSendsIsClosed() throws IOException {
        start(fast().withTimeouts(Duration.ofMillis(300), Duration.ofSeconds(60), Duration.ofSeconds(5)));

        RawPeer halfOpen = peer();

        assertThat(halfOpen.closedWithin(CLOSE_WITHIN)).isTrue();
        await().until(() -> server.connectionCount() == 0);
    }

    @Test
    void aSlowlorisPeerIsCutThoughItKeepsSendingBytes() throws Exception {
        start(fast().withTimeouts(Duration.ofMillis(500), Duration.ofSeconds(60), Duration.ofSeconds(5)));
        RawPeer slow = peer();
        DataOutputStream out = new DataOutputStream(slow.socket.getOutputStream());
        byte[] prefix = {0, 0, 0x10, 0}; // 4,096 bytes announced, then one byte every 100 ms

        boolean closed = false;
        for (int i = 0; i < 60 && !closed; i++) {
            try {
                out.write(i < 4 ? prefix[i] : 'x');
                out.flush();
            } catch (IOException e) {
                closed = true;
                break;
            }
            closed = slow.closedWithin(Duration.ofMillis(100));
        }

        // Cut while still sending a byte every 100 ms: activity that never completes a frame does not count.
        assertThat(closed).isTrue();
        assertThat(inbound).isEmpty();
    }

    @Test
    void aBoundMinionOutlivesTheUnauthenticatedTimeoutButNotTheIdleOne() throws Exception {
        Duration idle = Duration.ofSeconds(3);
        start(fast().withTimeouts(Duration.ofMillis(300), idle, Duration.ofSeconds(5)));
        RawPeer bound = boundPeer("web1");
        // A peer that connects after the bound one and never binds: once the unauthenticated timeout has cut it,
        // it has passed for the bound peer too.
        RawPeer unbound = peer();
        assertThat(unbound.closedWithin(CLOSE_WITHIN)).isTrue();

        bound.send("still here");
        await().until(() -> peersByText.containsKey("still here"));

        assertThat(bound.closedWithin(idle.plus(CLOSE_WITHIN))).isTrue();
    }

    @Test
    void connectionsOverTheUnauthenticatedCapAreClosed() throws IOException {
        start(fast().withConnectionLimits(100, 3));
        List<RawPeer> admitted = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            admitted.add(peer().send("p" + i));
        }
        await().until(() -> inbound.size() == 3);

        assertThat(peer().closedWithin(CLOSE_WITHIN)).isTrue();
        server.bind("web1", peersByText.get("p0")); // a bound connection no longer counts
        RawPeer next = peer().send("p3");
        await().until(() -> peersByText.containsKey("p3"));
        assertThat(next.closedWithin(Duration.ofMillis(200))).isFalse();
    }

    @Test
    void servesAThousandConcurrentConnections() throws IOException {
        start(fast(), null, null, true);
        List<RawPeer> peers = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            peers.add(peer());
        }
        for (int i = 0; i < peers.size(); i++) {
            peers.get(i).send("m" + i);
        }
        for (int i = 0; i < peers.size(); i++) {
            assertThat(peers.get(i).receiveText()).isEqualTo("re:m" + i);
        }
        await().until(() -> peersByText.size() == 1000);
        List<String> ids = IntStream.range(0, 1000).mapToObj(i -> "m" + i).collect(Collectors.toList());
        ids.forEach(id -> server.bind(id, peersByText.get(id)));

        assertThat(server.publish(ids, text("everyone"))).isEmpty();
        for (RawPeer peer : peers) {
            assertThat(peer.receiveText()).isEqualTo("everyone");
        }
        assertThat(server.connectionCount()).isEqualTo(1000);
    }

    // ---- TLS ----

    private SslContext serverTls() throws IOException {
        TestCertificates.CertFiles files = TestCertificates.selfSigned(dir, "master", 0);
        return TcpTls.server(files.cert(), files.key());
    }

    private SSLSocket tlsClient() throws Exception {
        X509Certificate cert = (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(Files.newInputStream(dir.resolve("master.crt")));
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        trust.setCertificateEntry("master", cert);
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, factory.getTrustManagers(), null);
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port());
        socket.setSoTimeout(10_000);
        closeables.add(socket);
        return socket;
    }

    @Test
    void tlsCarriesTheSameFrames() throws Exception {
        start(fast(), serverTls(), null, true);
        SSLSocket socket = tlsClient();
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        DataInputStream in = new DataInputStream(socket.getInputStream());

        out.writeInt(5);
        out.write(text("hello"));
        out.flush();

        assertThat(in.readInt()).isEqualTo(8);
        byte[] reply = new byte[8];
        in.readFully(reply);
        assertThat(new String(reply, US_ASCII)).isEqualTo("re:hello");
    }

    @Test
    void aTlsServerRefusesAPlainTextPeer() throws Exception {
        start(fast(), serverTls(), null, true);

        RawPeer plain = peer().send("hello");

        assertThat(plain.closedWithin(CLOSE_WITHIN)).isTrue();
        assertThat(inbound).isEmpty();
    }

    @Test
    void refusesAKeyThatIsNotAKey() throws IOException {
        TestCertificates.CertFiles files = TestCertificates.selfSigned(dir, "master", 0);

        assertThatThrownBy(() -> TcpTls.server(files.cert(), files.cert()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("no PEM private key");
    }
}

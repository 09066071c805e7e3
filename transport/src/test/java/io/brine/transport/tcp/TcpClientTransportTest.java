package io.brine.transport.tcp;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.codec.FrameLimits;
import io.brine.transport.testing.CountingListener;
import io.brine.transport.testing.TestCertificates;
import io.brine.transport.tls.TlsFiles;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The minion's TCP transport against a fake master on plain sockets. */
class TcpClientTransportTest {

    private static final TcpClientOptions FAST = TcpClientOptions.defaults()
            .withReconnect(Duration.ofMillis(50), Duration.ofMillis(200))
            .withIo(TcpIo.NIO);

    @TempDir
    Path dir;

    private final List<AutoCloseable> closeables = new ArrayList<>();

    /** A minion's view: everything arrives on the event loop and is only queued here. */
    private static final class Recorder extends CountingListener {
        final BlockingQueue<String> frames = new LinkedBlockingQueue<>();
        final AtomicInteger publications = new AtomicInteger();

        @Override
        public void onReply(byte[] frame) {
            frames.add(new String(frame, US_ASCII));
        }

        @Override
        public void onPublication(byte[] frame) {
            publications.incrementAndGet();
        }

        String next() throws InterruptedException {
            return frames.poll(10, TimeUnit.SECONDS);
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closing(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    private TcpClientTransport client(
            int port, TcpClientOptions options, SslContext tls, EventLoopGroup group, Recorder recorder)
            throws IOException {
        TcpClientTransport client = closing(new TcpClientTransport("127.0.0.1", port, options, tls, group));
        client.start(recorder);
        return client;
    }

    private static byte[] text(String s) {
        return s.getBytes(US_ASCII);
    }

    @Test
    void sendsFramesAndDeliversEverythingFromTheMasterAsReplies() throws Exception {
        FakeMaster master = closing(FakeMaster.plain(0));
        Recorder minion = new Recorder();
        TcpClientTransport client = client(master.port(), FAST, null, null, minion);

        assertThat(client.send(text("auth"))).isTrue();
        await().until(() -> master.connections.size() == 1);
        assertThat(master.last().frames.poll(10, TimeUnit.SECONDS)).isEqualTo("auth");
        client.subscribe("web1", 0);
        master.last().send("reply");
        master.last().send("publication");

        assertThat(minion.next()).isEqualTo("reply");
        assertThat(minion.next()).isEqualTo("publication");
        assertThat(minion.publications).hasValue(0);
        assertThat(client.isConnected()).isTrue();
        assertThat(minion.connected).hasValue(1); // the first connection is reported too
    }

    @Test
    void queuesFramesUntilTheMasterIsUpThenSendsThemInOrder() throws Exception {
        int port;
        try (FakeMaster probe = FakeMaster.plain(0)) {
            port = probe.port(); // a free port, closed again: the client finds nobody there
        }
        Recorder minion = new Recorder();
        TcpClientTransport client = client(port, FAST, null, null, minion);
        assertThat(client.send(text("one"))).isTrue();
        assertThat(client.send(text("two"))).isTrue();

        FakeMaster master = closing(FakeMaster.plain(port));

        await().until(() -> master.connections.size() == 1);
        assertThat(master.last().frames.poll(10, TimeUnit.SECONDS)).isEqualTo("one");
        assertThat(master.last().frames.poll(10, TimeUnit.SECONDS)).isEqualTo("two");
    }

    @Test
    void refusesFramesBeyondTheQueueWhileDisconnected() throws Exception {
        int port;
        try (FakeMaster probe = FakeMaster.plain(0)) {
            port = probe.port();
        }
        TcpClientTransport client =
                client(port, FAST.withQueue(FrameLimits.MAX_FRAME + 4L, 2), null, null, new Recorder());

        assertThat(client.send(text("a"))).isTrue();
        assertThat(client.send(text("b"))).isTrue();
        assertThat(client.send(text("c"))).isFalse();
        assertThat(client.send(new byte[FrameLimits.MAX_FRAME + 1])).isFalse();
    }

    @Test
    void reconnectsAfterTheMasterDropsTheConnection() throws Exception {
        FakeMaster master = closing(FakeMaster.plain(0));
        Recorder minion = new Recorder();
        TcpClientTransport client = client(master.port(), FAST, null, null, minion);
        await().until(() -> master.connections.size() == 1 && client.isConnected());

        master.last().socket.close();

        await().until(() -> minion.disconnected.get() == 1);
        await().until(() -> master.connections.size() == 2 && minion.connected.get() == 2);
        assertThat(client.send(text("after"))).isTrue();
        assertThat(master.last().frames.poll(10, TimeUnit.SECONDS)).isEqualTo("after");
    }

    @Test
    void aHugeLengthFromTheMasterDropsTheConnection() throws Exception {
        FakeMaster master = closing(FakeMaster.plain(0));
        Recorder minion = new Recorder();
        client(master.port(), FAST, null, null, minion);
        await().until(() -> master.connections.size() == 1);

        master.last().sendPrefix(FrameLimits.MAX_FRAME + 1);

        await().until(() -> minion.disconnected.get() == 1 && master.connections.size() == 2);
        assertThat(minion.frames).isEmpty();
    }

    @Test
    void aSilentMasterCountsAsLost() throws Exception {
        FakeMaster master = closing(FakeMaster.plain(0));
        Recorder minion = new Recorder();
        client(master.port(), FAST.withIdleTimeout(Duration.ofMillis(300)), null, null, minion);

        await().until(() -> minion.disconnected.get() >= 1);
        await().until(() -> master.connections.size() >= 2);
    }

    @Test
    void transportsCanShareOneEventLoopGroup() throws Exception {
        FakeMaster master = closing(FakeMaster.plain(0));
        EventLoopGroup group = TcpIo.NIO.newGroup(1, "shared");
        closing(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly());
        List<TcpClientTransport> clients = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            TcpClientTransport client = client(master.port(), FAST, null, group, new Recorder());
            client.send(text("m" + i));
            clients.add(client);
        }
        await().until(() -> master.connections.size() == 20);
        await().until(() ->
                master.connections.stream().mapToInt(c -> c.frames.size()).sum() == 20);

        clients.forEach(TcpClientTransport::close);

        assertThat(group.isShuttingDown()).isFalse();
    }

    // ---- TLS ----

    private FakeMaster tlsMaster() throws Exception {
        TestCertificates.CertFiles files = TestCertificates.selfSigned(dir, "master", 0);
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry(
                "master",
                TlsFiles.privateKey(files.key()),
                new char[0],
                TlsFiles.certificates(files.cert()).toArray(new Certificate[0]));
        KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        factory.init(keys, new char[0]);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(factory.getKeyManagers(), null, null);
        return closing(new FakeMaster(context.getServerSocketFactory(), 0));
    }

    @Test
    void tlsRoundTripWithTheMastersCertificateVerified() throws Exception {
        FakeMaster master = tlsMaster();
        Recorder minion = new Recorder();
        SslContext tls = TcpClientTls.client(dir.resolve("master.crt"), true);
        TcpClientTransport client = client(master.port(), FAST, tls, null, minion);

        client.send(text("over tls"));
        await().until(() -> master.connections.size() == 1);
        assertThat(master.last().frames.poll(10, TimeUnit.SECONDS)).isEqualTo("over tls");
        master.last().send("back");
        assertThat(minion.next()).isEqualTo("back");
    }

    @Test
    void aMasterCertificateFromAnotherCaIsRefused() throws Exception {
        FakeMaster master = tlsMaster();
        TestCertificates.CertFiles other = TestCertificates.selfSigned(dir.resolve("other"), "other", 1);
        TcpClientTransport client =
                client(master.port(), FAST, TcpClientTls.client(other.cert(), false), null, new Recorder());

        client.send(text("secret"));

        await().until(() -> master.connections.size() >= 2); // handshakes fail and are retried
        assertThat(client.isConnected()).isFalse();
        assertThat(master.connections.stream().allMatch(c -> c.frames.isEmpty()))
                .isTrue();
    }
}

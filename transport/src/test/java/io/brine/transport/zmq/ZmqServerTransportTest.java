package io.brine.transport.zmq;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.codec.FrameLimits;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.ServerTransport.Addresses;
import io.brine.transport.testing.Threads;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** The master's ZeroMQ transport against raw jeromq peers on loopback. */
class ZmqServerTransportTest {

    private static final int RECEIVE_TIMEOUT_MILLIS = 10_000;
    /** A handshake that stalls is retried quickly rather than after ZeroMQ's 30 s (see ZmqClientOptions). */
    private static final int HANDSHAKE_MILLIS = 1_000;

    private final BlockingQueue<Inbound> inbound = new LinkedBlockingQueue<>();
    private final Set<String> undelivered = ConcurrentHashMap.newKeySet();
    private final AtomicInteger undeliveredCalls = new AtomicInteger();
    private ZContext peers;
    private ZmqServerTransport server;

    private record Inbound(Peer peer, byte[] frame) {
        String text() {
            return new String(frame, US_ASCII);
        }
    }

    @BeforeEach
    void setUp() {
        peers = new ZContext();
        peers.setLinger(0);
    }

    @AfterEach
    void tearDown() {
        if (server != null) {
            server.close();
        }
        peers.close();
    }

    private ZmqServerTransport startServer(ZmqServerOptions options) throws IOException {
        server = new ZmqServerTransport("127.0.0.1", 0, 0, options, (ids, frame) -> {
            undelivered.addAll(ids);
            undeliveredCalls.incrementAndGet();
        });
        server.start((peer, frame) -> inbound.add(new Inbound(peer, frame)));
        return server;
    }

    /** A server that answers every frame with "re:" + frame, straight from the handler (which only enqueues). */
    private ZmqServerTransport startEchoServer() throws IOException {
        server = new ZmqServerTransport("127.0.0.1", 0, 0);
        ZmqServerTransport echo = server;
        server.start((peer, frame) -> {
            inbound.add(new Inbound(peer, frame));
            echo.send(peer, ("re:" + new String(frame, US_ASCII)).getBytes(US_ASCII));
        });
        return server;
    }

    private ZMQ.Socket peer(SocketType type, int port) {
        ZMQ.Socket socket = peers.createSocket(type);
        socket.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
        socket.setHandshakeIvl(HANDSHAKE_MILLIS);
        socket.connect("tcp://127.0.0.1:" + port);
        return socket;
    }

    private ZMQ.Socket subscriber(String minionId) {
        ZMQ.Socket sub = peers.createSocket(SocketType.SUB);
        sub.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
        sub.setHandshakeIvl(HANDSHAKE_MILLIS);
        sub.subscribe(("m/" + minionId + "/").getBytes(US_ASCII));
        sub.subscribe("b/".getBytes(US_ASCII));
        sub.connect("tcp://127.0.0.1:" + server.addresses().publish().getPort());
        return sub;
    }

    private void awaitSubscribed(String... minionIds) {
        await().until(() -> server.subscribedMinions().containsAll(List.of(minionIds)));
    }

    /** The next publication on {@code sub}: checks the topic frame and returns the brine frame as text. */
    private static String nextPublication(ZMQ.Socket sub, String minionId) {
        byte[] topic = sub.recv();
        assertThat(topic).as("publication for %s", minionId).isNotNull();
        assertThat(new String(topic, US_ASCII)).isEqualTo("m/" + minionId + "/");
        assertThat(sub.hasReceiveMore()).isTrue();
        byte[] frame = sub.recv();
        assertThat(sub.hasReceiveMore()).isFalse();
        return new String(frame, US_ASCII);
    }

    private static byte[] text(String s) {
        return s.getBytes(US_ASCII);
    }

    @Test
    void reportsTheBoundAddresses() throws IOException {
        Addresses addresses = startServer(ZmqServerOptions.defaults()).addresses();

        assertThat(addresses.request().getAddress().getHostAddress()).isEqualTo("127.0.0.1");
        assertThat(addresses.request().getPort()).isPositive();
        assertThat(addresses.publish().getPort()).isPositive().isNotEqualTo(addresses.request().getPort());
    }

    @Test
    void startFailsWithIoExceptionWhenThePortIsTaken() throws IOException {
        int taken = startServer(ZmqServerOptions.defaults()).addresses().request().getPort();

        try (ZmqServerTransport second = new ZmqServerTransport("127.0.0.1", taken, 0)) {
            assertThatThrownBy(() -> second.start((peer, frame) -> { })).isInstanceOf(IOException.class);
        }
    }

    @Test
    void routesEachReplyToThePeerThatAsked() throws IOException {
        int port = startEchoServer().addresses().request().getPort();
        List<ZMQ.Socket> clients = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            clients.add(peer(SocketType.DEALER, port));
        }

        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < clients.size(); i++) {
                clients.get(i).send("client-" + i + "-" + round);
            }
            for (int i = 0; i < clients.size(); i++) {
                assertThat(clients.get(i).recvStr()).isEqualTo("re:client-" + i + "-" + round);
            }
        }
        assertThat(inbound).hasSize(36).allSatisfy(in -> assertThat(in.peer().remoteAddress()).isEqualTo("127.0.0.1"));
        assertThat(inbound.stream().map(Inbound::peer).distinct()).hasSize(12);
    }

    @Test
    void acceptsAnEmptyDelimiterAndRepliesWithOne() throws IOException {
        int port = startEchoServer().addresses().request().getPort();
        ZMQ.Socket req = peer(SocketType.REQ, port);

        req.send("hello");

        assertThat(req.recvStr()).isEqualTo("re:hello");
        assertThat(inbound).extracting(Inbound::text).containsExactly("hello");
    }

    @Test
    void dropsMessagesWithUnexpectedFrameCounts() throws IOException {
        int port = startServer(ZmqServerOptions.defaults()).addresses().request().getPort();
        ZMQ.Socket dealer = peer(SocketType.DEALER, port);

        dealer.sendMore("not-a-delimiter");
        dealer.send("frame");
        dealer.sendMore("");
        dealer.sendMore("two");
        dealer.send("frames");
        dealer.send("good");

        await().until(() -> !inbound.isEmpty());
        // Same connection, so the malformed ones were handled (dropped) before "good" arrived.
        assertThat(inbound).extracting(Inbound::text).containsExactly("good");
    }

    @Test
    void dropsAnOversizedFrameAndTheConnectionWhileOthersCarryOn() throws IOException {
        int port = startEchoServer().addresses().request().getPort();
        ZMQ.Socket big = peer(SocketType.DEALER, port);
        big.monitor("inproc://big-monitor", ZMQ.EVENT_DISCONNECTED);
        ZMQ.Socket bigMonitor = peers.createSocket(SocketType.PAIR);
        bigMonitor.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
        bigMonitor.connect("inproc://big-monitor");
        ZMQ.Socket other = peer(SocketType.DEALER, port);
        big.send("hello");
        assertThat(big.recvStr()).isEqualTo("re:hello"); // connected: the disconnection below is the server's doing

        big.send(new byte[FrameLimits.MAX_FRAME + 1]);

        ZMQ.Event event = ZMQ.Event.recv(bigMonitor);
        assertThat(event).isNotNull();
        assertThat(event.getEvent()).isEqualTo(ZMQ.EVENT_DISCONNECTED);
        other.send("still here");
        assertThat(other.recvStr()).isEqualTo("re:still here");
        big.send("small again");
        assertThat(big.recvStr()).isEqualTo("re:small again");
        assertThat(inbound).extracting(Inbound::text).containsExactlyInAnyOrder("hello", "still here", "small again");
    }

    @Test
    void deliversEachPublicationOnlyToItsMinion() throws IOException {
        startServer(ZmqServerOptions.defaults());
        ZMQ.Socket web1 = subscriber("web1");
        ZMQ.Socket web10 = subscriber("web10");
        awaitSubscribed("web1", "web10");

        assertThat(server.publish(List.of("web10"), text("a10"))).isEmpty();
        assertThat(server.publish(List.of("web1"), text("a1"))).isEmpty();
        assertThat(server.publish(List.of("web1"), text("b1"))).isEmpty();
        assertThat(server.publish(List.of("web10"), text("b10"))).isEmpty();
        assertThat(server.publish(List.of("web1", "web10"), text("end"))).isEmpty();

        // Per-connection order: anything foreign would show up before "end".
        assertThat(List.of(nextPublication(web1, "web1"), nextPublication(web1, "web1"), nextPublication(web1, "web1")))
                .containsExactly("a1", "b1", "end");
        assertThat(List.of(nextPublication(web10, "web10"), nextPublication(web10, "web10"),
                nextPublication(web10, "web10"))).containsExactly("a10", "b10", "end");
        assertThat(undelivered).isEmpty();
    }

    @Test
    void deliversABurstCompletelyAndInOrder() throws IOException {
        startServer(ZmqServerOptions.defaults());
        List<String> ids = List.of("m0", "m1", "m2", "m3");
        List<ZMQ.Socket> subs = ids.stream().map(this::subscriber).toList();
        awaitSubscribed(ids.toArray(String[]::new));
        int count = 20_000;

        for (int serial = 0; serial < count; serial++) {
            byte[] frame = ByteBuffer.allocate(128).putInt(serial).array();
            assertThat(server.publish(ids, frame)).isEmpty();
        }

        for (int s = 0; s < subs.size(); s++) {
            ZMQ.Socket sub = subs.get(s);
            for (int serial = 0; serial < count; serial++) {
                byte[] topic = sub.recv();
                assertThat(topic).as("publication %d for %s", serial, ids.get(s)).isNotNull();
                assertThat(ByteBuffer.wrap(sub.recv()).getInt()).isEqualTo(serial);
            }
        }
        assertThat(undeliveredCalls).hasValue(0);
    }

    @Test
    void returnsMinionsThatAreNotSubscribed() throws IOException {
        startServer(ZmqServerOptions.defaults());
        ZMQ.Socket web1 = subscriber("web1");
        awaitSubscribed("web1");

        assertThat(server.publish(List.of("web1", "ghost", "Not-An-Id"), text("x")))
                .containsExactlyInAnyOrder("ghost", "Not-An-Id");
        assertThat(nextPublication(web1, "web1")).isEqualTo("x");
    }

    @Test
    void forgetsAMinionWhenItsSubscriberGoesAway() throws IOException {
        startServer(ZmqServerOptions.defaults());
        ZMQ.Socket web1 = subscriber("web1");
        awaitSubscribed("web1");

        web1.close();

        await().until(() -> !server.subscribedMinions().contains("web1"));
        assertThat(server.publish(List.of("web1"), text("x"))).containsExactly("web1");
    }

    @Test
    void unbindForgetsTheSubscription() throws IOException {
        startServer(ZmqServerOptions.defaults());
        subscriber("web1");
        awaitSubscribed("web1");

        server.unbind("web1");

        await().until(() -> !server.subscribedMinions().contains("web1"));
        assertThat(server.publish(List.of("web1"), text("x"))).containsExactly("web1");
    }

    @Test
    void bindRoutesToAnUnboundMinionAgainWhoseSubscriptionIsStillLive() throws IOException {
        startServer(ZmqServerOptions.defaults());
        ZMQ.Socket web1 = subscriber("web1");
        awaitSubscribed("web1");
        server.unbind("web1");
        await().until(() -> !server.subscribedMinions().contains("web1"));

        // Removed, then accepted again on the same connection: the SUB never subscribes anew.
        server.bind("web1", new ZmqPeer(text("id"), "127.0.0.1", false));

        awaitSubscribed("web1");
        assertThat(server.publish(List.of("web1"), text("x"))).isEmpty();
        assertThat(nextPublication(web1, "web1")).isEqualTo("x");
        server.bind("ghost", new ZmqPeer(text("id"), "127.0.0.1", false));
        assertThat(server.publish(List.of("ghost"), text("y"))).containsExactly("ghost");
    }

    @Test
    void reportsAMinionWhoseQueueIsFullWithoutHoldingUpOthers() throws IOException {
        startServer(ZmqServerOptions.defaults().withPublishHighWaterMark(10));
        ZMQ.Socket stalled = peers.createSocket(SocketType.SUB);
        stalled.setRcvHWM(10);
        stalled.setHandshakeIvl(HANDSHAKE_MILLIS);
        stalled.setReceiveBufferSize(64 * 1024); // a fixed TCP window: no autotuning up to tens of MiB
        stalled.subscribe(text("m/slow/"));
        stalled.connect("tcp://127.0.0.1:" + server.addresses().publish().getPort());
        ZMQ.Socket fast = subscriber("fast");
        awaitSubscribed("slow", "fast");

        // "slow" never reads, so well before 25 MiB its TCP buffers and then its queue are full. Every send to
        // "fast" follows a send to "slow": after a refused one, jeromq alone would refuse "fast" too (and
        // later copy its frames to "slow"), see XpubUnmatch. In lockstep, so "fast" never has two queued.
        for (int serial = 0; serial < 100; serial++) {
            byte[] frame = ByteBuffer.allocate(256 * 1024).putInt(serial).array();
            assertThat(server.publish(List.of("slow", "fast"), frame)).isEmpty();
            assertThat(fast.recv()).as("publication %d", serial).isNotNull();
            assertThat(ByteBuffer.wrap(fast.recv()).getInt()).isEqualTo(serial);
        }

        await().until(() -> undelivered.contains("slow"));
        assertThat(undelivered).containsExactly("slow");
    }

    @Test
    void refusesEverythingOnceClosedAndClosesTwice() throws IOException {
        startServer(ZmqServerOptions.defaults());
        subscriber("web1");
        awaitSubscribed("web1");
        server.publish(List.of("web1"), text("before"));
        Peer somePeer = new ZmqPeer(new byte[] {0, 1, 2, 3, 4}, "127.0.0.1", false);

        server.close();
        server.close();

        assertThat(server.send(somePeer, text("x"))).isFalse();
        assertThat(server.publish(List.of("web1"), text("x"))).containsExactly("web1");
    }

    @Test
    void closeStopsEveryThreadItStarted() throws IOException {
        Set<Thread> before = Threads.live();
        ServerTransport transport = new ZmqServerTransport("127.0.0.1", 0, 0);
        transport.start((peer, frame) -> { });
        assertThat(Threads.newSince(before)).extracting(Thread::getName).contains("brine-zmq-server");

        transport.close();

        // Polled on this thread: Awaitility's own poller thread would count as new.
        await().pollInSameThread().untilAsserted(() -> assertThat(Threads.newSince(before)).isEmpty());
    }

    @Test
    void peersAreEqualByIdentityAndKeepOnlyTheIp() {
        ZmqPeer a = new ZmqPeer(new byte[] {0, 1, 2}, ZmqPeer.addressOf("10.0.0.7:51234"), false);
        ZmqPeer b = new ZmqPeer(new byte[] {0, 1, 2}, ZmqPeer.addressOf("10.0.0.7:51234"), true);
        ZmqPeer c = new ZmqPeer(new byte[] {0, 1, 3}, ZmqPeer.addressOf("10.0.0.7:51234"), false);

        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b).isNotEqualTo(c);
        assertThat(a.remoteAddress()).isEqualTo("10.0.0.7");
        assertThat(ZmqPeer.addressOf("0:0:0:0:0:0:0:1:4506")).isEqualTo("0:0:0:0:0:0:0:1");
        assertThat(ZmqPeer.addressOf(null)).isEqualTo("unknown");
    }
}

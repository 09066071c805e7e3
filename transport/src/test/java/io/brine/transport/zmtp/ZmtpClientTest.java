package io.brine.transport.zmtp;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.tcp.TcpIo;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The client side of the ZMTP codec ({@link ZmtpClientPipeline}) on Netty against real servers on loopback: the
 * master's own {@link ZmtpServerTransport}, jeromq's ROUTER and PUB (a ZeroMQ that brine did not write), and a raw
 * server that shows the bytes and the timers.
 */
class ZmtpClientTest {

    private static final ZmtpClientPipeline.Timers QUIET =
            new ZmtpClientPipeline.Timers(Duration.ofSeconds(10), Duration.ofHours(1), Duration.ofHours(1));

    private final EventLoopGroup group = TcpIo.NIO.newGroup(1, "zmtp-client-test");
    private final ZContext zmq = new ZContext(1);
    private final Map<String, Peer> peersByText = new ConcurrentHashMap<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private ZmtpServerTransport server;

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        zmq.close();
        if (server != null) {
            server.close();
        }
    }

    /** A client connection and what its pipeline passed on, in order. */
    record Client(Channel channel, BlockingQueue<Object> events) {

        Object next() throws InterruptedException {
            Object event = events.poll(30, TimeUnit.SECONDS);
            assertThat(event).as("an event within 30 s").isNotNull();
            return event;
        }

        /** The next event that is not a heartbeat. */
        Object nextSkippingHeartbeats() throws InterruptedException {
            Object event = next();
            while (event instanceof ZmtpEvent.Ping || event instanceof ZmtpEvent.Pong) {
                event = next();
            }
            return event;
        }

        List<String> nextMessage() throws InterruptedException {
            Object event = nextSkippingHeartbeats();
            assertThat(event).isInstanceOf(ZmtpEvent.Message.class);
            return ((ZmtpEvent.Message) event)
                    .parts().stream().map(b -> new String(b, US_ASCII)).toList();
        }

        void send(String... parts) {
            List<byte[]> bytes =
                    Arrays.stream(parts).map(p -> p.getBytes(US_ASCII)).toList();
            channel.writeAndFlush(ZmtpEncoder.message(channel.alloc(), bytes));
        }

        void subscribe(String topic) {
            channel.writeAndFlush(new ZmtpEvent.Subscribe(topic.getBytes(US_ASCII)));
        }
    }

    Client connect(int port, SocketType ours, ZmtpClientPipeline.Timers timers) {
        BlockingQueue<Object> events = new LinkedBlockingQueue<>();
        Channel channel = new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ZmtpClientPipeline.addTo(ch.pipeline(), ours, ZmtpLimits.fixed(1 << 20, 16, 1 << 20), timers);
                        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                events.add(msg);
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                events.add("closed");
                            }
                        });
                    }
                })
                .connect("127.0.0.1", port)
                .syncUninterruptibly()
                .channel();
        closeables.add(() -> channel.close().syncUninterruptibly());
        return new Client(channel, events);
    }

    Client handshaken(int port, SocketType ours, SocketType theirs, ZmtpClientPipeline.Timers timers)
            throws InterruptedException {
        Client client = connect(port, ours, timers);
        assertThat(client.next())
                .isInstanceOfSatisfying(
                        ZmtpEvent.Handshaken.class,
                        h -> assertThat(h.socketType()).isEqualTo(theirs));
        return client;
    }

    void startServer(ZmtpServerOptions options) throws IOException {
        server = new ZmtpServerTransport("127.0.0.1", 0, 0, options, null, (ids, frame) -> {});
        ZmtpServerTransport self = server;
        server.start(new ServerTransport.InboundHandler() {
            @Override
            public void onFrame(Peer from, byte[] frame) {
                String text = new String(frame, US_ASCII);
                peersByText.put(text, from);
                self.send(from, ("re:" + text).getBytes(US_ASCII));
            }
        });
    }

    // ---------------------------------------------------------------- the master's server transport

    @Test
    void aDealerAndASubscriberTalkToTheMastersServerTransportAsAMinionsSocketsDo() throws Exception {
        startServer(ZmtpServerTransportTest.fast());
        Client dealer = handshaken(server.addresses().request().getPort(), SocketType.DEALER, SocketType.ROUTER, QUIET);
        dealer.send("auth web1");
        assertThat(dealer.nextMessage()).containsExactly("re:auth web1");
        server.bind("web1", peersByText.get("auth web1"));

        Client sub = handshaken(server.addresses().publish().getPort(), SocketType.SUB, SocketType.PUB, QUIET);
        sub.subscribe("m/web1/");
        sub.subscribe("b/");
        await().until(() -> server.subscribedMinions().contains("web1"));
        assertThat(server.publish(List.of("web1"), "job-1".getBytes(US_ASCII))).isEmpty();
        assertThat(sub.nextMessage()).containsExactly("m/web1/", "job-1");
    }

    @Test
    void theServersPingsAreAnsweredSoAQuietBoundClientIsNotClosed() throws Exception {
        // Pinged after 1 s of quiet, closed after 2 s without an answer: a second of slack for a loaded machine.
        startServer(ZmtpServerTransportTest.fast().withTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(2)));
        Client dealer = handshaken(server.addresses().request().getPort(), SocketType.DEALER, SocketType.ROUTER, QUIET);
        dealer.send("hello web1");
        assertThat(dealer.nextMessage()).containsExactly("re:hello web1");
        server.bind("web1", peersByText.get("hello web1"));
        // Without the PONGs the server closes a bound peer one idle timeout after its first PING.
        for (int i = 0; i < 2; i++) {
            assertThat(dealer.next()).isInstanceOf(ZmtpEvent.Ping.class);
        }
        dealer.send("still here");
        assertThat(dealer.nextMessage()).containsExactly("re:still here");
        assertThat(server.connectionCount()).isEqualTo(1);
    }

    // ---------------------------------------------------------------- jeromq

    @Test
    void aDealerTalksToAJeromqRouterAndItsHeartbeatsAreAnswered() throws Exception {
        ZMQ.Socket router = zmq.createSocket(org.zeromq.SocketType.ROUTER);
        router.setReceiveTimeOut(30_000);
        int port = router.bindToRandomPort("tcp://127.0.0.1");
        Client dealer = handshaken(
                port,
                SocketType.DEALER,
                SocketType.ROUTER,
                new ZmtpClientPipeline.Timers(Duration.ofSeconds(10), Duration.ofMillis(50), Duration.ofSeconds(30)));
        dealer.send("ping?");
        ZMsg request = ZMsg.recvMsg(router);
        assertThat(request).hasSize(2);
        assertThat(request.getLast().getString(US_ASCII)).isEqualTo("ping?");
        request.getLast().reset("pong!");
        request.send(router);
        assertThat(dealer.nextMessage()).containsExactly("pong!");
        assertThat(dealer.next()).as("jeromq answers our PING").isInstanceOf(ZmtpEvent.Pong.class);
    }

    @Test
    void aSubscriberGetsOnlyItsTopicsFromAJeromqPub() throws Exception {
        ZMQ.Socket pub = zmq.createSocket(org.zeromq.SocketType.PUB);
        int port = pub.bindToRandomPort("tcp://127.0.0.1");
        Client sub = handshaken(port, SocketType.SUB, SocketType.PUB, QUIET);
        sub.subscribe("m/web1/");
        // A PUB drops what it has no subscription for yet: publish until the subscription has arrived.
        await().until(() -> {
            pub.sendMore("m/web2/");
            pub.send("not for web1");
            pub.sendMore("m/web1/");
            pub.send("for web1");
            return !sub.events().isEmpty();
        });
        assertThat(sub.nextMessage()).containsExactly("m/web1/", "for web1");
    }

    @Test
    void aServerOfTheWrongTypeIsRefused() throws Exception {
        ZMQ.Socket pub = zmq.createSocket(org.zeromq.SocketType.PUB);
        int port = pub.bindToRandomPort("tcp://127.0.0.1");
        Client dealer = connect(port, SocketType.DEALER, QUIET);
        assertThat(dealer.next())
                .isInstanceOfSatisfying(
                        ZmtpEvent.Refused.class,
                        r -> assertThat(r.reason()).isEqualTo("Socket-Type PUB cannot talk to DEALER"));
        assertThat(dealer.next()).isEqualTo("closed");
    }

    // ---------------------------------------------------------------- the bytes and the timers

    @Test
    void aSubscriptionToAZmtp30ServerIsTheMessageFormAndToA31ServerTheCommand() throws Exception {
        for (int minor : new int[] {0, 1}) {
            try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                Client sub = connect(listener.getLocalPort(), SocketType.SUB, QUIET);
                try (RawZmtp raw = RawZmtp.accepted(listener.accept())) {
                    raw.send(Wire.concat(Wire.greeting(3, minor, "NULL", 0), Wire.ready("Socket-Type", "PUB")));
                    assertThat(raw.readGreeting()).startsWith(Wire.greeting31());
                    assertThat(raw.readFrame().body())
                            .isEqualTo(Wire.commandBody("READY", Wire.properties("Socket-Type", "SUB")));
                    assertThat(sub.next()).isInstanceOf(ZmtpEvent.Handshaken.class);
                    sub.subscribe("b/");
                    RawZmtp.Frame subscription = raw.readFrame();
                    if (minor == 0) {
                        assertThat(subscription.command()).isFalse();
                        assertThat(subscription.body()).isEqualTo(Wire.ascii("\u0001b/"));
                    } else {
                        assertThat(subscription.command()).isTrue();
                        assertThat(subscription.body()).isEqualTo(Wire.commandBody("SUBSCRIBE", Wire.ascii("b/")));
                    }
                }
            }
        }
    }

    @Test
    void aHeartbeatIntervalOfZeroMeansNoneAndANegativeOneIsRefused() {
        assertThat(new ZmtpClientPipeline.Timers(Duration.ofSeconds(1), Duration.ZERO, Duration.ofSeconds(1))
                        .heartbeatInterval())
                .isZero();
        assertThatThrownBy(() -> new ZmtpClientPipeline.Timers(
                        Duration.ofSeconds(1), Duration.ofMillis(-1), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aServerSilentAfterOurHeartbeatIsDroppedAfterTheTimeout() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Client dealer = connect(
                    listener.getLocalPort(),
                    SocketType.DEALER,
                    new ZmtpClientPipeline.Timers(
                            Duration.ofSeconds(10), Duration.ofMillis(100), Duration.ofMillis(300)));
            try (RawZmtp raw = RawZmtp.accepted(listener.accept())) {
                raw.send(Wire.handshake("ROUTER"));
                assertThat(dealer.next()).isInstanceOf(ZmtpEvent.Handshaken.class);
                raw.readGreeting();
                raw.readFrame(); // READY
                RawZmtp.Frame ping = raw.readFrame();
                assertThat(ping.isPing()).isTrue();
                assertThat(ping.body())
                        .as("no TTL, no context, as a minion's jeromq sends it")
                        .isEqualTo(Wire.commandBody("PING", new byte[2]));
                assertThat(dealer.next())
                        .isInstanceOfSatisfying(
                                ZmtpEvent.Refused.class,
                                r -> assertThat(r.reason()).contains("of a heartbeat"));
                assertThat(dealer.next()).isEqualTo("closed");
            }
        }
    }

    @Test
    void handlersAddedToAnAlreadyOpenConnectionGreetAndTimeTheHandshake() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            BlockingQueue<Object> events = new LinkedBlockingQueue<>();
            Channel channel = new Bootstrap()
                    .group(group)
                    .channel(NioSocketChannel.class)
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect("127.0.0.1", listener.getLocalPort())
                    .syncUninterruptibly()
                    .channel();
            closeables.add(() -> channel.close().syncUninterruptibly());
            channel.eventLoop()
                    .submit(() -> {
                        ZmtpClientPipeline.addTo(
                                channel.pipeline(),
                                SocketType.DEALER,
                                ZmtpLimits.fixed(1 << 20, 16, 1 << 20),
                                new ZmtpClientPipeline.Timers(
                                        Duration.ofMillis(200), Duration.ofHours(1), Duration.ofHours(1)));
                        channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                events.add(msg);
                            }
                        });
                    })
                    .syncUninterruptibly();
            try (RawZmtp raw = RawZmtp.accepted(listener.accept())) {
                assertThat(raw.readGreeting())
                        .as("our greeting, sent when the handlers were added")
                        .hasSize(64);
                raw.send(Wire.greeting31()); // and never a READY: the handshake timer runs
                Object event = events.poll(30, TimeUnit.SECONDS);
                assertThat(event)
                        .isInstanceOfSatisfying(
                                ZmtpEvent.Refused.class,
                                r -> assertThat(r.reason()).startsWith("no ZMTP handshake"));
            }
        }
    }

    @Test
    void aHandshakeNotDoneInTimeIsDropped() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Client dealer = connect(
                    listener.getLocalPort(),
                    SocketType.DEALER,
                    new ZmtpClientPipeline.Timers(Duration.ofMillis(200), Duration.ofHours(1), Duration.ofHours(1)));
            try (RawZmtp raw = RawZmtp.accepted(listener.accept())) {
                raw.send(Wire.greeting31()); // and never a READY
                assertThat(dealer.next())
                        .isInstanceOfSatisfying(
                                ZmtpEvent.Refused.class,
                                r -> assertThat(r.reason()).startsWith("no ZMTP handshake"));
                assertThat(dealer.next()).isEqualTo("closed");
            }
        }
    }
}

package io.brine.transport.zmtp;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.codec.FrameLimits;
import io.brine.transport.ClientTransport;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.tcp.TcpIo;
import io.brine.transport.zmq.ZmqClientOptions;
import io.brine.transport.zmq.ZmqClientTransport;
import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The master's ZeroMQ transport on Netty against real peers on loopback: the minion's own client (jeromq DEALER and
 * SUB), jeromq REQ, and hand-written hostile peers. The server echoes every frame as "re:" + frame, and records who
 * sent what, so a test can bind the sender as a minion.
 */
class ZmtpServerTransportTest {

    private final BlockingQueue<String> inbound = new LinkedBlockingQueue<>();
    private final Map<String, Peer> peersByText = new ConcurrentHashMap<>();
    private final Set<String> lost = ConcurrentHashMap.newKeySet();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final ZContext zmq = new ZContext(1);
    private ZmtpServerTransport server;

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
        zmq.close();
        if (server != null) {
            server.close();
        }
    }

    static ZmtpServerOptions fast() {
        return ZmtpServerOptions.defaults().withIo(TcpIo.NIO, 1);
    }

    ZmtpServerTransport start(ZmtpServerOptions options) throws IOException {
        server = new ZmtpServerTransport("127.0.0.1", 0, 0, options, null, (ids, frame) -> lost.addAll(ids));
        ZmtpServerTransport self = server;
        server.start(new ServerTransport.InboundHandler() {
            @Override
            public void onFrame(Peer from, byte[] frame) {
                String text = new String(frame, US_ASCII);
                peersByText.put(text, from);
                inbound.add(text);
                self.send(from, ("re:" + text).getBytes(US_ASCII));
            }
        });
        return server;
    }

    int requestPort() {
        return server.addresses().request().getPort();
    }

    int publishPort() {
        return server.addresses().publish().getPort();
    }

    <T extends AutoCloseable> T closeLater(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    /** A jeromq socket of {@code type} connected to our request port. */
    ZMQ.Socket zmqSocket(SocketType type, int port) {
        ZMQ.Socket socket = zmq.createSocket(type);
        socket.setLinger(0);
        socket.setReceiveTimeOut(30_000);
        socket.connect("tcp://127.0.0.1:" + port);
        return socket;
    }

    /** What every hostile test ends with: a fresh real DEALER is still answered. */
    void assertStillServing() {
        ZMQ.Socket dealer = zmqSocket(SocketType.DEALER, requestPort());
        String hello = "still-serving-" + System.nanoTime();
        dealer.send(hello);
        assertThat(dealer.recvStr()).isEqualTo("re:" + hello);
        dealer.close();
    }

    /** A raw DEALER from 127.0.0.1 that said {@code hello ID} (read back) and is bound as {@code id}. */
    RawZmtp boundDealer(String id) throws IOException {
        RawZmtp dealer = closeLater(RawZmtp.handshaken("127.0.0.1", requestPort(), "DEALER"));
        dealer.send(Wire.message("hello " + id));
        assertThat(dealer.readMessage())
                .singleElement()
                .satisfies(b -> assertThat(new String(b, US_ASCII)).isEqualTo("re:hello " + id));
        server.bind(id, peersByText.get("hello " + id));
        return dealer;
    }

    RawZmtp subscriber(String localAddress, String... topics) throws IOException {
        RawZmtp sub = closeLater(RawZmtp.handshaken(localAddress, publishPort(), "SUB"));
        for (String topic : topics) {
            sub.send(Wire.command("SUBSCRIBE", Wire.ascii(topic)));
        }
        return sub;
    }

    // ---------------------------------------------------------------- request channel

    @Test
    void dealerFramesReachTheHandlerAndRepliesComeBackOnTheSameConnection() throws Exception {
        start(fast());
        ZMQ.Socket one = zmqSocket(SocketType.DEALER, requestPort());
        ZMQ.Socket two = zmqSocket(SocketType.DEALER, requestPort());
        one.send("from-one");
        two.send("from-two");
        assertThat(one.recvStr()).isEqualTo("re:from-one");
        assertThat(two.recvStr()).isEqualTo("re:from-two");
        assertThat(peersByText.get("from-one")).isNotEqualTo(peersByText.get("from-two"));
        assertThat(peersByText.get("from-one").remoteAddress()).isEqualTo("127.0.0.1");
    }

    @Test
    void aPortInUseFailsTheStartWithAnIoExceptionAndLeavesTheOtherServing() throws Exception {
        start(fast());
        ZmtpServerTransport second = new ZmtpServerTransport("127.0.0.1", 0, requestPort(), fast(), null, null);
        assertThatThrownBy(() -> second.start((from, frame) -> {}))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("cannot bind");
        second.close();
        assertStillServing();
    }

    @Test
    void reqPeersDelimiterIsStrippedAndPutBackOnTheReply() throws Exception {
        start(fast());
        ZMQ.Socket req = zmqSocket(SocketType.REQ, requestPort());
        req.send("question");
        assertThat(req.recvStr()).isEqualTo("re:question");
        assertThat(inbound).containsExactly("question");
        req.send("again");
        assertThat(req.recvStr()).isEqualTo("re:again");
    }

    @Test
    void beforeBindA64KiBMessagePassesAndOneBytePastClosesOnItsHeaderAndAfterBindTheSameAt8MiB() throws Exception {
        start(fast());
        RawZmtp unbound = closeLater(RawZmtp.handshaken("127.0.0.1", requestPort(), "DEALER"));
        byte[] limit = new byte[FrameLimits.MAX_UNAUTHENTICATED];
        limit[0] = 'u';
        unbound.send(Wire.longFrame(0, limit));
        await().until(() -> inbound.stream().anyMatch(text -> text.length() == FrameLimits.MAX_UNAUTHENTICATED));
        // Only the long-size header of one byte more: the refusal does not wait for the body.
        unbound.trySend(Wire.hex("02 0000000000010001"));
        assertThat(unbound.closedByServer()).isTrue();

        RawZmtp bound = boundDealer("web1");
        byte[] big = new byte[FrameLimits.MAX_FRAME];
        big[0] = 'x';
        bound.send(Wire.longFrame(0, big));
        await().until(() -> inbound.stream().anyMatch(text -> text.length() == FrameLimits.MAX_FRAME));
        bound.trySend(Wire.hex("02 0000000000800001"));
        assertThat(bound.closedByServer()).isTrue();
        assertThat(inbound).hasSize(3); // the two at their limits and the hello
        assertStillServing();
    }

    @Test
    void aMessageOfTheWrongShapeClosesItsConnection() throws Exception {
        start(fast());
        for (byte[] wrong : List.of(Wire.message("a", "b"), Wire.message(""), Wire.frame(0, new byte[0]))) {
            RawZmtp dealer = closeLater(RawZmtp.handshaken("127.0.0.1", requestPort(), "DEALER"));
            dealer.send(wrong);
            assertThat(dealer.readUntilClosed()).isEmpty();
        }
        RawZmtp req = closeLater(RawZmtp.handshaken("127.0.0.1", requestPort(), "REQ"));
        req.send(Wire.message("not-empty", "frame"));
        assertThat(req.readUntilClosed()).isEmpty();
        assertThat(inbound).isEmpty();
        assertStillServing();
    }

    // ---------------------------------------------------------------- publish channel

    @Test
    void theMinionsOwnClientAuthenticatesSubscribesAndReceivesItsPublications() throws Exception {
        start(fast());
        BlockingQueue<String> replies = new LinkedBlockingQueue<>();
        BlockingQueue<String> publications = new LinkedBlockingQueue<>();
        ZmqClientTransport client = closeLater(new ZmqClientTransport(
                "127.0.0.1",
                requestPort(),
                ZmqClientOptions.defaults()
                        .withHeartbeat(Duration.ofMillis(200), Duration.ofMillis(200), Duration.ofMillis(150))));
        client.start(new ClientTransport.Listener() {
            @Override
            public void onReply(byte[] frame) {
                replies.add(new String(frame, US_ASCII));
            }

            @Override
            public void onPublication(byte[] frame) {
                publications.add(new String(frame, US_ASCII));
            }
        });
        client.send("auth web1".getBytes(US_ASCII));
        assertThat(replies.poll(30, TimeUnit.SECONDS)).isEqualTo("re:auth web1");
        assertThat(server.publish(List.of("web1"), "too-early".getBytes(US_ASCII)))
                .containsExactly("web1");

        server.bind("web1", peersByText.get("auth web1"));
        client.subscribe("web1", publishPort());
        await().until(() -> server.subscribedMinions().contains("web1"));
        assertThat(server.publish(List.of("web1", "web2"), "job-1".getBytes(US_ASCII)))
                .containsExactly("web2");
        assertThat(publications.poll(30, TimeUnit.SECONDS)).isEqualTo("job-1");

        // The client's heartbeats (every 200 ms) reach the server and are answered; it stays connected.
        client.send("after-heartbeats".getBytes(US_ASCII));
        assertThat(replies.poll(30, TimeUnit.SECONDS)).isEqualTo("re:after-heartbeats");
        assertThat(server.connectionCount()).isEqualTo(2);
        assertThat(server.unauthenticatedCount()).isZero();
    }

    @Test
    void aSubscriptionBeforeTheBindIsHeldHonouredOnBindAndDroppedOnUnbind() throws Exception {
        start(fast());
        RawZmtp sub = subscriber("127.0.0.1", "m/web1/", "b/");
        await().until(() -> server.connectionCount() == 1);
        assertThat(server.publish(List.of("web1"), "held".getBytes(US_ASCII))).containsExactly("web1");

        RawZmtp dealer = boundDealer("web1");
        await().until(() -> server.subscribedMinions().contains("web1"));
        assertThat(server.publish(List.of("web1"), "honoured".getBytes(US_ASCII)))
                .isEmpty();
        assertThat(sub.readMessage()).extracting(b -> new String(b, US_ASCII)).containsExactly("m/web1/", "honoured");

        server.unbind("web1");
        assertThat(server.publish(List.of("web1"), "removed".getBytes(US_ASCII)))
                .containsExactly("web1");
        // Both of the removed minion's connections are closed; a live minion reconnects and subscribes anew.
        assertThat(dealer.readUntilClosed()).isEmpty();
        assertThat(sub.readUntilClosed()).isEmpty();
        assertStillServing();
    }

    @Test
    void unbindKeepsAPublishConnectionThatIsHonouredForAnotherMinion() throws Exception {
        start(fast());
        boundDealer("web1");
        boundDealer("web2");
        RawZmtp shared = subscriber("127.0.0.1", "m/web1/", "m/web2/");
        await().until(() -> server.subscribedMinions().containsAll(List.of("web1", "web2")));

        server.unbind("web1");
        assertThat(server.publish(List.of("web1", "web2"), "after".getBytes(US_ASCII)))
                .containsExactly("web1");
        assertThat(shared.readMessage())
                .extracting(b -> new String(b, US_ASCII))
                .containsExactly("m/web2/", "after");
    }

    @Test
    void aSubscriptionIsHonouredOnlyFromTheAddressOfTheMinionsLiveRequestConnection() throws Exception {
        start(fast());
        RawZmtp dealer = boundDealer("web1");
        RawZmtp thief = subscriber("127.0.0.2", "m/web1/");
        await().until(() -> server.connectionCount() == 2);
        // Another host's subscription to web1's topic: web1 has no publish connection yet.
        assertThat(server.publish(List.of("web1"), "one".getBytes(US_ASCII))).containsExactly("web1");

        RawZmtp own = subscriber("127.0.0.1", "m/web1/");
        await().until(() -> server.subscribedMinions().contains("web1"));
        assertThat(server.publish(List.of("web1"), "two".getBytes(US_ASCII))).isEmpty();
        assertThat(own.readMessage()).extracting(b -> new String(b, US_ASCII)).containsExactly("m/web1/", "two");

        // When web1's request connection goes, so does its subscription: no presence without a live session.
        dealer.close();
        await().until(() -> !server.subscribedMinions().contains("web1"));
        assertThat(server.publish(List.of("web1"), "three".getBytes(US_ASCII))).containsExactly("web1");

        server.close();
        assertThat(thief.readUntilClosed()).as("the thief received nothing").isEmpty();
        server = null;
    }

    @Test
    void subscribersAtTheMinionsAddressEachGetACopySoNoNeighbourCanTakeItsPublicationsAway() throws Exception {
        start(fast());
        boundDealer("web1");
        RawZmtp own = subscriber("127.0.0.1", "m/web1/");
        await().until(() -> server.subscribedMinions().contains("web1"));
        // Another host behind the same address (NAT; here loopback) subscribes to web1's topic after it.
        RawZmtp neighbour = subscriber("127.0.0.1", "m/web1/");
        await().until(() -> server.connectionCount() == 3 && server.unauthenticatedCount() == 0);
        assertThat(server.publish(List.of("web1"), "job".getBytes(US_ASCII))).isEmpty();
        assertThat(own.readMessage()).extracting(b -> new String(b, US_ASCII)).containsExactly("m/web1/", "job");
        assertThat(neighbour.readMessage())
                .extracting(b -> new String(b, US_ASCII))
                .containsExactly("m/web1/", "job");
    }

    @Test
    void whenAMinionIsBoundFromAnotherAddressItsOldSubscriptionIsNoLongerHonoured() throws Exception {
        start(fast());
        boundDealer("web1");
        RawZmtp old = subscriber("127.0.0.1", "m/web1/");
        await().until(() -> server.subscribedMinions().contains("web1"));

        // The minion moved: its session frame now comes from 127.0.0.3.
        RawZmtp moved = closeLater(RawZmtp.handshaken("127.0.0.3", requestPort(), "DEALER"));
        moved.send(Wire.message("moved web1"));
        moved.readMessage();
        server.bind("web1", peersByText.get("moved web1"));
        assertThat(server.subscribedMinions()).doesNotContain("web1");
        assertThat(server.publish(List.of("web1"), "x".getBytes(US_ASCII))).containsExactly("web1");

        RawZmtp fresh = subscriber("127.0.0.3", "m/web1/");
        await().until(() -> server.subscribedMinions().contains("web1"));
        assertThat(server.publish(List.of("web1"), "y".getBytes(US_ASCII))).isEmpty();
        assertThat(fresh.readMessage()).extracting(b -> new String(b, US_ASCII)).containsExactly("m/web1/", "y");
        server.close();
        server = null;
        assertThat(old.readUntilClosed()).as("nothing for the old subscription").isEmpty();
    }

    @Test
    void aBoundPeerQuietForHalfTheIdleTimeoutIsPingedAndClosedWhenItDoesNotAnswer() throws Exception {
        start(fast().withTimeouts(Duration.ofSeconds(30), Duration.ofMillis(600)));
        RawZmtp dealer = boundDealer("web1");
        assertThat(dealer.readFrame().isPing()).isTrue();
        assertThat(dealer.readUntilClosed()).isEmpty();
        assertStillServing();
    }

    @Test
    void aPublicationGoesToEachMinionsConnectionAsTopicAndFrame() throws Exception {
        start(fast());
        List<String> ids = new ArrayList<>();
        List<RawZmtp> subs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String id = "m" + i;
            boundDealer(id);
            subs.add(subscriber("127.0.0.1", "m/" + id + "/"));
            ids.add(id);
        }
        await().until(() -> server.subscribedMinions().containsAll(ids));
        ZmtpServerTransport.OutboundStats before = server.outboundStats();
        byte[] frame = new byte[1000];
        frame[0] = 'p';
        assertThat(server.publish(ids, frame)).isEmpty();
        for (int i = 0; i < subs.size(); i++) {
            byte[] topic = Wire.ascii("m/" + ids.get(i) + "/");
            assertThat(subs.get(i).readMessage())
                    .satisfiesExactly(
                            t -> assertThat(t).isEqualTo(topic),
                            body -> assertThat(body).isEqualTo(frame));
        }
        ZmtpServerTransport.OutboundStats after = server.outboundStats();
        assertThat(after.writes() - before.writes()).isEqualTo(20);
    }

    @Test
    void aSubscriberThatDoesNotReadIsClosedAndReportedOnceItsQueueIsFull() throws Exception {
        start(fast().withMaxQueuedBytes(FrameLimits.MAX_FRAME + 1024L).withWriteBufferWaterMark(1024, 4096));
        boundDealer("slow");
        subscriber("127.0.0.1", "m/slow/");
        await().until(() -> server.subscribedMinions().contains("slow"));
        byte[] frame = new byte[1024 * 1024];
        boolean refused = false;
        for (int i = 0; i < 1000 && !refused; i++) {
            refused = server.publish(List.of("slow"), frame).contains("slow");
        }
        assertThat(refused).as("a publication refused before 1 GB was queued").isTrue();
        await().until(() -> !server.subscribedMinions().contains("slow"));
        assertStillServing();
    }

    // ---------------------------------------------------------------- hostile peers (issue 13, items 1-3)

    @Test
    void aLongFrameHeaderOfAllOnesClosesTheConnection() throws Exception {
        start(fast());
        List<RawZmtp> hostile = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            RawZmtp peer = closeLater(RawZmtp.handshaken("127.0.0.1", requestPort(), "DEALER"));
            peer.send(Wire.hex("02 ffffffffffffffff"));
            hostile.add(peer);
        }
        for (RawZmtp peer : hostile) {
            assertThat(peer.readUntilClosed()).isEmpty();
        }
        assertStillServing();
    }

    @Test
    void endlessMoreFramesCloseTheConnectionAtThePartsLimit() throws Exception {
        start(fast());
        RawZmtp peer = closeLater(RawZmtp.handshaken("127.0.0.1", requestPort(), "DEALER"));
        byte[] emptyMore = Wire.frame(Wire.MORE, new byte[0]);
        byte[] burst = new byte[2 * 1000];
        for (int i = 0; i < 1000; i++) {
            System.arraycopy(emptyMore, 0, burst, 2 * i, 2);
        }
        for (int i = 0; i < 1000 && peer.trySend(burst); i++) {
            // up to 2 MB: far past where the server stops reading
        }
        assertThat(peer.closedByServer()).isTrue();
        assertStillServing();
    }

    @Test
    void an8MiBAnnouncedFrameIsRefusedBeforeAuthAndAPartialFrameTimesOut() throws Exception {
        start(fast().withTimeouts(Duration.ofMillis(500), Duration.ofSeconds(120)));
        RawZmtp announced = closeLater(RawZmtp.handshaken("127.0.0.1", requestPort(), "DEALER"));
        announced.send(Wire.hex("02 0000000000800000 00112233445566778899"));
        assertThat(announced.readUntilClosed()).isEmpty();

        RawZmtp partial = closeLater(RawZmtp.handshaken("127.0.0.1", requestPort(), "DEALER"));
        partial.send(Wire.hex("02 0000000000001000 00112233445566778899"));
        // Within the 64 KiB limit, but never finished: closed by the timeout, although bytes came.
        assertThat(partial.readUntilClosed()).isEmpty();
        await().until(() -> server.connectionCount() == 0);
        assertStillServing();
    }

    @Test
    void idleDealersAreCappedPerSourceAndClosedOnTheUnauthenticatedTimeout() throws Exception {
        start(fast().withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(120))
                .withConnectionLimits(100_000, 20_000, 100));
        List<Socket> idle = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            Socket socket = new Socket("127.0.0.1", requestPort());
            idle.add(socket);
            closeables.add(socket);
        }
        await().until(() -> server.connectionCount() == 100 && server.unauthenticatedCount() == 100);
        // From another address while 127.0.0.1 is at its cap: admitted.
        RawZmtp other = closeLater(RawZmtp.handshaken("127.0.0.2", requestPort(), "DEALER"));
        other.send(Wire.message("from-elsewhere"));
        assertThat(other.readMessage())
                .singleElement()
                .satisfies(b -> assertThat(b).isEqualTo(Wire.ascii("re:from-elsewhere")));
        // The idle ones are closed on the unauthenticated timeout, and 127.0.0.1 is served again.
        await().until(() -> server.connectionCount() <= 1);
        assertStillServing();
    }

    @Test
    void twoOtherSourcesFillOnlyTheUnreservedPartAndThisHostAndABoundMinionsAddressStillConnect() throws Exception {
        start(fast().withConnectionLimits(100, 8, 4)); // a quarter of the 8, 2, kept for reserved sources
        // web1 was bound from 127.0.0.4 and has gone: its address is one the reserve is kept for.
        RawZmtp web1 = RawZmtp.handshaken("127.0.0.4", requestPort(), "DEALER");
        web1.send(Wire.message("hello web1"));
        assertThat(web1.readMessage()).hasSize(1);
        server.bind("web1", peersByText.get("hello web1"));
        web1.close();
        await().until(() -> server.connectionCount() == 0);

        // Two other sources (127.0.0.2, 127.0.0.3 are other addresses on lo) take the 6 others may hold.
        for (int i = 0; i < 4; i++) {
            closeLater(RawZmtp.connect("127.0.0.2", requestPort()));
            int open = i + 1;
            await().until(() -> server.unauthenticatedCount() == open);
        }
        for (int i = 0; i < 2; i++) {
            closeLater(RawZmtp.connect("127.0.0.3", requestPort()));
            int open = 5 + i;
            await().until(() -> server.unauthenticatedCount() == open);
        }
        assertThat(closeLater(RawZmtp.connect("127.0.0.3", requestPort())).closedByServer())
                .as("past the share")
                .isTrue();
        assertThat(closeLater(RawZmtp.connect("127.0.0.5", requestPort())).closedByServer())
                .as("a third source")
                .isTrue();

        // The reserve: this host and web1's address are admitted and served.
        RawZmtp local = closeLater(RawZmtp.handshaken("127.0.0.1", requestPort(), "DEALER"));
        local.send(Wire.message("from-this-host"));
        assertThat(local.readMessage()).singleElement().isEqualTo(Wire.ascii("re:from-this-host"));
        RawZmtp again = closeLater(RawZmtp.handshaken("127.0.0.4", requestPort(), "DEALER"));
        again.send(Wire.message("web1-again"));
        assertThat(again.readMessage()).singleElement().isEqualTo(Wire.ascii("re:web1-again"));
        assertThat(server.unauthenticatedCount()).isEqualTo(8);
        // And the whole budget is then spent, for reserved sources too.
        assertThat(closeLater(RawZmtp.connect("127.0.0.1", requestPort())).closedByServer())
                .isTrue();
    }

    // ---------------------------------------------------------------- stock Salt minions (issue 15)

    /** A jeromq REQ that sent a Salt payload (a msgpack map: first byte 0x81) and is bound as {@code id}. */
    ZMQ.Socket boundSaltReq(String id) {
        ZMQ.Socket req = zmqSocket(SocketType.REQ, requestPort());
        byte[] payload = Wire.concat(new byte[] {(byte) 0x81}, Wire.ascii("salt " + id));
        req.send(payload);
        assertThat(req.recv()).isNotNull();
        server.bind(id, peersByText.get(new String(payload, US_ASCII)));
        return req;
    }

    @Test
    void saltMinionsAreHonouredOnSaltSubscriptionsFromTheirAddressAndGetTheEnvelopeAsSaltsSubExpectsIt()
            throws Exception {
        start(fast());
        boundSaltReq("salt1");
        boundSaltReq("salt2");
        ZMQ.Socket whole = zmqSocket(SocketType.SUB, publishPort());
        whole.subscribe(new byte[0]);
        ZMQ.Socket filtering = zmqSocket(SocketType.SUB, publishPort());
        filtering.subscribe(Wire.ascii("broadcast"));
        filtering.subscribe(Subscriptions.saltTopic("salt2"));
        RawZmtp brineSub = subscriber("127.0.0.1", "m/salt1/");
        await().until(() -> server.subscribedMinions().containsAll(List.of("salt1", "salt2"))
                && server.unauthenticatedCount() == 1); // only brine's m/salt1/ is left unhonoured

        byte[] envelope = Wire.ascii("salt-envelope");
        assertThat(server.publish(List.of("salt1", "salt2"), envelope)).isEmpty();
        // Without zmq_filtering: the envelope alone, once, although it holds the route of both minions.
        assertThat(whole.recv()).isEqualTo(envelope);
        assertThat(whole.hasReceiveMore()).isFalse();
        whole.setReceiveTimeOut(300);
        assertThat(whole.recv()).as("one copy per publication").isNull();
        // With it: [sha1hex(id)][envelope]; its SUB drops salt1's copy, keeps its own.
        assertThat(filtering.recv()).isEqualTo(Subscriptions.saltTopic("salt2"));
        assertThat(filtering.recv()).isEqualTo(envelope);
        assertThat(new String(Subscriptions.saltTopic("salt2"), US_ASCII))
                .as("hex SHA-1 of the id, as Salt's")
                .isEqualTo("6baa5061cd4082e2bd71b9ed9598baa846b525da");
        // brine's subscription to m/salt1/ is not a Salt minion's: it gets nothing.
        server.close();
        assertThat(brineSub.readUntilClosed()).isEmpty();
        server = null;
    }
}

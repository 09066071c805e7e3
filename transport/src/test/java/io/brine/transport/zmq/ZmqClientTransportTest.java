package io.brine.transport.zmq;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.codec.FrameLimits;
import io.brine.transport.ClientTransport;
import io.brine.transport.testing.CountingListener;
import io.brine.transport.testing.Threads;
import io.brine.transport.zmtp.ZmtpServerOptions;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/** The minion's ZeroMQ transport against a raw jeromq ROUTER and XPUB on loopback. */
class ZmqClientTransportTest {

    private static final int RECEIVE_TIMEOUT_MILLIS = 10_000;
    private static final ZmqClientOptions FAST_RECONNECT =
            ZmqClientOptions.defaults().withReconnect(Duration.ofMillis(50), Duration.ofMillis(200));

    private final Recorder recorder = new Recorder();
    private ZContext master;
    private ZmqClientTransport client;

    /** Listener that only enqueues, as the contract asks. */
    private static final class Recorder extends CountingListener {
        final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
        final BlockingQueue<String> publications = new LinkedBlockingQueue<>();
        final List<Integer> replySizes = new ArrayList<>();

        @Override
        public void onReply(byte[] frame) {
            synchronized (replySizes) {
                replySizes.add(frame.length);
            }
            replies.add(new String(frame, US_ASCII));
        }

        @Override
        public void onPublication(byte[] frame) {
            publications.add(new String(frame, US_ASCII));
        }
    }

    @BeforeEach
    void setUp() {
        master = new ZContext();
        master.setLinger(0);
    }

    @AfterEach
    void tearDown() {
        if (client != null) {
            client.close();
        }
        master.close();
    }

    private ZMQ.Socket bind(SocketType type) {
        ZMQ.Socket socket = master.createSocket(type);
        socket.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
        socket.bind("tcp://127.0.0.1:0");
        return socket;
    }

    private static int portOf(ZMQ.Socket socket) {
        String endpoint = socket.getLastEndpoint();
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    private ZmqClientTransport startClient(int requestPort) throws IOException {
        client = new ZmqClientTransport("127.0.0.1", requestPort, FAST_RECONNECT);
        client.start(recorder);
        return client;
    }

    private ZMQ.Socket publisher() {
        ZMQ.Socket xpub = master.createSocket(SocketType.XPUB);
        xpub.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
        xpub.setXpubVerbose(true);
        xpub.bind("tcp://127.0.0.1:0");
        return xpub;
    }

    /** Reads subscription messages ("+topic" / "-topic") until {@code expected} have all been seen. */
    private static void awaitSubscriptions(ZMQ.Socket xpub, String... expected) {
        List<String> seen = new ArrayList<>();
        while (!seen.containsAll(List.of(expected))) {
            byte[] message = xpub.recv();
            assertThat(message).as("subscriptions so far %s", seen).isNotNull();
            seen.add((message[0] == 1 ? "+" : "-") + new String(message, 1, message.length - 1, US_ASCII));
        }
    }

    private static void publish(ZMQ.Socket xpub, String... parts) {
        for (int i = 0; i < parts.length; i++) {
            xpub.send(parts[i].getBytes(US_ASCII), i < parts.length - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    /** Receives one request: [identity][frame], checking there is nothing else. */
    private static byte[] receiveRequest(ZMQ.Socket router, List<String> frames) {
        byte[] identity = router.recv();
        assertThat(identity).as("a request").isNotNull();
        assertThat(router.hasReceiveMore()).isTrue();
        frames.add(router.recvStr());
        assertThat(router.hasReceiveMore()).isFalse();
        return identity;
    }

    @Test
    void sendsFramesInOrderAndDeliversReplies() throws IOException {
        ZMQ.Socket router = bind(SocketType.ROUTER);
        startClient(portOf(router));

        for (int i = 0; i < 500; i++) {
            assertThat(client.send(("frame-" + i).getBytes(US_ASCII))).isTrue();
        }
        List<String> frames = new ArrayList<>();
        byte[] identity = null;
        for (int i = 0; i < 500; i++) {
            identity = receiveRequest(router, frames);
        }
        router.sendMore(identity);
        router.send("reply");

        assertThat(frames)
                .containsExactlyElementsOf(
                        IntStream.range(0, 500).mapToObj(i -> "frame-" + i).toList());
        await().until(() -> recorder.replies.contains("reply"));
    }

    @Test
    void subscribesToItsOwnTopicAndBroadcastsOnly() throws IOException {
        ZMQ.Socket xpub = publisher();
        startClient(portOf(bind(SocketType.ROUTER)));

        client.subscribe("web1", portOf(xpub));
        awaitSubscriptions(xpub, "+m/web1/", "+b/");
        publish(xpub, "m/web10/", "for web10");
        publish(xpub, "m/web1/", "for web1");
        publish(xpub, "m/web1", "prefix without slash");
        publish(xpub, "b/", "for all");

        await().until(() -> recorder.publications.size() >= 2);
        assertThat(recorder.publications).containsExactly("for web1", "for all");
    }

    @Test
    void replacesTheTopicWhenSubscribedAgainOnTheSamePort() throws IOException {
        ZMQ.Socket xpub = publisher();
        startClient(portOf(bind(SocketType.ROUTER)));
        client.subscribe("web1", portOf(xpub));
        awaitSubscriptions(xpub, "+m/web1/", "+b/");

        client.subscribe("web2", portOf(xpub));

        awaitSubscriptions(xpub, "-m/web1/", "+m/web2/");
        publish(xpub, "m/web1/", "old");
        publish(xpub, "m/web2/", "new");
        await().until(() -> !recorder.publications.isEmpty());
        assertThat(recorder.publications).containsExactly("new");
    }

    @Test
    void movesToAnotherPublishPort() throws IOException {
        ZMQ.Socket first = publisher();
        ZMQ.Socket second = publisher();
        startClient(portOf(bind(SocketType.ROUTER)));
        client.subscribe("web1", portOf(first));
        awaitSubscriptions(first, "+m/web1/", "+b/");

        client.subscribe("web1", portOf(second));

        awaitSubscriptions(second, "+m/web1/", "+b/");
        publish(second, "m/web1/", "from the second");
        await().until(() -> recorder.publications.contains("from the second"));
    }

    @Test
    void dropsRepliesAndPublicationsWithUnexpectedFrameCounts() throws IOException {
        ZMQ.Socket router = bind(SocketType.ROUTER);
        ZMQ.Socket xpub = publisher();
        startClient(portOf(router));
        client.subscribe("web1", portOf(xpub));
        awaitSubscriptions(xpub, "+m/web1/", "+b/");
        client.send("hello".getBytes(US_ASCII));
        byte[] identity = receiveRequest(router, new ArrayList<>());

        router.sendMore(identity);
        router.sendMore("two");
        router.send("frames");
        router.sendMore(identity);
        router.sendMore("");
        router.send("delimited");
        router.sendMore(identity);
        router.send("plain");
        publish(xpub, "m/web1/", "three", "frames");
        publish(xpub, "m/web1/");
        publish(xpub, "m/web1/", "good");

        await().until(() -> recorder.replies.size() >= 2 && !recorder.publications.isEmpty());
        assertThat(recorder.replies).containsExactly("delimited", "plain");
        assertThat(recorder.publications).containsExactly("good");
    }

    @Test
    void dropsTheConnectionOnAnOversizedReplyAndComesBack() throws IOException {
        ZMQ.Socket router = bind(SocketType.ROUTER);
        startClient(portOf(router));
        client.send("hello".getBytes(US_ASCII));
        byte[] identity = receiveRequest(router, new ArrayList<>());

        router.sendMore(identity);
        router.send(new byte[FrameLimits.MAX_FRAME + 1]);

        await().until(() -> recorder.disconnected.get() == 1 && recorder.connected.get() == 2);
        client.send("again".getBytes(US_ASCII));
        List<String> frames = new ArrayList<>();
        byte[] newIdentity = receiveRequest(router, frames);
        assertThat(frames).containsExactly("again");
        router.sendMore(newIdentity);
        router.send("welcome back");
        await().until(() -> recorder.replies.contains("welcome back"));
        synchronized (recorder.replySizes) {
            assertThat(recorder.replySizes).allSatisfy(size -> assertThat(size).isLessThan(FrameLimits.MAX_FRAME));
        }
    }

    @Test
    void dropsTheSubscriptionOnAnOversizedPublicationAndComesBack() throws IOException {
        ZMQ.Socket xpub = publisher();
        startClient(portOf(bind(SocketType.ROUTER)));
        client.subscribe("web1", portOf(xpub));
        awaitSubscriptions(xpub, "+m/web1/", "+b/");

        xpub.sendMore("m/web1/");
        xpub.send(new byte[FrameLimits.MAX_FRAME + 1]);

        // A fresh SUB subscribes again (verbose XPUB shows each subscription).
        awaitSubscriptions(xpub, "+m/web1/", "+b/");
        publish(xpub, "m/web1/", "after");
        await().until(() -> recorder.publications.contains("after"));
        assertThat(recorder.publications).containsExactly("after");
    }

    @Test
    void reportsTheLostMasterAndReconnectsToItsSuccessor() throws IOException {
        ZMQ.Socket router = bind(SocketType.ROUTER);
        int port = portOf(router);
        startClient(port);
        client.send("first".getBytes(US_ASCII));
        receiveRequest(router, new ArrayList<>());

        router.close();
        await().until(() -> recorder.disconnected.get() == 1);
        assertThat(recorder.connected).as("the first connection only").hasValue(1);
        assertThat(client.send("sent while down".getBytes(US_ASCII))).isTrue();

        ZMQ.Socket successor = master.createSocket(SocketType.ROUTER);
        successor.setReceiveTimeOut(RECEIVE_TIMEOUT_MILLIS);
        await().until(() -> bindsTo(successor, port));
        await().until(() -> recorder.connected.get() == 2);
        List<String> frames = new ArrayList<>();
        receiveRequest(successor, frames);
        assertThat(frames).containsExactly("sent while down");
    }

    @Test
    void aReconnectionReplacesAHalfOpenRequestConnectionByANewOne() throws IOException {
        ZMQ.Socket router = bind(SocketType.ROUTER);
        try (SilentRelay relay = new SilentRelay(portOf(router))) {
            startClient(relay.port());
            client.send("first".getBytes(US_ASCII));
            List<String> frames = new ArrayList<>();
            receiveRequest(router, frames);
            await().until(() -> recorder.connected.get() == 1);

            relay.silence();
            client.send("into the void".getBytes(US_ASCII));
            assertThat(client.reconnect())
                    .as("a connection that was up is replaced")
                    .isTrue();

            await().until(() -> relay.connections() == 2);
            await().until(() -> recorder.connected.get() == 2);
            assertThat(recorder.disconnected)
                    .as("the old connection reported lost")
                    .hasValue(1);
            client.send("second".getBytes(US_ASCII));
            byte[] identity = receiveRequest(router, frames);
            assertThat(frames).containsExactly("first", "second");
            router.sendMore(identity);
            router.send("reply");
            await().until(() -> recorder.replies.contains("reply"));
        }
    }

    @Test
    void aReconnectionWithoutAConnectionLeavesItToZeroMq() throws IOException {
        ZMQ.Socket router = bind(SocketType.ROUTER);
        int port = portOf(router);
        router.close();
        startClient(port);

        assertThat(client.reconnect())
                .as("nothing to replace: ZeroMQ is connecting already")
                .isFalse();
    }

    @Test
    void eachSocketHeartbeatsAtItsOwnInterval() throws IOException {
        ZMQ.Socket router = bind(SocketType.ROUTER);
        ZMQ.Socket xpub = publisher();
        ZmqClientOptions publishOnly =
                FAST_RECONNECT.withHeartbeat(Duration.ZERO, Duration.ofMillis(200), Duration.ofMillis(100));
        try (SilentRelay requests = new SilentRelay(portOf(router));
                SilentRelay publications = new SilentRelay(portOf(xpub))) {
            client = new ZmqClientTransport("127.0.0.1", requests.port(), publishOnly);
            client.start(recorder);
            client.subscribe("web1", publications.port());
            awaitSubscriptions(xpub, "+m/web1/", "+b/");
            client.send("first".getBytes(US_ASCII));
            receiveRequest(router, new ArrayList<>());
            long requestBytes = requests.bytesFromClients();

            publications.silence();

            // The SUB's unanswered PING (within 200 ms, then 100 ms) drops its connection and ZeroMQ makes a new one.
            // Meanwhile the DEALER has sent nothing at all: no PINGs (the minion's session heartbeat is its check).
            await().until(() -> publications.connections() >= 2);
            awaitSubscriptions(xpub, "+m/web1/", "+b/");
            assertThat(requests.bytesFromClients())
                    .as("bytes from the DEALER while idle")
                    .isEqualTo(requestBytes);
            assertThat(requests.connections()).isEqualTo(1);
        }
    }

    @Test
    void byDefaultOnlyThePublishConnectionHeartbeatsAndBeforeTheMasterWouldPingIt() {
        ZmqClientOptions options = ZmqClientOptions.defaults();

        assertThat(options.requestHeartbeatInterval()).isZero();
        assertThat(options.publishHeartbeatInterval())
                .isPositive()
                .isLessThan(ZmtpServerOptions.defaults().idleTimeout().dividedBy(2));
        assertThatThrownBy(() -> options.withHeartbeat(Duration.ofMillis(-1), Duration.ZERO, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> options.withHeartbeat(Duration.ZERO, Duration.ofDays(30), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> options.withHeartbeat(Duration.ZERO, Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void refusesAHeartbeatTimeoutThatJeromqWouldLose() {
        ZmqClientOptions options = ZmqClientOptions.defaults();
        Duration interval = Duration.ofMillis(200);

        assertThat(options.withHeartbeat(Duration.ZERO, interval, interval.minusMillis(1))
                        .heartbeatTimeout())
                .isEqualTo(interval.minusMillis(1));
        assertThat(options.withHeartbeat(Duration.ZERO, Duration.ZERO, Duration.ofDays(1))
                        .heartbeatTimeout())
                .as("no heartbeat, nothing to time out")
                .isEqualTo(Duration.ofDays(1));
        assertThatThrownBy(() -> options.withHeartbeat(Duration.ZERO, interval, interval))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("publishHeartbeatInterval");
        assertThatThrownBy(() -> options.withHeartbeat(interval, Duration.ZERO, interval.plusMillis(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("requestHeartbeatInterval");
    }

    /** The port may stay busy for a moment after the old socket closed. */
    private static boolean bindsTo(ZMQ.Socket socket, int port) {
        try {
            return socket.bind("tcp://127.0.0.1:" + port);
        } catch (ZMQException e) {
            return false;
        }
    }

    @Test
    void refusesInvalidIdsAndAMissingPublishPort() throws IOException {
        startClient(portOf(bind(SocketType.ROUTER)));

        assertThatThrownBy(() -> client.subscribe("Web1", 4505)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client.subscribe("web1/", 4505)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client.subscribe("web1", 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void refusesToSendOnceClosedAndClosesTwice() throws IOException {
        startClient(portOf(bind(SocketType.ROUTER)));

        client.close();
        client.close();

        assertThat(client.send("late".getBytes(US_ASCII))).isFalse();
    }

    @Test
    void closeStopsEveryThreadItStarted() throws IOException {
        ZMQ.Socket router = bind(SocketType.ROUTER);
        ZMQ.Socket xpub = publisher();
        Set<Thread> before = Threads.live();
        ClientTransport transport = new ZmqClientTransport("127.0.0.1", portOf(router), FAST_RECONNECT);
        transport.start(recorder);
        transport.subscribe("web1", portOf(xpub));
        awaitSubscriptions(xpub, "+m/web1/", "+b/");
        assertThat(Threads.newSince(before)).extracting(Thread::getName).contains("brine-zmq-client");

        transport.close();

        // Polled on this thread: Awaitility's own poller thread would count as new.
        await().pollInSameThread()
                .untilAsserted(() -> assertThat(Threads.newSince(before)).isEmpty());
    }
}

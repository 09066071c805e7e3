package io.brine.it.transport;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.transport.testing.CountingListener;
import io.brine.transport.zmq.ZmqClientOptions;
import io.brine.transport.zmq.ZmqClientTransport;
import io.brine.transport.zmtp.ZmtpServerOptions;
import io.brine.transport.zmtp.ZmtpServerTransport;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The two ZeroMQ halves brine ships, together on loopback: the master's ZMTP server on Netty
 * ({@link ZmtpServerTransport}) and real jeromq minion clients ({@link ZmqClientTransport}). A minion's publications
 * are honoured once the server binds its id to the minion's request connection, as the master does after an auth:
 * here a request {@code bind:ID} stands in for the auth.
 */
class ZmqTransportPairIT {

    private static final ZmqClientOptions CLIENT_OPTIONS =
            ZmqClientOptions.defaults().withReconnect(Duration.ofMillis(50), Duration.ofMillis(500));

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final Set<String> undelivered = ConcurrentHashMap.newKeySet();
    /** Stands in for the master's workers: the transport's handler only hands frames over. */
    private final ExecutorService workers = Executors.newSingleThreadExecutor();

    /** A minion's view: everything arrives on the transport thread and is only queued here. */
    private static final class Minion extends CountingListener {
        final BlockingQueue<byte[]> replies = new LinkedBlockingQueue<>();
        final BlockingQueue<byte[]> publications = new LinkedBlockingQueue<>();
        ZmqClientTransport transport;

        @Override
        public void onReply(byte[] frame) {
            replies.add(frame);
        }

        @Override
        public void onPublication(byte[] frame) {
            publications.add(frame);
        }

        List<String> publicationTexts() {
            return publications.stream().map(f -> new String(f, US_ASCII)).toList();
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
        workers.shutdownNow();
    }

    /**
     * A master transport that answers each request with "re:" + request, from a worker thread; {@code bind:ID}
     * binds ID to the requesting connection first (bind-then-send, as the master's dispatcher does).
     */
    private ZmtpServerTransport startServer(int requestPort, int publishPort) throws IOException {
        ZmtpServerTransport server = new ZmtpServerTransport(
                "127.0.0.1",
                requestPort,
                publishPort,
                ZmtpServerOptions.defaults(),
                null,
                (ids, frame) -> undelivered.addAll(ids));
        try {
            server.start((peer, frame) -> workers.execute(() -> {
                String request = new String(frame, US_ASCII);
                if (request.startsWith("bind:")) {
                    server.bind(request.substring("bind:".length()), peer);
                }
                server.send(peer, ("re:" + request).getBytes(US_ASCII));
            }));
        } catch (IOException e) {
            server.close();
            throw e;
        }
        closeables.add(server);
        return server;
    }

    private Minion startMinion(ZmtpServerTransport server, String id) throws IOException {
        Minion minion = new Minion();
        minion.transport =
                new ZmqClientTransport("127.0.0.1", server.addresses().request().getPort(), CLIENT_OPTIONS);
        minion.transport.start(minion);
        closeables.add(minion.transport);
        if (id != null) {
            minion.transport.subscribe(id, server.addresses().publish().getPort());
            bind(minion, id);
        }
        return minion;
    }

    /** Asks the server to bind {@code id} to the minion's request connection and takes the answer. */
    private static void bind(Minion minion, String id) {
        assertThat(minion.transport.send(("bind:" + id).getBytes(US_ASCII))).isTrue();
        await().until(() -> minion.replies.stream().anyMatch(f -> new String(f, US_ASCII).equals("re:bind:" + id)));
        minion.replies.removeIf(f -> new String(f, US_ASCII).equals("re:bind:" + id));
    }

    @Test
    void eachMinionGetsItsOwnRepliesInOrder() throws IOException {
        ZmtpServerTransport server = startServer(0, 0);
        List<Minion> minions = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            minions.add(startMinion(server, null));
        }

        for (int n = 0; n < 5; n++) {
            for (int i = 0; i < minions.size(); i++) {
                assertThat(minions.get(i).transport.send(("m" + i + "-" + n).getBytes(US_ASCII)))
                        .isTrue();
            }
        }

        for (int i = 0; i < minions.size(); i++) {
            Minion minion = minions.get(i);
            int index = i;
            await().until(() -> minion.replies.size() >= 5);
            assertThat(minion.replies.stream().map(f -> new String(f, US_ASCII)))
                    .containsExactlyElementsOf(IntStream.range(0, 5)
                            .mapToObj(n -> "re:m" + index + "-" + n)
                            .toList());
        }
    }

    @Test
    void aMinionNeverSeesAnotherMinionsPublications() throws IOException {
        ZmtpServerTransport server = startServer(0, 0);
        Minion web1 = startMinion(server, "web1");
        Minion web10 = startMinion(server, "web10");
        await().until(() -> server.subscribedMinions().containsAll(List.of("web1", "web10")));

        assertThat(server.publish(List.of("web10"), "to web10".getBytes(US_ASCII)))
                .isEmpty();
        assertThat(server.publish(List.of("web1"), "to web1".getBytes(US_ASCII)))
                .isEmpty();
        assertThat(server.publish(List.of("web1", "web10", "web100"), "to all".getBytes(US_ASCII)))
                .containsExactly("web100");

        await().until(() -> web1.publications.size() >= 2 && web10.publications.size() >= 2);
        assertThat(web1.publicationTexts()).containsExactly("to web1", "to all");
        assertThat(web10.publicationTexts()).containsExactly("to web10", "to all");
        assertThat(undelivered).isEmpty();
    }

    @Test
    void aBurstReachesEverySubscriberCompletelyAndInOrder() throws IOException {
        ZmtpServerTransport server = startServer(0, 0);
        List<String> ids = List.of("m0", "m1", "m2", "m3", "m4");
        List<Minion> minions = new ArrayList<>();
        for (String id : ids) {
            minions.add(startMinion(server, id));
        }
        await().until(() -> server.subscribedMinions().containsAll(ids));
        int count = 20_000;

        for (int serial = 0; serial < count; serial++) {
            assertThat(server.publish(
                            ids, ByteBuffer.allocate(256).putInt(serial).array()))
                    .isEmpty();
        }

        for (Minion minion : minions) {
            await().until(() -> minion.publications.size() >= count);
            int expected = 0;
            for (byte[] frame : minion.publications) {
                assertThat(ByteBuffer.wrap(frame).getInt()).isEqualTo(expected++);
            }
            assertThat(expected).isEqualTo(count);
        }
        assertThat(undelivered).isEmpty();
    }

    @Test
    void aMinionComesBackToARestartedMaster() throws IOException {
        ZmtpServerTransport first = startServer(0, 0);
        int requestPort = first.addresses().request().getPort();
        int publishPort = first.addresses().publish().getPort();
        Minion minion = startMinion(first, "web1");
        minion.transport.send("before".getBytes(US_ASCII));
        await().until(() -> !minion.replies.isEmpty());

        first.close();
        await().until(() -> minion.disconnected.get() == 1);

        // The old sockets' ports may stay busy for a moment: binding again is the condition waited for.
        ZmtpServerTransport[] second = new ZmtpServerTransport[1];
        await().until(() -> {
            try {
                second[0] = startServer(requestPort, publishPort);
                return true;
            } catch (IOException portStillBusy) {
                return false;
            }
        });
        ZmtpServerTransport server = second[0];
        // The first connection, and this one.
        await().until(() -> minion.connected.get() == 2);
        minion.transport.send("after".getBytes(US_ASCII));
        await().until(() -> minion.replies.size() == 2);
        assertThat(new String(minion.replies.toArray(byte[][]::new)[1], US_ASCII))
                .isEqualTo("re:after");
        // ZeroMQ subscribes again on reconnection; the new master honours it once the minion is bound again.
        assertThat(server.subscribedMinions()).doesNotContain("web1");
        bind(minion, "web1");
        await().until(() -> server.subscribedMinions().contains("web1"));
        assertThat(server.publish(List.of("web1"), "welcome back".getBytes(US_ASCII)))
                .isEmpty();
        await().until(() -> minion.publicationTexts().contains("welcome back"));
    }

    @Test
    void closingEverythingStopsEveryThread() throws IOException {
        Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
        ZmtpServerTransport server = startServer(0, 0);
        Minion minion = startMinion(server, "web1");
        minion.transport.send("ping".getBytes(US_ASCII));
        await().until(() -> !minion.replies.isEmpty());

        minion.transport.close();
        server.close();

        await().pollInSameThread()
                .untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet().stream()
                                .filter(t -> t.isAlive()
                                        && !before.contains(t)
                                        && !t.getName().startsWith("pool-")))
                        .isEmpty());
    }
}

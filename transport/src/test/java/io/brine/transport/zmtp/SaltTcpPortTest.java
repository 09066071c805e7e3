package io.brine.transport.zmtp;

import static io.brine.protocol.testing.SaltVectors.b64;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltTcpFrame;
import io.brine.protocol.salt.SaltValue;
import io.brine.protocol.testing.SaltVectors;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Salt's TCP transport on the ZeroMQ ports (issue 15), over real sockets: the first byte a client sends picks the
 * wire. Every frame a Salt 3008.2 minion wrote in the recorded TCP vectors reaches the master whole, byte for byte,
 * however the stream is cut, marked with the port it came on; the master's recorded replies and publications leave
 * byte for byte; a ZeroMQ peer on the same port is unaffected; a silent peer, a first byte of neither wire, a
 * malformed or oversized frame are closed.
 */
class SaltTcpPortTest {

    private record Inbound(Peer peer, byte[] frame) {}

    private final BlockingQueue<Inbound> inbound = new LinkedBlockingQueue<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private ZmtpServerTransport server;

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private void start(ZmtpServerOptions options) throws IOException {
        server = new ZmtpServerTransport("127.0.0.1", 0, 0, options, null, null, true);
        server.start(new ServerTransport.InboundHandler() {
            @Override
            public void onFrame(Peer from, byte[] frame) {
                inbound.add(new Inbound(from, frame));
            }
        });
    }

    private Socket connect(int port) throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout((int) Duration.ofSeconds(20).toMillis());
        closeables.add(socket);
        return socket;
    }

    private Inbound next() throws InterruptedException {
        Inbound frame = inbound.poll(20, TimeUnit.SECONDS);
        assertThat(frame).as("a frame reached the master").isNotNull();
        return frame;
    }

    /** Every client-to-master stream of the TCP vectors, with the port it was sent to. */
    private static List<byte[]> requestStreams() {
        List<byte[]> streams = new ArrayList<>();
        for (String name : SaltVectors.names("3008.2-tcp")) {
            JsonNode v = SaltVectors.vector("3008.2-tcp/" + name);
            if (v.has("request") && v.get("request").has("tcp_stream_b64")) { // the pillar requests are elided
                streams.add(b64(v.get("request").get("tcp_stream_b64")));
            }
        }
        return streams;
    }

    private static byte[] readExactly(InputStream in, int length) throws IOException {
        byte[] bytes = in.readNBytes(length);
        assertThat(bytes).hasSize(length);
        return bytes;
    }

    @Test
    void everyRecordedRequestArrivesWholeOnTheRequestPortHoweverTheStreamIsCutAndItsReplyLeavesByteForByte()
            throws Exception {
        start(ZmtpServerTransportTest.fast());
        List<byte[]> requests = requestStreams();
        assertThat(requests).hasSize(14);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        requests.forEach(all::writeBytes);
        byte[] stream = all.toByteArray();

        Socket socket = connect(server.addresses().request().getPort());
        socket.setTcpNoDelay(true);
        OutputStream out = socket.getOutputStream();
        Random random = new Random(15);
        for (int at = 0; at < stream.length; ) {
            int piece = Math.min(stream.length - at, 1 + random.nextInt(random.nextBoolean() ? 3 : 700));
            out.write(stream, at, piece);
            out.flush();
            at += piece;
        }
        Peer peer = null;
        for (byte[] request : requests) {
            Inbound frame = next();
            assertThat(frame.frame()).isEqualTo(request);
            assertThat(frame.peer().framing()).isEqualTo(Peer.Framing.SALT_TCP_REQUEST);
            peer = frame.peer();
        }

        // The master's recorded answers go out as given, pipelined on the one connection.
        for (String name : SaltVectors.names("3008.2-tcp")) {
            JsonNode v = SaltVectors.vector("3008.2-tcp/" + name);
            if (v.has("reply") && v.get("reply").has("tcp_stream_b64")) {
                byte[] reply = b64(v.get("reply").get("tcp_stream_b64"));
                assertThat(server.send(peer, reply)).isTrue();
                assertThat(readExactly(socket.getInputStream(), reply.length))
                        .as(name)
                        .isEqualTo(reply);
            }
        }
    }

    @Test
    void theHelloArrivesFromThePublishPortAndOnceBoundThatConnectionTakesItsMinionsPublicationsAsRecorded()
            throws Exception {
        start(ZmtpServerTransportTest.fast());
        byte[] hello =
                b64(SaltVectors.vector("3008.2-tcp/pub-connection-id-frame").get("tcp_stream_b64"));
        Socket socket = connect(server.addresses().publish().getPort());
        socket.getOutputStream().write(hello);
        Inbound frame = next();
        assertThat(frame.frame()).isEqualTo(hello);
        assertThat(frame.peer().framing()).isEqualTo(Peer.Framing.SALT_TCP_PUBLISH);

        // Not proven yet: nothing goes to it.
        assertThat(server.publish(List.of("vec-minion-1"), new byte[] {(byte) 0x80}))
                .contains("vec-minion-1");

        server.bind("vec-minion-1", frame.peer());
        assertThat(server.subscribedMinions()).contains("vec-minion-1");
        for (String name : List.of("publish-test.ping", "publish-test.echo", "publish-test.arg")) {
            byte[] recorded = b64(SaltVectors.vector("3008.2-tcp/" + name).get("tcp_stream_b64"));
            SaltValue body = SaltTcpFrame.decode(recorded, SaltLimits.SESSION).body();
            byte[] envelope = ((SaltValue.Bin) body).value();
            assertThat(server.publish(List.of("vec-minion-1"), envelope)).isEmpty();
            assertThat(readExactly(socket.getInputStream(), recorded.length))
                    .as(name)
                    .isEqualTo(recorded);
        }

        // Removed: its publish connection is closed, and nothing more goes there.
        server.unbind("vec-minion-1");
        assertThat(socket.getInputStream().read()).isEqualTo(-1);
        assertThat(server.publish(List.of("vec-minion-1"), new byte[] {(byte) 0x80}))
                .contains("vec-minion-1");
    }

    @Test
    void aPublishConnectionKeptUnprovenStaysOpenAndTakesTheEnvelopesOfSaltMinionsWithNoProvenConnectionOnce()
            throws Exception {
        // After a restart Salt 3006/3007 send a hello sealed with the aes key before it; the master keeps that
        // connection (SaltService.hello), as Salt's does, so the minion does not lose the master a second time. It
        // outlives the unauthenticated timeout (Salt has no heartbeat on TCP) but stays in the unauthenticated budget.
        start(ZmtpServerTransportTest.fast().withTimeouts(Duration.ofMillis(500), Duration.ofSeconds(60)));
        byte[] hello =
                b64(SaltVectors.vector("3008.2-tcp/pub-connection-id-frame").get("tcp_stream_b64"));
        Socket proven = connect(server.addresses().publish().getPort());
        proven.getOutputStream().write(hello);
        Peer provenPeer = next().peer();
        Socket unproven = connect(server.addresses().publish().getPort());
        unproven.getOutputStream().write(hello);
        Peer unprovenPeer = next().peer();
        server.bind("vec-minion-1", provenPeer);
        server.keepUnproven(unprovenPeer);

        byte[] envelope = {(byte) 0x81, (byte) 0xa3, 'e', 'n', 'c', (byte) 0xa3, 'a', 'e', 's'};
        ByteBuf header = SaltTcpSubscribers.header(UnpooledByteBufAllocator.DEFAULT, envelope.length);
        ByteArrayOutputStream framed = new ByteArrayOutputStream();
        framed.write(ByteBufUtil.getBytes(header));
        header.release();
        framed.write(envelope);
        byte[] frame = framed.toByteArray();

        // vec-minion-1 has its proven connection; salt2 none: the unproven connection takes the envelope, once.
        assertThat(server.publish(List.of("vec-minion-1", "salt2", "salt3"), envelope))
                .isEmpty();
        assertThat(readExactly(proven.getInputStream(), frame.length)).isEqualTo(frame);
        assertThat(readExactly(unproven.getInputStream(), frame.length)).isEqualTo(frame);
        // A publication for proven minions only, and a brine frame, do not go there.
        assertThat(server.publish(List.of("vec-minion-1"), envelope)).isEmpty();
        assertThat(readExactly(proven.getInputStream(), frame.length)).isEqualTo(frame);
        assertThat(server.publish(List.of("salt2"), new byte[] {1, 2, 3})).containsExactly("salt2");
        unproven.setSoTimeout(1_500); // three times the unauthenticated timeout
        assertThatThrownBy(() -> unproven.getInputStream().read())
                .as("open, and nothing more sent")
                .isInstanceOf(SocketTimeoutException.class);
        assertThat(server.subscribedMinions()).containsExactly("vec-minion-1");
        assertThat(server.unauthenticatedCount()).isEqualTo(1);

        // Closed, it takes nothing: the envelope is undeliverable again.
        unproven.close();
        await().until(() -> !server.publish(List.of("salt2"), envelope).isEmpty());
    }

    @Test
    void aZeroMqPeerOnTheSamePortsIsServedAsBefore() throws Exception {
        start(ZmtpServerTransportTest.fast());
        try (ZContext zmq = new ZContext(1)) {
            ZMQ.Socket dealer = zmq.createSocket(SocketType.DEALER);
            dealer.connect("tcp://127.0.0.1:" + server.addresses().request().getPort());
            dealer.send(new byte[] {1, 2, 3});
            Inbound frame = next();
            assertThat(frame.frame()).containsExactly(1, 2, 3);
            assertThat(frame.peer().framing()).isEqualTo(Peer.Framing.MESSAGE);
            assertThat(server.send(frame.peer(), new byte[] {4, 5})).isTrue();
            dealer.setReceiveTimeOut(20_000);
            assertThat(dealer.recv()).containsExactly(4, 5);

            // A Salt minion's SUB on the publish port still subscribes as ZMTP.
            ZMQ.Socket sub = zmq.createSocket(SocketType.SUB);
            sub.subscribe(new byte[0]);
            sub.connect("tcp://127.0.0.1:" + server.addresses().publish().getPort());
            await().until(() -> server.connectionCount() == 2);
        }
    }

    @Test
    void aSilentPeerAPeerOfNeitherWireAndAMalformedOrOversizedFrameAreClosed() throws Exception {
        start(ZmtpServerTransportTest.fast().withTimeouts(Duration.ofMillis(500), Duration.ofSeconds(60)));
        int port = server.addresses().request().getPort();

        Socket silent = connect(port);
        assertThat(silent.getInputStream().read())
                .as("closed, nothing sent first")
                .isEqualTo(-1);

        Socket stranger = connect(port);
        stranger.getOutputStream().write(new byte[] {0x01, 0, 0, 0, 5});
        assertThat(stranger.getInputStream().read()).isEqualTo(-1);

        Socket trickle = connect(port); // half a frame, never finished: closed at the unauthenticated timeout
        byte[] request = requestStreams().get(0);
        trickle.getOutputStream().write(Arrays.copyOf(request, request.length / 2));
        assertThat(trickle.getInputStream().read()).isEqualTo(-1);

        Socket malformed = connect(port); // a map whose first key is an extension type
        malformed.getOutputStream().write(new byte[] {(byte) 0x82, (byte) 0xd4, 1, 1});
        assertThat(malformed.getInputStream().read()).isEqualTo(-1);

        Socket oversized = connect(port); // {head: {}, body: bin32 of 1 MiB}: refused from its header
        oversized.getOutputStream().write(new byte[] {
            (byte) 0x82,
            (byte) 0xa4,
            'h',
            'e',
            'a',
            'd',
            (byte) 0x80,
            (byte) 0xa4,
            'b',
            'o',
            'd',
            'y',
            (byte) 0xc6,
            0,
            0x10,
            0,
            0
        });
        assertThat(oversized.getInputStream().read()).isEqualTo(-1);
        assertThat(inbound).isEmpty();
        await().until(() -> server.connectionCount() == 0);
        assertThat(server.subscribedMinions()).isEqualTo(Set.of());
    }

    @Test
    void aSaltEnvelopeForAMinionNotBoundSinceTheStartGoesToEverySaltSubscriberOnceAndABrineFrameNowhere()
            throws Exception {
        start(ZmtpServerTransportTest.fast());
        try (ZContext zmq = new ZContext(1)) {
            ZMQ.Socket sub = zmq.createSocket(SocketType.SUB);
            sub.subscribe(new byte[0]); // as a stock Salt minion subscribes without zmq_filtering
            sub.setReceiveTimeOut(20_000);
            sub.connect("tcp://127.0.0.1:" + server.addresses().publish().getPort());
            await().until(() -> server.saltSubscriptions() == 1);
            assertThat(server.saltFilteringSubscriptions()).isZero();

            byte[] brine = {1, 2, 3};
            assertThat(server.publish(List.of("salt1", "salt2"), brine)).containsExactlyInAnyOrder("salt1", "salt2");
            byte[] envelope = {(byte) 0x81, (byte) 0xa3, 'e', 'n', 'c', (byte) 0xa3, 'a', 'e', 's'};
            assertThat(server.publish(List.of("salt1", "salt2"), envelope)).isEmpty();
            assertThat(sub.recv()).isEqualTo(envelope);
            sub.setReceiveTimeOut(300);
            assertThat(sub.recv()).as("once for the whole publication").isNull();
        }
    }

    @Test
    void everySaltSubscriberOfTheMinionsAddressTakesItsEnvelopeHoweverManyAndAFilteringOneOnlyWithItsTopic()
            throws Exception {
        start(ZmtpServerTransportTest.fast());
        try (ZContext zmq = new ZContext(1)) {
            ZMQ.Socket dealer = zmq.createSocket(SocketType.DEALER);
            dealer.connect("tcp://127.0.0.1:" + server.addresses().request().getPort());
            dealer.send(new byte[] {(byte) 0x80}); // a Salt payload: the request connection is a Salt minion's
            Peer minion = next().peer();
            server.bind("salt1", minion);

            List<ZMQ.Socket> plain = new ArrayList<>();
            for (int i = 0; i < Subscriptions.MAX_COPIES + 2; i++) { // more than brine's cap, all on 127.0.0.1
                ZMQ.Socket sub = zmq.createSocket(SocketType.SUB);
                sub.subscribe(new byte[0]);
                sub.setReceiveTimeOut(20_000);
                sub.connect("tcp://127.0.0.1:" + server.addresses().publish().getPort());
                plain.add(sub);
            }
            ZMQ.Socket other = zmq.createSocket(SocketType.SUB); // another minion's, filtering
            other.subscribe("broadcast".getBytes(StandardCharsets.US_ASCII));
            other.subscribe(Subscriptions.saltTopic("salt2"));
            other.setReceiveTimeOut(300);
            other.connect("tcp://127.0.0.1:" + server.addresses().publish().getPort());
            ZMQ.Socket own = zmq.createSocket(SocketType.SUB); // salt1's, filtering
            own.subscribe("broadcast".getBytes(StandardCharsets.US_ASCII));
            own.subscribe(Subscriptions.saltTopic("salt1"));
            own.setReceiveTimeOut(20_000);
            own.connect("tcp://127.0.0.1:" + server.addresses().publish().getPort());
            await().until(() -> server.saltSubscriptions() == plain.size() + 2
                    && server.subscribedMinions().contains("salt1"));
            await().until(() -> server.publishRouteSize("salt1") == plain.size() + 1);

            byte[] envelope = {(byte) 0x81, (byte) 0xa3, 'e', 'n', 'c', (byte) 0xa3, 'a', 'e', 's'};
            assertThat(server.publish(List.of("salt1"), envelope)).isEmpty();
            for (ZMQ.Socket sub : plain) {
                assertThat(sub.recv()).isEqualTo(envelope);
            }
            assertThat(own.recv()).isEqualTo(Subscriptions.saltTopic("salt1"));
            assertThat(own.recv()).isEqualTo(envelope);
            assertThat(other.recv()).as("not salt2's: nothing").isNull();
        }
    }

    @Test
    void zmtpsGreetingWaitsForTheClientsFirstByte() throws Exception {
        start(ZmtpServerTransportTest.fast());
        Socket socket = connect(server.addresses().request().getPort());
        socket.setSoTimeout(300);
        assertThatThrownBy(() -> socket.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
        socket.setSoTimeout(20_000);
        socket.getOutputStream().write(0xFF); // a ZMTP signature begins: our greeting comes
        assertThat(socket.getInputStream().read()).isEqualTo(0xFF);
    }
}

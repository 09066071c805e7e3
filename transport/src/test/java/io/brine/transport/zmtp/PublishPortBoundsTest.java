package io.brine.transport.zmtp;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a peer on the publish port may send, at each bound and one past (PROTOCOL.md 10.1), over real sockets: a
 * subscription of exactly {@link ZmtpConnection#MAX_SUBSCRIPTION} bytes in either form is taken and the connection
 * kept, one byte more closes it on its header; the 16th distinct topic is held, a repeated one costs nothing, the 17th
 * closes the connection.
 */
class PublishPortBoundsTest {

    private final Map<String, Peer> peersByText = new ConcurrentHashMap<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private ZmtpServerTransport server;

    @BeforeEach
    void start() throws Exception {
        server = new ZmtpServerTransport("127.0.0.1", 0, 0, ZmtpServerTransportTest.fast(), null, null);
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

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
        server.close();
    }

    private RawZmtp raw(int port, String type) throws Exception {
        RawZmtp peer = RawZmtp.handshaken("127.0.0.1", port, type);
        closeables.add(peer);
        return peer;
    }

    /** Binds {@code id} to a request connection from 127.0.0.1, so that its topic is honoured from there. */
    private void bound(String id) throws Exception {
        RawZmtp dealer = raw(server.addresses().request().getPort(), "DEALER");
        dealer.send(Wire.message("hello " + id));
        assertThat(dealer.readMessage()).singleElement().isEqualTo(("re:hello " + id).getBytes(US_ASCII));
        server.bind(id, peersByText.get("hello " + id));
    }

    private RawZmtp subscriber() throws Exception {
        return raw(server.addresses().publish().getPort(), "SUB");
    }

    /** A publication for {@code id} reaches {@code sub}: the connection is open and its topic honoured. */
    private void receives(RawZmtp sub, String id) throws Exception {
        await().until(() -> server.subscribedMinions().contains(id));
        byte[] body = ("for " + id).getBytes(US_ASCII);
        assertThat(server.publish(List.of(id), body)).isEmpty();
        assertThat(sub.readMessage())
                .satisfiesExactly(
                        topic -> assertThat(topic).isEqualTo(("m/" + id + "/").getBytes(US_ASCII)),
                        got -> assertThat(got).isEqualTo(body));
    }

    private static byte[] topic(int length) {
        byte[] topic = new byte[length];
        Arrays.fill(topic, (byte) 't');
        return topic;
    }

    /** ZMTP 3.0's subscription: a one-part message, 1 then the topic. */
    private static byte[] subscribeMessage(byte[] topic) {
        byte[] body = new byte[1 + topic.length];
        body[0] = 1;
        System.arraycopy(topic, 0, body, 1, topic.length);
        return Wire.longFrame(0, body);
    }

    @Test
    void aSubscriptionOfExactlyTheLimitIsTakenInEitherFormAndOneByteMoreClosesTheConnection() throws Exception {
        bound("web1");
        int limit = ZmtpConnection.MAX_SUBSCRIPTION;
        // ZMTP 3.1's SUBSCRIBE command: its body is the name's length, the name, the topic.
        int commandTopic = limit - 1 - "SUBSCRIBE".length();
        RawZmtp sub = subscriber();
        sub.send(Wire.command("SUBSCRIBE", topic(commandTopic)));
        sub.send(subscribeMessage(topic(limit - 1)));
        sub.send(Wire.command("SUBSCRIBE", Wire.ascii("m/web1/")));
        receives(sub, "web1");

        RawZmtp command = subscriber();
        command.trySend(Wire.command("SUBSCRIBE", topic(commandTopic + 1)));
        assertThat(command.closedByServer()).isTrue();
        RawZmtp message = subscriber();
        message.trySend(subscribeMessage(topic(limit)));
        assertThat(message.closedByServer()).isTrue();
        receives(sub, "web1");
    }

    @Test
    void theSixteenthDistinctTopicIsHeldARepeatCostsNothingAndTheSeventeenthClosesTheConnection() throws Exception {
        bound("web1");
        int most = ZmtpServerOptions.defaults().maxTopicsPerConnection();
        assertThat(most).isEqualTo(16);
        RawZmtp sub = subscriber();
        for (int i = 0; i < most - 1; i++) {
            sub.send(Wire.command("SUBSCRIBE", Wire.ascii("t" + i)));
            sub.send(Wire.command("SUBSCRIBE", Wire.ascii("t" + i)));
        }
        sub.send(Wire.command("SUBSCRIBE", Wire.ascii("m/web1/")));
        receives(sub, "web1");

        sub.trySend(Wire.command("SUBSCRIBE", Wire.ascii("t" + most)));
        assertThat(sub.closedByServer()).isTrue();
        await().until(() -> !server.subscribedMinions().contains("web1"));
    }
}

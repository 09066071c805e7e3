package io.brine.bench;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.transport.ClientTransport;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.tcp.TcpIo;
import io.brine.transport.zmtp.ZmtpServerOptions;
import io.brine.transport.zmtp.ZmtpServerTransport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The swarm's Netty ZeroMQ client against the master's ZeroMQ transport on loopback, the server echoing each frame
 * as "re:" + frame: frames queued before the connection get there, replies and publications come back, and a
 * connection the master drops is made again with what was queued meanwhile.
 */
class NettyZmtpSwarmTransportsIT {

    private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
    private final BlockingQueue<String> publications = new LinkedBlockingQueue<>();
    private final BlockingQueue<String> connections = new LinkedBlockingQueue<>();
    private final Map<String, Peer> peersByText = new ConcurrentHashMap<>();
    private final NettyZmtpSwarmTransports transports = new NettyZmtpSwarmTransports(1);
    private ZmtpServerTransport server;

    @AfterEach
    void tearDown() {
        transports.close();
        if (server != null) {
            server.close();
        }
    }

    private void startServer() throws Exception {
        server = new ZmtpServerTransport(
                "127.0.0.1", 0, 0, ZmtpServerOptions.defaults().withIo(TcpIo.NIO, 1), null, (ids, frame) -> {});
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

    private ClientTransport started() throws Exception {
        ClientTransport link =
                transports.open("127.0.0.1", server.addresses().request().getPort());
        assertThat(link.send(ascii("auth web1"))).as("queued before the start").isTrue();
        link.start(new ClientTransport.Listener() {
            @Override
            public void onReply(byte[] frame) {
                replies.add(new String(frame, US_ASCII));
            }

            @Override
            public void onPublication(byte[] frame) {
                publications.add(new String(frame, US_ASCII));
            }

            @Override
            public void onConnected() {
                connections.add("connected");
            }

            @Override
            public void onDisconnected() {
                connections.add("disconnected");
            }
        });
        assertThat(replies.poll(30, TimeUnit.SECONDS)).isEqualTo("re:auth web1");
        return link;
    }

    @Test
    void aMinionsFramesRepliesAndPublicationsTravelAsWithItsJeromqSockets() throws Exception {
        startServer();
        ClientTransport link = started();
        server.bind("web1", peersByText.get("auth web1"));
        link.subscribe("web1", server.addresses().publish().getPort());
        await().until(() -> server.subscribedMinions().contains("web1"));
        assertThat(server.publish(List.of("web1"), ascii("job-1"))).isEmpty();
        assertThat(publications.poll(30, TimeUnit.SECONDS)).isEqualTo("job-1");
        assertThat(server.connectionCount()).isEqualTo(2);
    }

    @Test
    void aConnectionTheMasterDropsIsMadeAgainAndWhatWasQueuedMeanwhileArrives() throws Exception {
        startServer();
        ClientTransport link = started();
        assertThat(connections.poll(30, TimeUnit.SECONDS)).isEqualTo("connected");
        server.disconnect(peersByText.get("auth web1"));
        assertThat(connections.poll(30, TimeUnit.SECONDS)).isEqualTo("disconnected");
        link.send(ascii("after the drop"));
        assertThat(replies.poll(30, TimeUnit.SECONDS)).isEqualTo("re:after the drop");
        assertThat(connections.poll(30, TimeUnit.SECONDS)).isEqualTo("connected");
        assertThat(peersByText.get("after the drop")).isNotEqualTo(peersByText.get("auth web1"));
        assertThat(server.connectionCount()).isEqualTo(1);
    }

    private static byte[] ascii(String text) {
        return text.getBytes(US_ASCII);
    }
}

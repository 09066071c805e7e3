package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.ConnectionLimits;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.transport.ServerTransport;
import io.brine.transport.tcp.TcpServerTransport;
import io.brine.transport.zmtp.ZmtpServerTransport;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * master.yaml's connection caps reach the transport the daemon builds: with {@code max_unauthenticated_per_source:
 * 2}, a third unauthenticated connection from one address is closed on arrival, on both transports, while another
 * address still connects (a fleet behind one NAT address needs the cap raised; a hostile host needs it low).
 */
class ConnectionLimitsWiringTest {

    @TempDir
    Path dir;

    final List<Socket> sockets = new ArrayList<>();
    ServerTransport transport;

    @AfterEach
    void close() throws Exception {
        for (Socket socket : sockets) {
            socket.close();
        }
        if (transport != null) {
            transport.close();
        }
    }

    @ParameterizedTest
    @EnumSource(TransportKind.class)
    void theConfiguredPerSourceCapIsTheOneServed(TransportKind kind) throws Exception {
        MasterConfig config = MasterConfig.builder(dir)
                .interfaceAddress("127.0.0.1")
                .transport(kind)
                .publishPort(0)
                .retPort(0)
                .tcpPort(0)
                .connectionLimits(new ConnectionLimits(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.of(2)))
                .build();
        transport = MasterDaemon.transport(config, (ids, frame) -> {});
        transport.start((from, frame) -> {});
        int port = transport.addresses().request().getPort();

        // Each admitted before the next connects: the event loops admit connections in any order.
        Socket first = connect("127.0.0.2", port);
        await().until(() -> open() == 1);
        Socket second = connect("127.0.0.2", port);
        await().until(() -> open() == 2);
        Socket third = connect("127.0.0.2", port);
        Socket elsewhere = connect("127.0.0.3", port);

        assertThat(HostilePeersTest.closedWithin(third, Duration.ofSeconds(10)))
                .as("third from 127.0.0.2")
                .isTrue();
        assertThat(HostilePeersTest.closedWithin(first, Duration.ofMillis(200))).isFalse();
        assertThat(HostilePeersTest.closedWithin(second, Duration.ofMillis(200)))
                .isFalse();
        assertThat(HostilePeersTest.closedWithin(elsewhere, Duration.ofMillis(200)))
                .isFalse();
    }

    private int open() {
        return transport instanceof TcpServerTransport tcp
                ? tcp.connectionCount()
                : ((ZmtpServerTransport) transport).connectionCount();
    }

    private Socket connect(String from, int port) throws Exception {
        Socket socket = new Socket();
        sockets.add(socket);
        socket.bind(new InetSocketAddress(InetAddress.getByName(from), 0));
        socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        await().until(socket::isConnected);
        return socket;
    }
}

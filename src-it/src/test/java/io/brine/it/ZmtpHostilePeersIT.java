package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.MasterConfig;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The network hardening issue's ZeroMQ items against a real master (ZMTP on Netty) and a real minion: hand-written
 * ZMTP peers send what stopped or exhausted the jeromq master, and each test ends with the minion still answering a
 * job. The per-connection bounds themselves are pinned in transport's {@code ZmtpServerTransportTest}.
 */
class ZmtpHostilePeersIT {

    private static final byte[] GREETING =
            HexFormat.of().parseHex("ff00000000000000017f03014e554c4c" + "00".repeat(16) + "00" + "00".repeat(31));

    @TempDir
    Path dir;

    Fleet fleet;
    MinionDaemon m1;
    private final List<Socket> sockets = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b ->
                b.acceptance(MasterConfig.Acceptance.builder().autoAccept(true).build()));
        m1 = fleet.startMinion("m1");
        Fleet.awaitState(m1, MinionState.ACCEPTED);
        fleet.awaitSubscribed("m1");
    }

    @AfterEach
    void tearDown() throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
        if (fleet != null) {
            fleet.close();
        }
    }

    private void assertMinionStillServed() throws Exception {
        JobPublisher.Published job = fleet.publish("test.ping", List.of("m1"));
        assertThat(job.unreachable()).isEmpty();
        fleet.awaitReturns(job.jid(), List.of("m1"));
    }

    private int publishPort() {
        return fleet.master.master().addresses().publish().getPort();
    }

    /** A connection from {@code local} that has sent a ZMTP 3.1 greeting and a READY of {@code type}. */
    private Socket peer(String local, int port, String type) throws IOException {
        Socket socket = new Socket();
        sockets.add(socket);
        socket.bind(new InetSocketAddress(InetAddress.getByName(local), 0));
        socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 10_000);
        socket.setSoTimeout((int) WAIT.toMillis());
        greet(socket, type);
        return socket;
    }

    /** Sends a ZMTP 3.1 greeting with the NULL mechanism and a READY of {@code type} on {@code socket}. */
    static void greet(Socket socket, String type) throws IOException {
        byte[] name = type.getBytes(StandardCharsets.US_ASCII);
        ByteArrayOutputStream ready = new ByteArrayOutputStream();
        ready.write(5);
        ready.writeBytes("READY".getBytes(StandardCharsets.US_ASCII));
        ready.write(11);
        ready.writeBytes("Socket-Type".getBytes(StandardCharsets.US_ASCII));
        ready.writeBytes(new byte[] {0, 0, 0, (byte) name.length});
        ready.writeBytes(name);
        OutputStream out = socket.getOutputStream();
        out.write(GREETING);
        out.write(new byte[] {4, (byte) ready.size()});
        out.write(ready.toByteArray());
        out.flush();
    }

    private static boolean trySend(Socket socket, byte[] bytes) {
        try {
            socket.getOutputStream().write(bytes);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Reads until the master closes the connection (fails by the socket timeout if it does not). */
    static byte[] readUntilClosed(Socket socket) throws IOException {
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[8192];
        try {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                seen.write(buffer, 0, n);
            }
        } catch (SocketException e) {
            // reset by the master: closed too
        }
        return seen.toByteArray();
    }

    @Test
    void longFrameHeadersOfAllOnesCloseTheirConnectionsAndTheMasterServesOn() throws Exception {
        List<Socket> hostile = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            Socket socket = peer("127.0.0.1", fleet.retPort(), "DEALER");
            trySend(socket, HexFormat.of().parseHex("02ffffffffffffffff"));
            hostile.add(socket);
        }
        for (Socket socket : hostile) {
            readUntilClosed(socket);
        }
        assertMinionStillServed();
    }

    @Test
    void endlessEmptyMoreFramesAreCutAtThePartsLimit() throws Exception {
        Socket socket = peer("127.0.0.1", fleet.retPort(), "DEALER");
        byte[] burst = new byte[2000];
        for (int i = 0; i < burst.length; i += 2) {
            burst[i] = 1; // MORE, size 0
        }
        for (int i = 0; i < 6000 && trySend(socket, burst); i++) {
            // up to 12 MB, the amount that drove the jeromq master out of memory
        }
        readUntilClosed(socket);
        assertMinionStillServed();
    }

    @Test
    void framesAnnouncedAt8MiBBeforeAuthAreRefusedOnTheirHeader() throws Exception {
        List<Socket> hostile = new ArrayList<>();
        for (int i = 0; i < 70; i++) {
            Socket socket = peer("127.0.0.1", fleet.retPort(), "DEALER");
            trySend(socket, HexFormat.of().parseHex("020000000000800000" + "00112233445566778899"));
            hostile.add(socket);
        }
        for (Socket socket : hostile) {
            readUntilClosed(socket);
        }
        assertMinionStillServed();
    }

    @Test
    void aThousandIdleDealersDoNotKeepTheMasterFromServingOrAcceptingMinions() throws Exception {
        for (int i = 0; i < 1000; i++) {
            peer("127.0.0.1", fleet.retPort(), "DEALER");
        }
        assertMinionStillServed();
        MinionDaemon m2 = fleet.startMinion("m2");
        Fleet.awaitState(m2, MinionState.ACCEPTED);
    }

    @Test
    void aSubscriptionToAnotherMinionsTopicFromElsewhereGetsNothingAndSpoofsNoPresence() throws Exception {
        Socket thief = peer("127.0.0.2", publishPort(), "SUB");
        byte[] topic = "m/m1/".getBytes(StandardCharsets.US_ASCII);
        ByteArrayOutputStream subscribe = new ByteArrayOutputStream();
        subscribe.writeBytes(new byte[] {4, (byte) (1 + 9 + topic.length), 9});
        subscribe.writeBytes("SUBSCRIBE".getBytes(StandardCharsets.US_ASCII));
        subscribe.writeBytes(topic);
        thief.getOutputStream().write(subscribe.toByteArray());
        new DataInputStream(thief.getInputStream()).readFully(new byte[64]); // the master's greeting
        assertMinionStillServed();

        // m1 goes away: the thief's subscription does not make it look connected.
        fleet.stopMinion(m1);
        await().until(() -> !fleet.zmqTransport().subscribedMinions().contains("m1"));
        assertThat(fleet.publish("test.ping", List.of("m1")).unreachable()).containsExactly("m1");

        // Nothing but the master's READY ever reached the thief.
        fleet.stopMaster();
        byte[] seen = readUntilClosed(thief);
        assertThat(seen).hasSizeLessThan(32).startsWith(4); // one short command frame: READY
    }
}

package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.master.jobs.StoredReturn;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.ReplayWindow;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.testing.TestKeys;
import io.brine.transport.tcp.TcpServerTransport;
import io.brine.transport.zmtp.ZmtpServerTransport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Issue 30 item 7: nothing a peer sends is dropped without a line. A frame one byte past its limit on each of the
 * master's wires (brine's TCP framing, ZMTP, Salt's TCP framing) and a forged, replayed or reordered publication
 * reaching a real minion each give one WARN per reason and source, and the same drop again within the interval
 * none more.
 */
class SilentDropsIT {

    @TempDir
    Path dir;

    private Fleet fleet;
    private ForgingRelay relay;
    private final List<Socket> sockets = new ArrayList<>();
    private final List<Runnable> detach = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        detach.forEach(Runnable::run);
        for (Socket socket : sockets) {
            socket.close();
        }
        if (relay != null) {
            relay.close();
        }
        if (fleet != null) {
            fleet.close();
        }
    }

    /** What the logger {@code name} logs from now on. */
    private ListAppender<ILoggingEvent> capture(String name) {
        Logger logger = (Logger) LoggerFactory.getLogger(name);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        detach.add(() -> logger.detachAppender(appender));
        return appender;
    }

    private static List<String> warnings(ListAppender<ILoggingEvent> log, String containing) {
        return log.list.stream()
                .filter(event -> event.getLevel() == Level.WARN)
                .map(ILoggingEvent::getFormattedMessage)
                .filter(line -> line.contains(containing))
                .toList();
    }

    private Socket connect(int port) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setSoTimeout((int) WAIT.toMillis());
        sockets.add(socket);
        return socket;
    }

    /** Sends {@code bytes} on a new connection to {@code port} and waits until the master closes it. */
    private void refusedTwice(int port, String zmtpType, byte[] bytes) throws IOException {
        for (int i = 0; i < 2; i++) {
            Socket socket = connect(port);
            if (zmtpType != null) {
                ZmtpHostilePeersIT.greet(socket, zmtpType);
            }
            socket.getOutputStream().write(bytes);
            ZmtpHostilePeersIT.readUntilClosed(socket);
        }
    }

    @Test
    void aFrameOneBytePastEachLimitOfTheMasterIsOneWarnPerReasonAndSource() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(
                b -> b.transports(TransportKind.ZEROMQ, TransportKind.TCP).saltMinions(true));
        ListAppender<ILoggingEvent> tcpLog = capture(TcpServerTransport.class.getName());
        ListAppender<ILoggingEvent> zmqLog = capture(ZmtpServerTransport.class.getName());
        int past = FrameLimits.MAX_UNAUTHENTICATED + 1;

        // brine's TCP framing: the length prefix alone.
        refusedTwice(fleet.tcpPort(), null, ByteBuffer.allocate(4).putInt(past).array());
        // ZMTP, after the handshake: a long data frame's header alone.
        refusedTwice(
                fleet.retPort(),
                "DEALER",
                ByteBuffer.allocate(9).put((byte) 0x02).putLong(past).array());
        // Salt's TCP framing on the same port: {head: {}, body: bin32 of one byte past}, up to the bin32 header.
        ByteBuffer salt = ByteBuffer.allocate(32)
                .put((byte) 0x82)
                .put((byte) 0xa4)
                .put("head".getBytes(StandardCharsets.US_ASCII))
                .put((byte) 0x80)
                .put((byte) 0xa4)
                .put("body".getBytes(StandardCharsets.US_ASCII))
                .put((byte) 0xc6)
                .putInt(past);
        byte[] saltHeader = new byte[salt.position()];
        salt.flip().get(saltHeader);
        refusedTwice(fleet.retPort(), null, saltHeader);

        String limit = " over the limit of " + FrameLimits.MAX_UNAUTHENTICATED + " bytes";
        assertThat(warnings(tcpLog, "Frames from 127.0.0.1 dropped: "))
                .singleElement()
                .asString()
                .contains("TCP: a frame" + limit + "; connection closed (" + past + " bytes announced)");
        List<String> zmq = warnings(zmqLog, "Frames from 127.0.0.1 dropped: ");
        assertThat(zmq)
                .filteredOn(line -> line.contains("ZeroMQ request port: a frame" + limit))
                .singleElement()
                .asString()
                .contains("(" + past + " bytes announced)");
        assertThat(zmq)
                .filteredOn(line -> line.contains("Salt TCP request port: frame: longer than the limit of "
                        + FrameLimits.MAX_UNAUTHENTICATED + " bytes"))
                .hasSize(1);
        assertThat(zmq).hasSize(2);
    }

    @Test
    void aForgedReplayedOrReorderedPublicationIsOneWarnPerReasonOnTheMinion() throws Exception {
        TestClock clock = new TestClock(); // the minion's throttle does not move on its own
        fleet = new Fleet(dir, clock).transport(TransportKind.TCP);
        fleet.startMaster(b ->
                b.acceptance(MasterConfig.Acceptance.builder().autoAccept(true).build()));
        relay = new ForgingRelay(fleet.tcpPort(), TestKeys.pair(TestKeys.COUNT - 10), AuthStatus.PENDING);
        relay.mode(ForgingRelay.Mode.PASS);
        MinionDaemon m1 = fleet.startMinion("m1", b -> b.tcpPort(relay.port()));
        Fleet.awaitState(m1, MinionState.ACCEPTED);
        ListAppender<ILoggingEvent> gateLog = capture("io.brine.minion.PublicationGate");

        JobPublisher.Published first = fleet.publish("test.ping", List.of("m1"));
        fleet.awaitReturns(first.jid(), List.of("m1"));
        relay.forgeLastPublication();
        relay.forgeLastPublication();
        relay.replayLastPublication();
        relay.replayLastPublication();

        // Held back while a window's worth of newer publications runs, then delivered: too late to tell it new.
        relay.withholdNextPublication();
        JobPublisher.Published late = fleet.publish("test.ping", List.of("m1"));
        await().until(relay::holdsPublication);
        List<String> newer = new ArrayList<>();
        for (int i = 0; i < ReplayWindow.SIZE; i++) {
            newer.add(fleet.publish("test.ping", List.of("m1")).jid());
        }
        newer.forEach(jid -> fleet.awaitReturns(jid, List.of("m1")));
        relay.deliverWithheld();
        // On the same connection after them: once this one's return is in, everything before it was handled.
        JobPublisher.Published last = fleet.publish("test.ping", List.of("m1"));
        fleet.awaitReturns(last.jid(), List.of("m1"));
        relay.replayLastPublication();
        relay.replayLastPublication();
        JobPublisher.Published fence = fleet.publish("test.ping", List.of("m1"));
        fleet.awaitReturns(fence.jid(), List.of("m1"));

        List<StoredReturn> lateReturns = fleet.master.master().jobs().cache().returns(late.jid());
        assertThat(lateReturns).as("the reordered job did not run").isEmpty();
        assertThat(warnings(gateLog, "not signed by the master"))
                .singleElement()
                .asString()
                .contains("publication '" + first.jid() + "' ");
        assertThat(warnings(gateLog, "dropped: replayed"))
                .as("four replays, one line")
                .singleElement()
                .asString()
                .contains("publication '" + first.jid() + "' ");
        assertThat(warnings(gateLog, " not run: it came after "))
                .singleElement()
                .asString()
                .contains("publication '" + late.jid() + "' (serial ");
        assertThat(gateLog.list)
                .filteredOn(event -> event.getLevel().isGreaterOrEqual(Level.WARN))
                .hasSize(3);
    }
}

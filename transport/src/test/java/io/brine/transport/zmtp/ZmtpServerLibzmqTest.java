package io.brine.transport.zmtp;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.tcp.TcpIo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real libzmq 4.3 (python3-zmq) against the master's ZeroMQ transport: a DEALER authenticates (the test binds it
 * as web1), a SUB without heartbeats of its own subscribes and is honoured, a REQ asks; then every peer stays quiet
 * for two and a half idle timeouts, and the SUB is still on its first connection, kept by the master's PINGs that
 * libzmq answers. The Python side waits for each answer, so nothing here waits on time. The idle timeout is 2 s
 * (a PING after 1 s of quiet) and the unauthenticated one 10 s: with both at 1 s, the SUB once waited 20 s for its
 * first publication on a machine at load 25 (2 cores); most likely the python3 peer, starved of the CPU,
 * answered a PING or subscribed past the 1 s, its connection was closed
 * and the one publication sent on it was lost.
 */
class ZmtpServerLibzmqTest {

    private static final String PYTHON = "/usr/bin/python3";

    private static final String SCRIPT = """
            import sys, time, zmq
            from zmq.utils.monitor import recv_monitor_message
            router, pub = sys.argv[1], sys.argv[2]
            ctx = zmq.Context()
            def socket(kind):
                s = ctx.socket(kind)
                s.setsockopt(zmq.LINGER, 0)
                s.setsockopt(zmq.RCVTIMEO, 20000)
                s.setsockopt(zmq.SNDTIMEO, 20000)
                return s
            def show(name, parts):
                print(name, "|".join(p.decode() for p in parts), flush=True)
            dealer = socket(zmq.DEALER)
            dealer.connect("tcp://127.0.0.1:" + router)
            dealer.send(b"auth web1")
            show("dealer", dealer.recv_multipart())
            sub = socket(zmq.SUB)
            monitor = sub.get_monitor_socket(zmq.EVENT_DISCONNECTED)
            sub.setsockopt(zmq.SUBSCRIBE, b"m/web1/")
            sub.setsockopt(zmq.SUBSCRIBE, b"b/")
            sub.connect("tcp://127.0.0.1:" + pub)
            show("sub", sub.recv_multipart())
            req = socket(zmq.REQ)
            req.connect("tcp://127.0.0.1:" + router)
            req.send(b"req-hello")
            show("req", req.recv_multipart())
            time.sleep(5)  # two and a half idle timeouts of quiet on every connection
            dealer.send(b"publish again")
            show("dealer", dealer.recv_multipart())
            show("sub", sub.recv_multipart())
            disconnects = 0
            while monitor.poll(0):
                recv_monitor_message(monitor)
                disconnects += 1
            print("sub disconnects", disconnects, flush=True)
            print("libzmq", zmq.zmq_version(), flush=True)
            ctx.destroy(linger=0)
            """;

    @TempDir
    Path dir;

    private ZmtpServerTransport server;

    @AfterEach
    void tearDown() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void libzmqDealerReqAndSubAreServedAndAQuietSubscriberIsKeptByPings() throws Exception {
        requirePyzmq();
        server = new ZmtpServerTransport(
                "127.0.0.1",
                0,
                0,
                ZmtpServerOptions.defaults()
                        .withIo(TcpIo.NIO, 1)
                        .withTimeouts(Duration.ofSeconds(10), Duration.ofSeconds(2)),
                null,
                null);
        ZmtpServerTransport self = server;
        server.start(new ServerTransport.InboundHandler() {
            @Override
            public void onFrame(Peer from, byte[] frame) {
                String text = new String(frame, US_ASCII);
                if (text.equals("auth web1")) {
                    self.bind("web1", from);
                    // Publish once the subscription is honoured, off the event loop.
                    new Thread(() -> {
                                await().until(() -> self.subscribedMinions().contains("web1"));
                                self.publish(List.of("web1"), "first".getBytes(US_ASCII));
                            })
                            .start();
                } else if (text.equals("publish again")) {
                    self.publish(List.of("web1"), "after-quiet".getBytes(US_ASCII));
                }
                self.send(from, ("reply:" + text).getBytes(US_ASCII));
            }
        });
        Path script = Files.writeString(dir.resolve("peers.py"), SCRIPT);
        Path out = dir.resolve("out.txt");
        Process python = new ProcessBuilder(
                        PYTHON,
                        script.toString(),
                        String.valueOf(server.addresses().request().getPort()),
                        String.valueOf(server.addresses().publish().getPort()))
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        if (!python.waitFor(60, TimeUnit.SECONDS)) {
            python.destroyForcibly();
            fail("the libzmq peers did not finish; they printed:%n%s", Files.readString(out));
        }
        List<String> printed = Files.readAllLines(out);
        assertThat(python.exitValue()).as("python exit; it printed %s", printed).isZero();
        assertThat(printed)
                .startsWith(
                        "dealer reply:auth web1",
                        "sub m/web1/|first",
                        "req reply:req-hello",
                        "dealer reply:publish again",
                        "sub m/web1/|after-quiet",
                        "sub disconnects 0")
                .last()
                .asString()
                .startsWith("libzmq 4.3");
    }

    private static void requirePyzmq() throws IOException, InterruptedException {
        Process check = new ProcessBuilder(PYTHON, "-c", "import zmq")
                .redirectErrorStream(true)
                .start();
        check.getInputStream().readAllBytes();
        if (!check.waitFor(30, TimeUnit.SECONDS) || check.exitValue() != 0) {
            fail("python3-zmq missing: run apt-get install python3-zmq");
        }
    }
}

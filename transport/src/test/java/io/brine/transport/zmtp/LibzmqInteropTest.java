package io.brine.transport.zmtp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real libzmq (through python3-zmq) against our handlers on loopback: a DEALER and a REQ talk to our ROUTER, a SUB
 * with heartbeats on subscribes to our PUB, gets a publication, a second one once we have seen its PING (which the
 * handler answered), and unsubscribes. The Python side waits for each answer, so nothing here waits on time.
 */
class LibzmqInteropTest {

    private static final String PYTHON = "/usr/bin/python3";

    private static final String SCRIPT = """
            import sys, zmq
            router, pub = sys.argv[1], sys.argv[2]
            ctx = zmq.Context()
            def socket(kind):
                s = ctx.socket(kind)
                s.setsockopt(zmq.LINGER, 0)
                s.setsockopt(zmq.RCVTIMEO, 20000)
                s.setsockopt(zmq.SNDTIMEO, 20000)
                return s
            dealer = socket(zmq.DEALER)
            dealer.setsockopt(zmq.IDENTITY, b"dealer-1")
            dealer.connect("tcp://127.0.0.1:" + router)
            req = socket(zmq.REQ)
            req.connect("tcp://127.0.0.1:" + router)
            sub = socket(zmq.SUB)
            sub.setsockopt(zmq.HEARTBEAT_IVL, 100)
            sub.setsockopt(zmq.HEARTBEAT_TIMEOUT, 5000)
            sub.setsockopt(zmq.SUBSCRIBE, b"m/web1/")
            sub.connect("tcp://127.0.0.1:" + pub)
            def show(name, parts):
                print(name, "|".join(p.decode() for p in parts), flush=True)
            dealer.send(b"dealer-hello")
            show("dealer", dealer.recv_multipart())
            req.send(b"req-hello")
            show("req", req.recv_multipart())
            show("sub", sub.recv_multipart())
            show("sub", sub.recv_multipart())
            sub.setsockopt(zmq.UNSUBSCRIBE, b"m/web1/")
            dealer.send(b"await-cancel")
            show("dealer", dealer.recv_multipart())
            print("libzmq", zmq.zmq_version(), flush=True)
            ctx.destroy(linger=0)
            """;

    @TempDir
    Path dir;

    private EventLoopGroup group;
    private final Queue<String> routerEvents = new ConcurrentLinkedQueue<>();
    private final Queue<String> pubEvents = new ConcurrentLinkedQueue<>();
    private final CompletableFuture<Void> cancelled = new CompletableFuture<>();

    @BeforeEach
    void startGroup() {
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    }

    @AfterEach
    void stopGroup() {
        group.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void libzmqDealerReqAndSubTalkToOurRouterAndPub() throws Exception {
        requirePyzmq();
        int router = serve(SocketType.ROUTER, RouterPeer::new);
        int pub = serve(SocketType.PUB, PubPeer::new);
        Path script = Files.writeString(dir.resolve("peers.py"), SCRIPT);
        Path out = dir.resolve("out.txt");
        Process python = new ProcessBuilder(PYTHON, script.toString(), String.valueOf(router), String.valueOf(pub))
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
                        "dealer reply:dealer-hello",
                        "req reply:req-hello",
                        "sub m/web1/|first",
                        "sub m/web1/|after-ping",
                        "dealer cancelled")
                .last()
                .asString()
                .startsWith("libzmq 4.");

        assertThat(routerEvents)
                .contains(
                        "Handshaken[DEALER, identity=dealer-1]",
                        "Handshaken[REQ, identity=]",
                        "Message[dealer-hello]",
                        "Message[, req-hello]",
                        "Message[await-cancel]");
        assertThat(pubEvents)
                .startsWith("Handshaken[SUB, identity=]")
                .contains("Subscribe[m/web1/]", "Ping[ttl=0, context=]", "Cancel[m/web1/]");
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

    private int serve(SocketType ours, Supplier<ChannelInboundHandlerAdapter> peer) {
        Channel server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        ZmtpPipeline.addTo(channel.pipeline(), ours, ZmtpLimits.fixed(64 * 1024, 4, 64 * 1024));
                        channel.pipeline().addLast("peer", peer.get());
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .syncUninterruptibly()
                .channel();
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /** A minimal ROUTER transport: answers each message on its own connection, its last part prefixed. */
    private final class RouterPeer extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            routerEvents.add(msg.toString());
            if (msg instanceof ZmtpEvent.Message message) {
                List<byte[]> parts = new ArrayList<>(message.parts());
                String last = new String(parts.remove(parts.size() - 1), StandardCharsets.US_ASCII);
                if (last.equals("await-cancel")) {
                    parts.add(ascii("cancelled"));
                    cancelled.thenRun(() -> ctx.writeAndFlush(ZmtpEncoder.message(ctx.alloc(), parts)));
                } else {
                    parts.add(ascii("reply:" + last));
                    ctx.writeAndFlush(ZmtpEncoder.message(ctx.alloc(), parts));
                }
            }
        }
    }

    /** A minimal PUB transport: publishes once per subscription, and once more after the first PING. */
    private final class PubPeer extends ChannelInboundHandlerAdapter {
        private byte[] topic;
        private boolean pinged;
        private boolean sentAfterPing;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            pubEvents.add(msg.toString());
            if (msg instanceof ZmtpEvent.Subscribe subscribe) {
                topic = subscribe.topic();
                ctx.writeAndFlush(ZmtpEncoder.message(ctx.alloc(), topic, ascii("first")));
            } else if (msg instanceof ZmtpEvent.Ping) {
                pinged = true;
            } else if (msg instanceof ZmtpEvent.Cancel) {
                cancelled.complete(null);
            }
            if (pinged && topic != null && !sentAfterPing) {
                sentAfterPing = true;
                ctx.writeAndFlush(ZmtpEncoder.message(ctx.alloc(), topic, ascii("after-ping")));
            }
        }
    }
}

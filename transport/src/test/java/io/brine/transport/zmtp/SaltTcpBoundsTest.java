package io.brine.transport.zmtp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltTcpFrame;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Salt TCP frames one byte, one level and one value on either side of each bound (issue 15; PROTOCOL.md 10.1):
 * byte-exact against the decoder alone, cut at every point, and over real sockets with the transport's defaults
 * before and after the connection is authenticated. A frame at a bound arrives whole; one past closes its
 * connection, logged at DEBUG (an expected network error, never WARN or ERROR), and nothing of it reaches the master.
 */
class SaltTcpBoundsTest {

    /** {@code {head: {}, body: ...}} up to the body's first byte. */
    private static final byte[] HEAD = {
        (byte) 0x82, (byte) 0xa4, 'h', 'e', 'a', 'd', (byte) 0x80, (byte) 0xa4, 'b', 'o', 'd', 'y'
    };
    /** The values of {@link #HEAD}: the frame's map, two keys, the head's map; the body is the fifth. */
    private static final int HEAD_VALUES = 4;

    private record Inbound(Peer peer, byte[] frame) {}

    private final BlockingQueue<Inbound> inbound = new LinkedBlockingQueue<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final ListAppender<ILoggingEvent> log = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(ZmtpServerTransport.class);
    private Level level;
    private ZmtpServerTransport server;

    @BeforeEach
    void captureTheTransportsLog() {
        level = logger.getLevel();
        logger.setLevel(Level.DEBUG);
        logger.setAdditive(false); // the DEBUG lines go to this test's list, not the console
        log.start();
        logger.addAppender(log);
    }

    @AfterEach
    void tearDown() throws Exception {
        logger.detachAppender(log);
        logger.setLevel(level);
        logger.setAdditive(true);
        for (Socket socket : sockets) {
            socket.close();
        }
        if (server != null) {
            server.close();
        }
    }

    // ---------------------------------------------------------------- frames

    /** A frame of exactly {@code total} bytes whose body is a bin32 (the header declares the size). */
    static byte[] binFrame(int total) {
        ByteBuffer frame = ByteBuffer.allocate(total);
        frame.put(HEAD).put((byte) 0xc6).putInt(total - HEAD.length - 5);
        return frame.array();
    }

    /** The first bytes of {@link #binFrame}, up to the end of the size its header declares. */
    static byte[] binHeader(int total) {
        return Arrays.copyOf(binFrame(total), HEAD.length + 5);
    }

    /** A frame of exactly {@code values} msgpack values, the body an array32 of nils (each a byte, so undeclared). */
    static byte[] nilsFrame(int values) {
        int nils = values - HEAD_VALUES - 1;
        ByteBuffer frame = ByteBuffer.allocate(HEAD.length + 5 + nils);
        frame.put(HEAD).put((byte) 0xdd).putInt(nils);
        while (frame.hasRemaining()) {
            frame.put((byte) 0xc0);
        }
        return frame.array();
    }

    /**
     * A frame of {@code levels} nested containers: the frame's map, then arrays of one item each; the innermost holds
     * a nil, or is empty (an empty container is a level too).
     */
    static byte[] nestedFrame(int levels, boolean emptyInnermost) {
        int arrays = levels - 1;
        byte[] frame = Arrays.copyOf(HEAD, HEAD.length + arrays + (emptyInnermost ? 0 : 1));
        Arrays.fill(frame, HEAD.length, HEAD.length + arrays, (byte) 0x91);
        if (emptyInnermost) {
            frame[frame.length - 1] = (byte) 0x90;
        } else {
            frame[frame.length - 1] = (byte) 0xc0;
        }
        return frame;
    }

    // ---------------------------------------------------------------- the decoder alone, cut at every point

    private static EmbeddedChannel decoder(SaltLimits limits) {
        return new EmbeddedChannel(new SaltTcpDecoder(() -> limits));
    }

    private static List<byte[]> frames(EmbeddedChannel channel) {
        List<byte[]> frames = new ArrayList<>();
        for (Object frame; (frame = channel.readInbound()) != null; ) {
            frames.add((byte[]) frame);
        }
        return frames;
    }

    @Test
    void twoFramesEachExactlyAtTheByteLimitArriveWholeWhereverTheStreamIsCut() {
        SaltLimits limits = new SaltLimits(300, 4, 1_000);
        byte[] declared = binFrame(300);
        byte[] undeclared = nilsFrame(HEAD_VALUES + 1 + 300 - HEAD.length - 5);
        assertThat(undeclared).hasSize(300);
        byte[] stream = concat(declared, undeclared);
        for (int cut = 0; cut <= stream.length; cut++) {
            EmbeddedChannel channel = decoder(limits);
            channel.writeInbound(Unpooled.wrappedBuffer(stream, 0, cut));
            channel.writeInbound(Unpooled.wrappedBuffer(stream, cut, stream.length - cut));
            assertThat(frames(channel)).as("cut at %d", cut).containsExactly(declared, undeclared);
        }
    }

    @Test
    void aFrameDeclaredOneBytePastTheLimitIsRefusedWhenItsSizeIsWholeHoweverTheHeaderIsSplit() {
        SaltLimits limits = new SaltLimits(300, 4, 1_000);
        byte[] atLimit = binHeader(300);
        byte[] past = binHeader(301);
        for (int cut = 1; cut < past.length; cut++) {
            EmbeddedChannel channel = decoder(limits);
            channel.writeInbound(Unpooled.wrappedBuffer(past, 0, cut));
            int from = cut;
            assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(past, from, past.length - from)))
                    .as("cut at %d", cut)
                    .isInstanceOf(DecoderException.class)
                    .hasMessage("frame: longer than the limit of 300 bytes");
            // Refused on the header: every later byte is discarded, nothing comes out.
            channel.writeInbound(Unpooled.wrappedBuffer(binFrame(20)));
            assertThat(frames(channel)).isEmpty();

            EmbeddedChannel fits = decoder(limits);
            fits.writeInbound(Unpooled.wrappedBuffer(atLimit, 0, cut));
            fits.writeInbound(Unpooled.wrappedBuffer(atLimit, cut, atLimit.length - cut));
            assertThat(frames(fits)).isEmpty(); // waits for its 283 bytes of body
        }
    }

    @Test
    void anUndeclaredFrameOneBytePastTheLimitIsRefusedAtItsThreeHundredthByteNotBefore() {
        SaltLimits limits = new SaltLimits(300, 4, 1_000);
        byte[] past = nilsFrame(HEAD_VALUES + 1 + 301 - HEAD.length - 5);
        assertThat(past).hasSize(301);
        EmbeddedChannel channel = decoder(limits);
        for (int i = 0; i < 299; i++) {
            channel.writeInbound(Unpooled.wrappedBuffer(past, i, 1));
        }
        assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(past, 299, 1)))
                .isInstanceOf(DecoderException.class)
                .hasMessage("frame: longer than the limit of 300 bytes");
    }

    @Test
    void valuesAndLevelsAtTheirLimitsPassAndOnePastIsRefusedAsTheReaderRefusesIt() throws Exception {
        SaltLimits limits = new SaltLimits(4_096, 4, 64);
        List<byte[]> fit = List.of(nilsFrame(64), nestedFrame(4, false), nestedFrame(4, true));
        for (byte[] frame : fit) {
            EmbeddedChannel channel = decoder(limits);
            channel.writeInbound(Unpooled.wrappedBuffer(frame));
            assertThat(frames(channel)).containsExactly(frame);
            SaltTcpFrame.decode(frame, limits); // the reader takes it too
        }
        List<Map.Entry<byte[], String>> past = List.of(
                Map.entry(nilsFrame(65), "frame: more than 64 values"),
                Map.entry(nestedFrame(5, false), "frame: nested deeper than 4"),
                Map.entry(nestedFrame(5, true), "frame: nested deeper than 4"));
        for (Map.Entry<byte[], String> c : past) {
            EmbeddedChannel channel = decoder(limits);
            assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(c.getKey())))
                    .as(c.getValue())
                    .isInstanceOf(DecoderException.class)
                    .hasMessage(c.getValue());
            assertThatThrownBy(() -> SaltTcpFrame.decode(c.getKey(), limits))
                    .as(c.getValue())
                    .isInstanceOf(MalformedException.class);
        }
    }

    // ---------------------------------------------------------------- over real sockets, the transport's defaults

    private void start() throws IOException {
        server = new ZmtpServerTransport("127.0.0.1", 0, 0, ZmtpServerTransportTest.fast(), null, null, true);
        server.start(new ServerTransport.InboundHandler() {
            @Override
            public void onFrame(Peer from, byte[] frame) {
                inbound.add(new Inbound(from, frame));
            }
        });
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket("127.0.0.1", server.addresses().request().getPort());
        socket.setSoTimeout((int) Duration.ofSeconds(20).toMillis());
        socket.setTcpNoDelay(true);
        sockets.add(socket);
        return socket;
    }

    /** Sends {@code frame} in random pieces and takes it from the master whole: the peer it came from. */
    private Peer arrives(Socket socket, byte[] frame) throws Exception {
        OutputStream out = socket.getOutputStream();
        Random random = new Random(frame.length);
        for (int at = 0; at < frame.length; ) {
            int piece = Math.min(frame.length - at, 1 + random.nextInt(64 * 1024));
            out.write(frame, at, piece);
            out.flush();
            at += piece;
        }
        Inbound got = inbound.poll(20, TimeUnit.SECONDS);
        assertThat(got)
                .as("a frame of %d bytes reached the master", frame.length)
                .isNotNull();
        assertThat(got.frame()).isEqualTo(frame);
        return got.peer();
    }

    /**
     * Sends {@code bytes}; the server closes the connection and the master hears nothing. Why is one WARN line per
     * reason and source within the drop log's interval, written before the close: a second refusal alike adds none.
     */
    private void refused(Socket socket, byte[] bytes, String reason) throws IOException {
        socket.getOutputStream().write(bytes);
        assertThat(closedByServer(socket)).as(reason).isTrue();
        assertThat(log.list)
                .filteredOn(event -> event.getFormattedMessage().contains(reason))
                .as(reason)
                .singleElement()
                .satisfies(event -> {
                    assertThat(event.getLevel()).isEqualTo(Level.WARN);
                    assertThat(event.getFormattedMessage())
                            .startsWith("Frames from 127.0.0.1 dropped: Salt TCP ")
                            .contains(" port: " + reason + "; connection closed");
                });
        assertThat(inbound).isEmpty();
    }

    /** True when the server closed the connection: end of stream, or a reset for bytes it never read. */
    private static boolean closedByServer(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        try {
            while (in.read() != -1) {
                // a Salt TCP connection refused mid-frame has nothing to answer: nothing comes
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    /** A connection the master has bound a minion to: its frames are held to the session limits. */
    private Socket authenticated(String id) throws Exception {
        Socket socket = connect();
        server.bind(id, arrives(socket, nilsFrame(HEAD_VALUES + 1)));
        return socket;
    }

    @Test
    void beforeAuthA64KiBFrameArrivesAndOneBytePastClosesTheConnectionOnItsHeader() throws Exception {
        start();
        int limit = ZmtpServerOptions.defaults().maxUnauthenticatedFrame();
        assertThat(limit).isEqualTo(SaltLimits.UNAUTHENTICATED.maxBytes());
        Socket socket = connect();
        Peer peer = arrives(socket, binFrame(limit));
        assertThat(peer.framing()).isEqualTo(Peer.Framing.SALT_TCP_REQUEST);
        arrives(socket, binFrame(limit)); // and the next one, on the same connection

        refused(connect(), binHeader(limit + 1), "frame: longer than the limit of " + limit + " bytes");
        refused(socket, binHeader(limit + 1), "frame: longer than the limit of " + limit + " bytes");
        await().until(() -> server.connectionCount() == 0);
    }

    @Test
    void beforeAuth4096ValuesAnd16LevelsArriveAndOneMoreOfEitherClosesTheConnection() throws Exception {
        start();
        SaltLimits limits = SaltLimits.UNAUTHENTICATED;
        Socket socket = connect();
        arrives(socket, nilsFrame(limits.maxElements()));
        arrives(socket, nestedFrame(limits.maxDepth(), false));
        arrives(socket, nestedFrame(limits.maxDepth(), true));

        refused(connect(), nilsFrame(limits.maxElements() + 1), "frame: more than 4096 values");
        refused(connect(), nestedFrame(limits.maxDepth() + 1, false), "frame: nested deeper than 16");
        refused(connect(), nestedFrame(limits.maxDepth() + 1, true), "frame: nested deeper than 16");
    }

    @Test
    void afterAuthAn8MiBFrameArrivesAndOneBytePastClosesTheConnectionOnItsHeader() throws Exception {
        start();
        int limit = ZmtpServerOptions.defaults().maxFrame();
        assertThat(limit).isEqualTo(SaltLimits.SESSION.maxBytes());
        Socket socket = authenticated("web1");
        arrives(socket, binFrame(limit));
        refused(socket, binHeader(limit + 1), "frame: longer than the limit of " + limit + " bytes");

        // The publish port holds a bound minion's connection to the unauthenticated limit: it sends one hello.
        Socket publish = new Socket("127.0.0.1", server.addresses().publish().getPort());
        sockets.add(publish);
        publish.setSoTimeout((int) Duration.ofSeconds(20).toMillis());
        server.bind("web1", arrives(publish, nilsFrame(HEAD_VALUES + 1)));
        int before = ZmtpServerOptions.defaults().maxUnauthenticatedFrame();
        refused(publish, binHeader(before + 1), "frame: longer than the limit of " + before + " bytes");
    }

    @Test
    void afterAuthAMillionValuesAnd100LevelsArriveAndOneMoreOfEitherClosesTheConnection() throws Exception {
        start();
        SaltLimits limits = SaltLimits.SESSION;
        Socket socket = authenticated("web1");
        arrives(socket, nilsFrame(limits.maxElements()));
        arrives(socket, nestedFrame(limits.maxDepth(), false));
        arrives(socket, nestedFrame(limits.maxDepth(), true));

        refused(authenticated("web2"), nilsFrame(limits.maxElements() + 1), "frame: more than 1000000 values");
        refused(authenticated("web3"), nestedFrame(limits.maxDepth() + 1, false), "frame: nested deeper than 100");
        refused(authenticated("web4"), nestedFrame(limits.maxDepth() + 1, true), "frame: nested deeper than 100");
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }
}

package io.brine.transport.zmtp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** Raw ZMTP bytes written by hand, and embedded connections to feed them to. */
final class Wire {

    static final int MORE = 0x01;
    static final int LONG = 0x02;
    static final int COMMAND = 0x04;

    private Wire() {}

    static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex.replace(" ", ""));
    }

    static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] concat(byte[]... pieces) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] piece : pieces) {
            out.writeBytes(piece);
        }
        return out.toByteArray();
    }

    /** A greeting with zero padding and filler. */
    static byte[] greeting(int major, int minor, String mechanism, int asServer) {
        byte[] g = new byte[64];
        g[0] = (byte) 0xff;
        g[9] = 0x7f;
        g[10] = (byte) major;
        g[11] = (byte) minor;
        byte[] name = ascii(mechanism);
        System.arraycopy(name, 0, g, 12, name.length);
        g[32] = (byte) asServer;
        return g;
    }

    static byte[] greeting31() {
        return greeting(3, 1, "NULL", 0);
    }

    /** A frame with a 1-byte size. */
    static byte[] frame(int flags, byte[] body) {
        return concat(new byte[] {(byte) flags, (byte) body.length}, body);
    }

    /** A frame with an 8-byte size, whatever the body's length. */
    static byte[] longFrame(int flags, byte[] body) {
        ByteBuf header = Unpooled.buffer(9).writeByte(flags | LONG).writeLong(body.length);
        return concat(ByteBufUtil.getBytes(header), body);
    }

    /** A command body: name length, name, data. */
    static byte[] commandBody(String name, byte[] data) {
        return concat(new byte[] {(byte) name.length()}, ascii(name), data);
    }

    /** A command frame, long when its body needs it. */
    static byte[] command(String name, byte[] data) {
        byte[] body = commandBody(name, data);
        return body.length > 255 ? longFrame(COMMAND, body) : frame(COMMAND, body);
    }

    /** READY properties, each {@code name-length name value-length:u32be value}. */
    static byte[] properties(String... namesAndValues) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            byte[] value = ascii(namesAndValues[i + 1]);
            out.write(namesAndValues[i].length());
            out.writeBytes(ascii(namesAndValues[i]));
            out.writeBytes(Unpooled.buffer(4).writeInt(value.length).array());
            out.writeBytes(value);
        }
        return out.toByteArray();
    }

    static byte[] ready(String... namesAndValues) {
        return command("READY", properties(namesAndValues));
    }

    /** What a peer of {@code type} sends first: greeting and READY. */
    static byte[] handshake(String type) {
        return concat(greeting31(), ready("Socket-Type", type));
    }

    /** A message: MORE on all but the last part, short frames. */
    static byte[] message(String... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < parts.length; i++) {
            out.writeBytes(frame(i < parts.length - 1 ? MORE : 0, ascii(parts[i])));
        }
        return out.toByteArray();
    }

    static EmbeddedChannel decoder(ZmtpLimits limits) {
        return new EmbeddedChannel(new ZmtpDecoder(limits));
    }

    static EmbeddedChannel server(SocketType ours, ZmtpLimits limits) {
        // As a server's child channel: the pipeline is built on registration, before the connection is active.
        return new EmbeddedChannel(new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel channel) {
                ZmtpPipeline.addTo(channel.pipeline(), ours, limits);
            }
        });
    }

    /** A client connection ({@link ZmtpClientPipeline}), already active: its greeting is written at once. */
    static EmbeddedChannel client(SocketType ours, ZmtpLimits limits) {
        return new EmbeddedChannel(new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel channel) {
                ZmtpClientPipeline.addTo(
                        channel.pipeline(),
                        ours,
                        limits,
                        new ZmtpClientPipeline.Timers(
                                Duration.ofSeconds(3), Duration.ofSeconds(10), Duration.ofSeconds(30)));
            }
        });
    }

    static EmbeddedChannel server(SocketType ours) {
        return server(ours, roomy());
    }

    static ZmtpLimits roomy() {
        return ZmtpLimits.fixed(1 << 20, 16, 1 << 20);
    }

    /** Writes {@code bytes} in one go and returns what came out, each event as its string. */
    static List<String> feed(EmbeddedChannel channel, byte[] bytes) {
        channel.writeInbound(Unpooled.wrappedBuffer(bytes));
        return drain(channel);
    }

    static List<String> drain(EmbeddedChannel channel) {
        List<String> events = new ArrayList<>();
        for (Object o = channel.readInbound(); o != null; o = channel.readInbound()) {
            events.add(
                    o instanceof Greeting g
                            ? "Greeting[" + g.major() + "." + g.minor() + " " + g.mechanism()
                                    + (g.asServer() ? " as-server" : "") + "]"
                            : String.valueOf(o));
        }
        return events;
    }

    /** Everything the connection wrote, as one array (the buffers are released). */
    static byte[] written(EmbeddedChannel channel) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (ByteBuf buf = channel.readOutbound(); buf != null; buf = channel.readOutbound()) {
            out.writeBytes(ByteBufUtil.getBytes(buf));
            buf.release();
        }
        return out.toByteArray();
    }
}

package io.brine.transport.zmtp;

import static io.brine.transport.zmtp.ZmtpDecoder.COMMAND;
import static io.brine.transport.zmtp.ZmtpDecoder.LONG;
import static io.brine.transport.zmtp.ZmtpDecoder.MORE;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Values to framed bytes, outbound. Each method returns one buffer that can be written as it is.
 *
 * <p>Fan-out: a publication is framed once with {@link #message}, and each subscriber's channel is given
 * {@code framed.retainedDuplicate()}; the publisher releases its own reference when it has handed out all of them.
 * Duplicates share the bytes and keep their own indexes, so 10,000 subscribers cost one encoding and one buffer.
 */
public final class ZmtpEncoder {

    private static final int SHORT_MAX = 255;

    private ZmtpEncoder() {}

    /** Our greeting: ZMTP 3.1, NULL, not as server. */
    public static ByteBuf greeting() {
        return Greeting.ours();
    }

    /**
     * A READY naming our socket type, and an Identity property when {@code identity} is not null (a ROUTER or PUB
     * sends none; a DEALER client may).
     */
    public static ByteBuf ready(ByteBufAllocator alloc, SocketType type, byte[] identity) {
        byte[] typeName = type.wireName();
        int size = 1
                + 5
                + property(Metadata.SOCKET_TYPE, typeName.length)
                + (identity == null ? 0 : property(Metadata.IDENTITY, identity.length));
        ByteBuf out = alloc.buffer(headerSize(size) + size);
        writeHeader(out, COMMAND, size);
        writeName(out, "READY");
        writeProperty(out, "Socket-Type", typeName);
        if (identity != null) {
            writeProperty(out, "Identity", identity);
        }
        return out;
    }

    /** An ERROR: {@code reason} is up to 255 printable ASCII characters without spaces (RFC 37: VCHAR). */
    public static ByteBuf error(ByteBufAllocator alloc, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.US_ASCII);
        if (text.length > SHORT_MAX) {
            throw new IllegalArgumentException("an ERROR reason is at most 255 characters");
        }
        for (byte c : text) {
            if (c < 0x21 || c > 0x7e) {
                throw new IllegalArgumentException("an ERROR reason is printable ASCII without spaces: " + reason);
            }
        }
        return command(alloc, "ERROR", new byte[] {(byte) text.length}, text);
    }

    public static ByteBuf subscribe(ByteBufAllocator alloc, byte[] topic) {
        return command(alloc, "SUBSCRIBE", topic);
    }

    public static ByteBuf cancel(ByteBufAllocator alloc, byte[] topic) {
        return command(alloc, "CANCEL", topic);
    }

    /** A PING with a TTL in tenths of a second (0: none) and a context of at most 16 bytes. */
    public static ByteBuf ping(ByteBufAllocator alloc, int ttl, byte[] context) {
        if (ttl < 0 || ttl > 0xffff) {
            throw new IllegalArgumentException("a PING TTL is 0-65535 tenths of a second, not " + ttl);
        }
        checkContext(context);
        return command(alloc, "PING", new byte[] {(byte) (ttl >> 8), (byte) ttl}, context);
    }

    /** The answer to a PING: its context, echoed. */
    public static ByteBuf pong(ByteBufAllocator alloc, byte[] context) {
        checkContext(context);
        return command(alloc, "PONG", context);
    }

    /** One message: a frame per part, MORE on all but the last, each short or long as its size needs. */
    public static ByteBuf message(ByteBufAllocator alloc, List<byte[]> parts) {
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("a message has at least one part");
        }
        int total = 0;
        for (byte[] part : parts) {
            total += headerSize(part.length) + part.length;
        }
        ByteBuf out = alloc.buffer(total);
        for (int i = 0; i < parts.size(); i++) {
            byte[] part = parts.get(i);
            writeHeader(out, i < parts.size() - 1 ? MORE : 0, part.length);
            out.writeBytes(part);
        }
        return out;
    }

    /** {@link #message(ByteBufAllocator, List)} for parts given one by one. */
    public static ByteBuf message(ByteBufAllocator alloc, byte[]... parts) {
        return message(alloc, List.of(parts));
    }

    /**
     * What goes before a reply's frame on the wire: the empty delimiter for a REQ peer, then the frame's header; the
     * frame itself follows as its own buffer.
     */
    public static ByteBuf replyHeader(ByteBufAllocator alloc, boolean delimited, int frameSize) {
        ByteBuf out = alloc.buffer(2 + headerSize(frameSize));
        if (delimited) {
            writeHeader(out, MORE, 0);
        }
        writeHeader(out, 0, frameSize);
        return out;
    }

    /**
     * What goes before a publication's frame: the topic frame (MORE), then the frame's header. The frame follows as
     * a buffer shared by every subscriber ({@code retainedDuplicate()}); only this header is per subscriber.
     */
    public static ByteBuf publicationHeader(ByteBufAllocator alloc, byte[] topic, int frameSize) {
        ByteBuf out = alloc.buffer(headerSize(topic.length) + topic.length + headerSize(frameSize));
        writeHeader(out, MORE, topic.length);
        out.writeBytes(topic);
        writeHeader(out, 0, frameSize);
        return out;
    }

    static int headerSize(long size) {
        return size > SHORT_MAX ? 9 : 2;
    }

    /** Flags and size; LONG is added when the size needs 8 bytes. */
    static void writeHeader(ByteBuf out, int flags, long size) {
        if (size > SHORT_MAX) {
            out.writeByte(flags | LONG);
            out.writeLong(size);
        } else {
            out.writeByte(flags);
            out.writeByte((int) size);
        }
    }

    private static ByteBuf command(ByteBufAllocator alloc, String name, byte[]... data) {
        int size = 1 + name.length();
        for (byte[] d : data) {
            size += d.length;
        }
        ByteBuf out = alloc.buffer(headerSize(size) + size);
        writeHeader(out, COMMAND, size);
        writeName(out, name);
        for (byte[] d : data) {
            out.writeBytes(d);
        }
        return out;
    }

    private static void writeName(ByteBuf out, String name) {
        out.writeByte(name.length());
        out.writeCharSequence(name, StandardCharsets.US_ASCII);
    }

    private static int property(String name, int valueLength) {
        return 1 + name.length() + 4 + valueLength;
    }

    private static void writeProperty(ByteBuf out, String name, byte[] value) {
        writeName(out, name);
        out.writeInt(value.length);
        out.writeBytes(value);
    }

    private static void checkContext(byte[] context) {
        if (context.length > Command.MAX_PING_CONTEXT) {
            throw new IllegalArgumentException("a PING context is at most 16 bytes, not " + context.length);
        }
    }
}

package io.brine.transport.zmtp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Bytes to values, inbound: the greeting, checked as it arrives, then frames (RFC 23 "Framing"): {@code flags:u8},
 * a size of 1 byte or (LONG) 8 bytes big-endian, the body. Emits a {@link Greeting}, each command frame parsed as a
 * {@link Command}, each whole message as a {@link ZmtpEvent.Message}, or one {@link ZmtpEvent.Refused} after which
 * every byte is discarded.
 *
 * <p>A frame header is judged as soon as it is in, before any room is made for the body: reserved flag bits, MORE
 * on a command, a command inside a multipart message, a size with the top bit set, and a size over the
 * connection's limits, read from {@link ZmtpLimits} at that moment. A body is copied out once, when it is whole;
 * until then it waits in the cumulation, which therefore never holds more than one frame's worth plus one read.
 * A LONG frame of 255 bytes or fewer is accepted: the grammar allows it (only commands SHOULD use the short form),
 * and the limits, not the form, are what bound memory.
 */
final class ZmtpDecoder extends ByteToMessageDecoder {

    static final int MORE = 0x01;
    static final int LONG = 0x02;
    static final int COMMAND = 0x04;
    static final int RESERVED = 0xf8;

    private enum State {
        GREETING,
        HEADER,
        BODY,
        REFUSED
    }

    private final ZmtpLimits limits;
    private final Multipart message = new Multipart();
    private State state = State.GREETING;
    private int flags;
    private int size;

    ZmtpDecoder(ZmtpLimits limits) {
        this.limits = limits;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        switch (state) {
            case GREETING -> greeting(in, out);
            case HEADER -> header(in, out);
            case BODY -> body(in, out);
            case REFUSED -> in.skipBytes(in.readableBytes());
        }
    }

    private void greeting(ByteBuf in, List<Object> out) {
        String refusal = Greeting.refusal(in);
        if (refusal != null) {
            refuse(in, out, refusal);
        } else if (in.readableBytes() >= Greeting.SIZE) {
            out.add(Greeting.read(in));
            state = State.HEADER;
        }
    }

    private void header(ByteBuf in, List<Object> out) {
        if (!in.isReadable()) {
            return;
        }
        int at = in.readerIndex();
        int flags = in.getUnsignedByte(at);
        if ((flags & RESERVED) != 0) {
            refuse(in, out, String.format("a frame with reserved flag bits set (flags 0x%02x)", flags));
            return;
        }
        boolean command = (flags & COMMAND) != 0;
        if (command && (flags & MORE) != 0) {
            refuse(in, out, "a command frame with the MORE flag");
            return;
        }
        if (command && message.inProgress()) {
            refuse(in, out, "a command inside a multipart message");
            return;
        }
        int headerSize = (flags & LONG) != 0 ? 9 : 2;
        if (in.readableBytes() < headerSize) {
            return;
        }
        long size = (flags & LONG) != 0 ? in.getLong(at + 1) : in.getUnsignedByte(at + 1);
        ZmtpEvent.Refused refusal = command ? commandRefusal(size) : dataRefusal(size);
        if (refusal != null) {
            refuse(in, out, refusal);
            return;
        }
        in.skipBytes(headerSize);
        this.flags = flags;
        this.size = (int) size;
        state = State.BODY;
        // At once: an empty body at the end of a read would otherwise wait for the next read (the base class
        // calls decode only while bytes are readable).
        body(in, out);
    }

    private static ZmtpEvent.Refused overLimit(String what, long size, int limit) {
        return new ZmtpEvent.Refused(
                "a " + what + " over the limit of " + limit + " bytes",
                Long.toUnsignedString(size) + " bytes announced");
    }

    private ZmtpEvent.Refused commandRefusal(long size) {
        int limit = Math.min(limits.frame().getAsInt(), ZmtpLimits.MAX_COMMAND);
        if (size < 0 || size > limit) {
            return overLimit("command", size, limit);
        }
        return null;
    }

    private ZmtpEvent.Refused dataRefusal(long size) {
        int limit = limits.frame().getAsInt();
        if (size < 0 || size > limit) {
            // Negative: the top bit of an 8-byte size, beyond the 2^63-1 the RFC allows.
            return overLimit("frame", size, limit);
        }
        String refusal = message.refusal(
                size, limits.parts().getAsInt(), limits.messageBytes().getAsInt());
        return refusal == null ? null : new ZmtpEvent.Refused(refusal);
    }

    private void body(ByteBuf in, List<Object> out) {
        if (in.readableBytes() < size) {
            return;
        }
        byte[] body = new byte[size];
        in.readBytes(body);
        state = State.HEADER;
        if ((flags & COMMAND) != 0) {
            Command command = Command.parse(body);
            if (command instanceof Command.Malformed malformed) {
                refuse(in, out, malformed.reason());
            } else {
                out.add(command);
            }
        } else {
            List<byte[]> parts = message.add(body, (flags & MORE) != 0);
            if (parts != null) {
                out.add(new ZmtpEvent.Message(parts));
            }
        }
    }

    /** The bytes waiting for the rest of a greeting or frame (for tests and metrics). */
    int pendingBytes() {
        return internalBuffer().readableBytes();
    }

    /** The room those bytes take. */
    int pendingCapacity() {
        return internalBuffer().capacity();
    }

    private void refuse(ByteBuf in, List<Object> out, String reason) {
        refuse(in, out, new ZmtpEvent.Refused(reason));
    }

    private void refuse(ByteBuf in, List<Object> out, ZmtpEvent.Refused refusal) {
        state = State.REFUSED;
        in.skipBytes(in.readableBytes());
        out.add(refusal);
    }
}

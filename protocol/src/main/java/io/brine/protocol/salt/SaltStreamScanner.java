package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;

/**
 * Finds where a Salt TCP frame ends in a byte stream that has no length prefix, walking msgpack headers only (no
 * value is built, no payload copied) and resuming where it stopped when more bytes arrive, so a peer that trickles
 * a frame costs each byte once. Every {@link SaltLimits} bound is checked as soon as a header declares it: a frame
 * that would pass {@code maxBytes} is refused before it is buffered. A frame must be a map; extension types are
 * refused here as by {@link SaltMsgpack}.
 *
 * <p>One scanner per connection, used by one thread: {@link #scan} is called with the buffered bytes of the
 * current frame (the same prefix each time, longer as it grows) until it returns the frame's length; then
 * {@link #reset} before the next frame.
 */
public final class SaltStreamScanner {

    private final SaltLimits limits;
    private final long[] remaining;
    private int depth;
    private int pos;
    private int elements;

    public SaltStreamScanner(SaltLimits limits) {
        this.limits = limits;
        this.remaining = new long[limits.maxDepth() + 1];
    }

    public void reset() {
        depth = 0;
        pos = 0;
        elements = 0;
    }

    /** The length of the frame that starts at {@code buf[off]}, or -1 while it is incomplete. */
    public int scan(byte[] buf, int off, int len) throws MalformedException {
        while (true) {
            if (pos >= len) {
                return incomplete(len);
            }
            int b = buf[off + pos] & 0xff;
            if (pos == 0 && !isMap(b)) {
                throw new MalformedException("frame: does not start with a map");
            }
            int headerLength = headerLength(b);
            if (pos + headerLength > len) {
                return incomplete(len);
            }
            long size = declared(buf, off + pos, b);
            long children = children(b, size);
            long total = headerLength + (children >= 0 ? 0 : size);
            if (pos + total > limits.maxBytes()) {
                throw new MalformedException("frame: longer than the limit of " + limits.maxBytes() + " bytes");
            }
            if (pos + total > len) {
                return incomplete(len);
            }
            pos += (int) total;
            if (++elements > limits.maxElements()) {
                throw new MalformedException("frame: more than " + limits.maxElements() + " values");
            }
            // An empty container is a level too, as the reader counts it.
            if (children >= 0 && depth + 1 > limits.maxDepth()) {
                throw new MalformedException("frame: nested deeper than " + limits.maxDepth());
            }
            if (children > 0) {
                if (children > limits.maxElements()) {
                    throw new MalformedException("frame: more than " + limits.maxElements() + " values");
                }
                remaining[++depth] = children;
                continue;
            }
            // A value ended: it completes its parents in turn.
            while (depth > 0 && --remaining[depth] == 0) {
                depth--;
            }
            if (depth == 0) {
                return pos;
            }
        }
    }

    private int incomplete(int len) throws MalformedException {
        if (len >= limits.maxBytes()) {
            throw new MalformedException("frame: longer than the limit of " + limits.maxBytes() + " bytes");
        }
        return -1;
    }

    private static boolean isMap(int b) {
        return SaltMsgpack.startsMap(b);
    }

    private static int headerLength(int b) throws MalformedException {
        if (b <= 0x7f || b >= 0xe0 || (b >= 0x80 && b <= 0xbf) || b == 0xc0 || b == 0xc2 || b == 0xc3) {
            return 1;
        }
        return switch (b) {
            case 0xc4, 0xd9, 0xcc, 0xd0 -> 2;
            case 0xc5, 0xda, 0xdc, 0xde, 0xcd, 0xd1 -> 3;
            case 0xc6, 0xdb, 0xdd, 0xdf, 0xca, 0xce, 0xd2 -> 5;
            case 0xcb, 0xcf, 0xd3 -> 9;
            case 0xc1 -> throw new MalformedException("frame: reserved byte 0xc1");
            default -> throw new MalformedException("frame: extension types are not accepted");
        };
    }

    /** The length or count a header declares (0 for fixed-size scalars, whose size is in the header). */
    private static long declared(byte[] buf, int at, int b) {
        if (b >= 0x80 && b <= 0x8f) {
            return b & 0x0f;
        }
        if (b >= 0x90 && b <= 0x9f) {
            return b & 0x0f;
        }
        if (b >= 0xa0 && b <= 0xbf) {
            return b & 0x1f;
        }
        return switch (b) {
            case 0xc4, 0xd9 -> buf[at + 1] & 0xffL;
            case 0xc5, 0xda, 0xdc, 0xde -> ((buf[at + 1] & 0xffL) << 8) | (buf[at + 2] & 0xffL);
            case 0xc6, 0xdb, 0xdd, 0xdf ->
                ((buf[at + 1] & 0xffL) << 24)
                        | ((buf[at + 2] & 0xffL) << 16)
                        | ((buf[at + 3] & 0xffL) << 8)
                        | (buf[at + 4] & 0xffL);
            default -> 0;
        };
    }

    /** How many values a container holds (entries count twice), or -1 for a scalar. */
    private static long children(int b, long size) {
        if ((b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf) {
            return size * 2;
        }
        if ((b >= 0x90 && b <= 0x9f) || b == 0xdc || b == 0xdd) {
            return size;
        }
        return -1;
    }
}

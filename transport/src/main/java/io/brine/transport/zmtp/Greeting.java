package io.brine.transport.zmtp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;

/**
 * The 64-byte ZMTP greeting (RFC 23 and 37): signature {@code FF, 8 padding, 7F}, version major and minor, a
 * 20-byte NUL-padded mechanism, as-server, 31 bytes of filler.
 *
 * <p>Peers may send the greeting in pieces and wait for ours between them (RFC 23 "Version Negotiation"), so it is
 * checked byte by byte as it arrives and refused at the first byte that rules it out. Padding and filler are not
 * looked at: the RFCs forbid interpreting the padding (libzmq writes its identity length there), and the filler may
 * carry meaning in a later version.
 */
record Greeting(int major, int minor, String mechanism, boolean asServer) {

    static final int SIZE = 64;
    static final int SIGNATURE_END = 9;
    static final int MAJOR_AT = 10;
    static final int MINOR_AT = 11;
    static final int MECHANISM_AT = 12;
    static final int MECHANISM_SIZE = 20;
    static final int AS_SERVER_AT = 32;

    /** The only mechanism brine serves: no authentication at the ZMTP level (brine signs and seals its frames). */
    static final String NULL = "NULL";

    /** Ours: ZMTP 3.1, NULL, as-server 0, zero padding (RFC 23: SHOULD, when sending the whole greeting at once). */
    private static final byte[] OURS = new byte[SIZE];

    static {
        OURS[0] = (byte) 0xff;
        OURS[SIGNATURE_END] = 0x7f;
        OURS[MAJOR_AT] = 3;
        OURS[MINOR_AT] = 1;
        byte[] mechanism = NULL.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(mechanism, 0, OURS, MECHANISM_AT, mechanism.length);
    }

    /** Our whole greeting, sent as soon as the connection opens so that peers which wait for it go on. */
    static ByteBuf ours() {
        return Unpooled.wrappedBuffer(OURS.clone());
    }

    /** ZMTP 3.0 and 3.1 peers frame and handshake alike; brine speaks 3.1 to both. */
    static boolean supported(int major, int minor) {
        return major == 3 && (minor == 0 || minor == 1);
    }

    /**
     * Why the greeting bytes readable so far in {@code in} (from its reader index, at most 64 looked at) cannot be
     * a greeting brine accepts, or null while they may still be one. Consumes nothing.
     */
    static String refusal(ByteBuf in) {
        int at = in.readerIndex();
        int readable = Math.min(in.readableBytes(), SIZE);
        if (readable > 0 && in.getUnsignedByte(at) != 0xff) {
            return String.format("not a ZMTP greeting (first byte 0x%02x)", in.getUnsignedByte(at));
        }
        if (readable > SIGNATURE_END && in.getUnsignedByte(at + SIGNATURE_END) != 0x7f) {
            // An 0x7f-less signature is ZMTP 1.0's identity frame: a peer too old to speak to.
            return String.format("not a ZMTP 3 signature (byte 9 is 0x%02x)", in.getUnsignedByte(at + SIGNATURE_END));
        }
        if (readable > MAJOR_AT && in.getUnsignedByte(at + MAJOR_AT) != 3) {
            return "ZMTP version " + in.getUnsignedByte(at + MAJOR_AT) + ".x (only 3.0 and 3.1 are served)";
        }
        if (readable > MINOR_AT && !supported(3, in.getUnsignedByte(at + MINOR_AT))) {
            return "ZMTP version 3." + in.getUnsignedByte(at + MINOR_AT) + " (only 3.0 and 3.1 are served)";
        }
        if (readable >= AS_SERVER_AT && !isNull(in, at + MECHANISM_AT)) {
            return "security mechanism " + mechanismName(in, at + MECHANISM_AT) + " (only NULL is served)";
        }
        if (readable > AS_SERVER_AT && in.getUnsignedByte(at + AS_SERVER_AT) != 0) {
            return "as-server " + in.getUnsignedByte(at + AS_SERVER_AT) + " with NULL (RFC 37: it MUST be 0)";
        }
        return null;
    }

    /** Reads a whole greeting that {@link #refusal} has passed. */
    static Greeting read(ByteBuf in) {
        int at = in.readerIndex();
        Greeting greeting = new Greeting(
                in.getUnsignedByte(at + MAJOR_AT),
                in.getUnsignedByte(at + MINOR_AT),
                mechanismName(in, at + MECHANISM_AT),
                in.getUnsignedByte(at + AS_SERVER_AT) != 0);
        in.skipBytes(SIZE);
        return greeting;
    }

    /** The mechanism must match ours exactly (RFC 23): "NULL" and sixteen NULs. */
    private static boolean isNull(ByteBuf in, int at) {
        for (int i = 0; i < MECHANISM_SIZE; i++) {
            int expected = i < NULL.length() ? NULL.charAt(i) : 0;
            if (in.getUnsignedByte(at + i) != expected) {
                return false;
            }
        }
        return true;
    }

    private static String mechanismName(ByteBuf in, int at) {
        byte[] name = new byte[MECHANISM_SIZE];
        in.getBytes(at, name);
        int end = name.length;
        while (end > 0 && name[end - 1] == 0) {
            end--;
        }
        return Printable.of(name, 0, end);
    }
}

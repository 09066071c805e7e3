package io.brine.transport.zmtp;

/** Peer-supplied bytes made safe to put in a refusal reason or a log line: printable ASCII, the rest escaped. */
final class Printable {

    /** Longer values are cut: a reason names the problem, it does not echo the peer. */
    static final int MAX_BYTES = 64;

    private Printable() {}

    static String of(byte[] bytes) {
        return of(bytes, 0, bytes.length);
    }

    static String of(byte[] bytes, int from, int to) {
        StringBuilder text = new StringBuilder();
        for (int i = from; i < to; i++) {
            if (i - from >= MAX_BYTES) {
                return text.append("...").toString();
            }
            int b = bytes[i] & 0xff;
            if (b >= 0x20 && b < 0x7f && b != '\\') {
                text.append((char) b);
            } else {
                text.append(String.format("\\x%02x", b));
            }
        }
        return text.toString();
    }
}

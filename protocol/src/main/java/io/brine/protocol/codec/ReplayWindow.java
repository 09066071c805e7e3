package io.brine.protocol.codec;

/**
 * The receiver's replay window for one direction of one session, as in IPsec and DTLS: the highest counter accepted
 * so far and a 64-bit bitmap of which of the 64 counters up to it were seen. A counter is accepted once; a counter
 * 64 or more below the highest, a duplicate, or a counter below 1 is refused.
 *
 * <p>Call {@link #accept} only after the frame's AEAD opened: an unauthenticated counter must not move the window.
 * {@link #wouldAccept} lets a receiver drop an obvious replay before paying for the decryption. Thread-safe (each
 * method holds the object's monitor briefly), so a window can live in a shared cache.
 */
public final class ReplayWindow {

    public static final int SIZE = 64;

    private long highest;
    /** Bit {@code i} set: counter {@code highest - i} was accepted. */
    private long seen;

    /** Whether {@link #accept} would accept {@code counter} now; changes nothing. */
    public synchronized boolean wouldAccept(long counter) {
        if (counter < 1) {
            return false;
        }
        if (counter > highest) {
            return true;
        }
        long offset = highest - counter;
        return offset < SIZE && (seen & (1L << offset)) == 0;
    }

    /** Accepts {@code counter} if it is new and inside the window, and records it; false otherwise. */
    public synchronized boolean accept(long counter) {
        if (!wouldAccept(counter)) {
            return false;
        }
        if (counter > highest) {
            long shift = counter - highest;
            seen = shift >= SIZE ? 1L : (seen << shift) | 1L;
            highest = counter;
        } else {
            seen |= 1L << (highest - counter);
        }
        return true;
    }

    /** The highest counter accepted so far, 0 before the first. */
    public synchronized long highest() {
        return highest;
    }
}

package io.brine.master.session;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;

/** The 16 random bytes that name a session in every session frame; a value type usable as a map key. */
public final class SessionId {

    public static final int LENGTH = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] bytes;

    private SessionId(byte[] bytes) {
        this.bytes = bytes;
    }

    public static SessionId random() {
        byte[] bytes = new byte[LENGTH];
        RANDOM.nextBytes(bytes);
        return new SessionId(bytes);
    }

    public static SessionId of(byte[] bytes) {
        return new SessionId(bytes.clone());
    }

    public byte[] bytes() {
        return bytes.clone();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof SessionId that && Arrays.equals(bytes, that.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    /** The first four bytes in hex: enough to tell sessions apart in a log, not enough to matter. */
    @Override
    public String toString() {
        return HexFormat.of().formatHex(bytes, 0, 4);
    }
}

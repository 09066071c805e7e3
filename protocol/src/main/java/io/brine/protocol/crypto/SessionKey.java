package io.brine.protocol.crypto;

import java.security.SecureRandom;
import java.util.Arrays;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * A 256-bit AES key (a publish key or a request key). Its bytes never reach {@link #toString()}; {@link #wipe()}
 * zeroes the copy this object holds.
 */
public final class SessionKey {

    public static final int LENGTH = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] bytes;
    private final SecretKey key;

    private SessionKey(byte[] bytes) {
        this.bytes = bytes;
        this.key = new SecretKeySpec(bytes, "AES");
    }

    public static SessionKey random() {
        byte[] bytes = new byte[LENGTH];
        RANDOM.nextBytes(bytes);
        return new SessionKey(bytes);
    }

    /** Takes a copy of exactly 32 bytes. */
    public static SessionKey of(byte[] bytes) throws CryptoException {
        if (bytes == null || bytes.length != LENGTH) {
            throw new CryptoException("a session key is " + LENGTH + " bytes");
        }
        return new SessionKey(bytes.clone());
    }

    /** A copy of the raw key bytes, for wrapping. The caller should wipe it after use. */
    public byte[] bytes() {
        return bytes.clone();
    }

    SecretKey secretKey() {
        return key;
    }

    public void wipe() {
        Arrays.fill(bytes, (byte) 0);
    }

    @Override
    public String toString() {
        return "SessionKey[redacted]";
    }
}

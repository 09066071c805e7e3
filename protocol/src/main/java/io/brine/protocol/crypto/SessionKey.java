package io.brine.protocol.crypto;

import java.security.SecureRandom;
import java.util.Arrays;
import javax.crypto.SecretKey;

/**
 * A 256-bit AES key (a publish key or a request key). Its bytes never reach {@link #toString()}. This object holds
 * them in one array, which {@link #wipe()} zeroes: the {@link SecretKey} it hands the JCE ({@link #secretKey()}) is its
 * own view of that array, not a copy, so after the wipe nothing this object reaches holds the key, and using it (to
 * seal, open or wrap) fails. What the JCE provider derived from the key stays in the thread's cipher until that cipher
 * is next initialised ({@link Aead}).
 */
public final class SessionKey {

    public static final int LENGTH = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] bytes;
    private final Key key = new Key();
    private volatile boolean wiped;

    private SessionKey(byte[] bytes) {
        this.bytes = bytes;
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

    /**
     * A copy of the raw key bytes, for wrapping. The caller should wipe it after use.
     *
     * @throws IllegalStateException once the key was wiped
     */
    public byte[] bytes() {
        byte[] copy = bytes.clone();
        if (wiped) {
            Arrays.fill(copy, (byte) 0);
            throw new IllegalStateException("the session key was wiped");
        }
        return copy;
    }

    /** The key as the JCE takes it: a view of this object's array, destroyed by {@link #wipe()}. */
    SecretKey secretKey() {
        return key;
    }

    /** Zeroes the key's bytes for good; every later use of the key fails. */
    public void wipe() {
        wiped = true;
        Arrays.fill(bytes, (byte) 0);
    }

    /** Whether {@link #wipe()} was called. */
    public boolean wiped() {
        return wiped;
    }

    @Override
    public String toString() {
        return "SessionKey[redacted]";
    }

    /**
     * The JCE's view of the key: {@code getEncoded()} a fresh copy of the one array (the provider takes its copy at each
     * init), refused once wiped; {@code destroy()} is {@link #wipe()}. Never serialised: it cannot be (its outer
     * object is not serialisable), and a secret has no business on a stream.
     */
    private final class Key implements SecretKey {
        private static final long serialVersionUID = 1L;

        @Override
        public String getAlgorithm() {
            return "AES";
        }

        @Override
        public String getFormat() {
            return "RAW";
        }

        @Override
        public byte[] getEncoded() {
            return bytes();
        }

        @Override
        public void destroy() {
            wipe();
        }

        @Override
        public boolean isDestroyed() {
            return wiped;
        }

        @Override
        public String toString() {
            return "SessionKey[redacted]";
        }
    }
}

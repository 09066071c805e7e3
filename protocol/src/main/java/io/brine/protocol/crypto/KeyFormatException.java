package io.brine.protocol.crypto;

/** Key material that brine refuses: malformed PEM, a key that is not RSA, or an RSA key that is too small. */
public final class KeyFormatException extends Exception {

    public KeyFormatException(String message) {
        super(message);
    }

    public KeyFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}

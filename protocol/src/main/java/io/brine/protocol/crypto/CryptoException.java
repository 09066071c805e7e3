package io.brine.protocol.crypto;

/** A decryption or unwrap that failed: wrong key, tampered or truncated data. Deliberately says no more. */
public final class CryptoException extends Exception {

    public CryptoException(String message) {
        super(message, null, false, false);
    }
}

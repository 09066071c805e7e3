package io.brine.protocol.crypto;

import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;

/**
 * AES-256-GCM, the symmetric half of suite 1. A sealed box is {@code nonce(12) || ciphertext || tag(16)} with a
 * fresh random nonce; the associated data binds the box to its context (message type, generation, sender).
 */
public final class Aead {

    public static final int NONCE_LENGTH = 12;
    public static final int TAG_LENGTH = 16;
    public static final int OVERHEAD = NONCE_LENGTH + TAG_LENGTH;

    private static final SecureRandom RANDOM = new SecureRandom();
    /**
     * One cipher per thread, initialised afresh for every box: looking the algorithm up in the providers for each
     * box was 9 % of a restarted master's CPU (BENCHMARKS, issue 26). A cipher is not thread-safe; a thread's own
     * is never used by two boxes at once, and init resets whatever a failed open left in it.
     *
     * <p>What the cipher keeps of the last key it was initialised with, until the thread's next box initialises it
     * with another (JDK 17's SunJCE, read from its classes): the AES round keys ({@code AESCrypt.sessionK}), a copy of
     * the key's bytes in {@code AESCrypt.lastKey} and, after an encryption, in {@code GaloisCounterMode.lastKey} (it
     * refuses a key and nonce used twice), and GHASH's table of the hash subkey H, derived from the key. A {@link
     * SessionKey#wipe() wiped} key's schedule therefore lives on in each thread that last used it, unreachable from
     * brine's objects, until that thread seals or opens a box under another key. Clearing it after every box (a
     * second init with a throwaway key, which also costs the next box its key expansion) is not done: measured here
     * (JDK 17, one thread, load 36) it took a 256-byte seal from about 1.1 to 5.4 us of CPU, a 4 KiB one from 3.2 to
     * 7.5 us (PROTOCOL.md 7).
     */
    private static final ThreadLocal<Cipher> CIPHERS = ThreadLocal.withInitial(() -> {
        try {
            return Cipher.getInstance("AES/GCM/NoPadding");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks AES-GCM", e);
        }
    });

    private Aead() {}

    /** @throws IllegalStateException when {@code key} was wiped (a bug: nothing is sealed with it) */
    public static byte[] seal(SessionKey key, byte[] associatedData, byte[] plaintext) {
        if (key.wiped()) {
            throw new IllegalStateException("cannot seal with a wiped session key");
        }
        byte[] out = new byte[NONCE_LENGTH + plaintext.length + TAG_LENGTH];
        byte[] nonce = new byte[NONCE_LENGTH];
        RANDOM.nextBytes(nonce);
        System.arraycopy(nonce, 0, out, 0, NONCE_LENGTH);
        try {
            Cipher cipher = CIPHERS.get();
            cipher.init(Cipher.ENCRYPT_MODE, key.secretKey(), new GCMParameterSpec(TAG_LENGTH * 8, nonce));
            cipher.updateAAD(associatedData);
            cipher.doFinal(plaintext, 0, plaintext.length, out, NONCE_LENGTH);
            return out;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM seal failed", e);
        }
    }

    public static byte[] open(SessionKey key, byte[] associatedData, byte[] box) throws CryptoException {
        if (box == null || box.length < OVERHEAD) {
            throw new CryptoException("sealed box is too short");
        }
        if (key.wiped()) {
            throw new CryptoException("cannot open a sealed box with a wiped session key");
        }
        try {
            Cipher cipher = CIPHERS.get();
            cipher.init(
                    Cipher.DECRYPT_MODE, key.secretKey(), new GCMParameterSpec(TAG_LENGTH * 8, box, 0, NONCE_LENGTH));
            cipher.updateAAD(associatedData);
            return cipher.doFinal(box, NONCE_LENGTH, box.length - NONCE_LENGTH);
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new CryptoException("cannot open sealed box: wrong key, wrong context, or tampered");
        }
    }
}

package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Salt's {@code Crypticle} (salt/crypt.py): AES-192-CBC with PKCS#7 padding, then HMAC-SHA256 over IV and
 * ciphertext (encrypt-then-MAC). Salt's shared publish key ({@code aes}), its per-minion request key
 * ({@code session}) and the one-off key of a private reply are all Crypticles. A key travels as its <em>key
 * string</em>: the standard base64 (76 characters) of the 24-byte AES key followed by the 32-byte HMAC key; the
 * key string is what RSA wraps and what the X9.31 {@code sig} hashes. The key never reaches {@link #toString()}.
 */
public final class Crypticle {

    public static final int AES_KEY_BYTES = 24;
    public static final int HMAC_KEY_BYTES = 32;
    public static final int KEY_STRING_CHARS = 76;
    /** IV, one cipher block, MAC: nothing shorter is a Crypticle blob. */
    public static final int MIN_BLOB = 16 + 16 + 32;

    private static final byte[] PICKLE_PAD = "pickle::".getBytes(StandardCharsets.US_ASCII);
    private static final int NONCE_CHARS = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] aesKey;
    private final byte[] hmacKey;
    private final String keyString;

    private Crypticle(byte[] raw) {
        this.aesKey = Arrays.copyOfRange(raw, 0, AES_KEY_BYTES);
        this.hmacKey = Arrays.copyOfRange(raw, AES_KEY_BYTES, AES_KEY_BYTES + HMAC_KEY_BYTES);
        this.keyString = Base64.getEncoder().encodeToString(raw);
    }

    /** A fresh random key, as {@code Crypticle.generate_key_string()}. */
    public static Crypticle generate() {
        byte[] raw = new byte[AES_KEY_BYTES + HMAC_KEY_BYTES];
        RANDOM.nextBytes(raw);
        return new Crypticle(raw);
    }

    /** Reads a key string; anything but the base64 of exactly 56 bytes is refused. */
    public static Crypticle of(String keyString) throws CryptoException {
        if (keyString == null || keyString.length() != KEY_STRING_CHARS) {
            throw new CryptoException("a Crypticle key string is " + KEY_STRING_CHARS + " characters");
        }
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(keyString);
        } catch (IllegalArgumentException e) {
            throw new CryptoException("a Crypticle key string is base64");
        }
        if (raw.length != AES_KEY_BYTES + HMAC_KEY_BYTES) {
            throw new CryptoException("a Crypticle key string holds " + (AES_KEY_BYTES + HMAC_KEY_BYTES) + " bytes");
        }
        return new Crypticle(raw);
    }

    public static Crypticle of(byte[] keyStringAscii) throws CryptoException {
        return of(new String(keyStringAscii, StandardCharsets.US_ASCII));
    }

    /** The key string: a secret, to be wrapped for a minion and never logged. */
    public String keyString() {
        return keyString;
    }

    /** Encrypts with a fresh random IV. */
    public byte[] encrypt(byte[] plaintext) {
        byte[] iv = new byte[16];
        RANDOM.nextBytes(iv);
        return encrypt(plaintext, iv);
    }

    /** Encrypts with the given IV; for reproducing recorded blobs, never for sending. */
    byte[] encrypt(byte[] plaintext, byte[] iv) {
        try {
            Cipher aes = Cipher.getInstance("AES/CBC/PKCS5Padding");
            aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(aesKey, "AES"), new IvParameterSpec(iv));
            byte[] ciphertext = aes.doFinal(plaintext);
            byte[] blob = new byte[16 + ciphertext.length + 32];
            System.arraycopy(iv, 0, blob, 0, 16);
            System.arraycopy(ciphertext, 0, blob, 16, ciphertext.length);
            System.arraycopy(mac(blob, 16 + ciphertext.length), 0, blob, 16 + ciphertext.length, 32);
            return blob;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-192-CBC encryption failed", e);
        }
    }

    /** Checks the MAC first (in constant time), then decrypts; a blob made with another key throws. */
    public byte[] decrypt(byte[] blob) throws CryptoException {
        if (blob == null || blob.length < MIN_BLOB || (blob.length - 48) % 16 != 0) {
            throw new CryptoException("not a Crypticle blob (bad length)");
        }
        int macAt = blob.length - 32;
        if (!MessageDigest.isEqual(mac(blob, macAt), Arrays.copyOfRange(blob, macAt, blob.length))) {
            throw new CryptoException("message authentication failed");
        }
        try {
            Cipher aes = Cipher.getInstance("AES/CBC/PKCS5Padding");
            aes.init(Cipher.DECRYPT_MODE, new SecretKeySpec(aesKey, "AES"), new IvParameterSpec(blob, 0, 16));
            return aes.doFinal(blob, 16, macAt - 16);
        } catch (GeneralSecurityException e) {
            // Salt strips plaintext[-1] bytes unchecked; a blob that passed the MAC but is badly padded came from
            // a key holder that is not Salt, and is refused.
            throw new CryptoException("bad padding under a valid MAC");
        }
    }

    /**
     * {@code Crypticle.dumps(obj, nonce)}: {@code pickle::}, then the 32-character nonce of the request this
     * answers (replies to encrypted requests only; {@code null} otherwise), then the value in Salt's payload dialect.
     */
    public byte[] dumps(SaltValue value, String nonce) {
        return encrypt(plaintext(value, nonce));
    }

    static byte[] plaintext(SaltValue value, String nonce) {
        byte[] nonceBytes = nonce == null ? new byte[0] : nonce.getBytes(StandardCharsets.US_ASCII);
        if (nonce != null && nonceBytes.length != NONCE_CHARS) {
            throw new IllegalArgumentException("a Salt nonce is " + NONCE_CHARS + " characters");
        }
        byte[] body = SaltMsgpack.write(value, SaltDialect.PAYLOAD);
        byte[] out = new byte[PICKLE_PAD.length + nonceBytes.length + body.length];
        System.arraycopy(PICKLE_PAD, 0, out, 0, PICKLE_PAD.length);
        System.arraycopy(nonceBytes, 0, out, PICKLE_PAD.length, nonceBytes.length);
        System.arraycopy(body, 0, out, PICKLE_PAD.length + nonceBytes.length, body.length);
        return out;
    }

    /**
     * {@code Crypticle.loads(data, nonce=...)}: decrypts, checks the {@code pickle::} prefix and, when
     * {@code expectedNonce} is given, the nonce that follows it, then reads the value within {@code limits}.
     * (Salt's own {@code loads} also drops a publication's {@code serial} it has seen; {@link SaltPublication}
     * leaves that decision to its caller.)
     */
    public SaltValue loads(byte[] blob, String expectedNonce, SaltLimits limits)
            throws CryptoException, MalformedException {
        byte[] plain = decrypt(blob);
        if (plain.length < PICKLE_PAD.length
                || !Arrays.equals(plain, 0, PICKLE_PAD.length, PICKLE_PAD, 0, PICKLE_PAD.length)) {
            throw new MalformedException("Crypticle: plaintext does not start with pickle::");
        }
        int at = PICKLE_PAD.length;
        if (expectedNonce != null) {
            byte[] wanted = expectedNonce.getBytes(StandardCharsets.US_ASCII);
            if (plain.length < at + NONCE_CHARS
                    || !MessageDigest.isEqual(Arrays.copyOfRange(plain, at, at + NONCE_CHARS), wanted)) {
                throw new CryptoException("Crypticle: the reply does not carry the request's nonce");
            }
            at += NONCE_CHARS;
        }
        return SaltMsgpack.read(plain, at, plain.length - at, limits);
    }

    private byte[] mac(byte[] data, int length) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(hmacKey, "HmacSHA256"));
            mac.update(data, 0, length);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 failed", e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Crypticle c
                && MessageDigest.isEqual(
                        keyString.getBytes(StandardCharsets.US_ASCII), c.keyString.getBytes(StandardCharsets.US_ASCII));
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(hmacKey);
    }

    @Override
    public String toString() {
        return "Crypticle[redacted]";
    }
}

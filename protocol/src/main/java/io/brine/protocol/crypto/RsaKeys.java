package io.brine.protocol.crypto;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.interfaces.RSAKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.RSAKeyGenParameterSpec;
import java.security.spec.RSAPublicKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;

/** RSA key pairs of the sizes brine allows: 2048 bits by default, up to 8192. */
public final class RsaKeys {

    public static final int DEFAULT_BITS = 2048;
    public static final int MIN_BITS = 2048;
    public static final int MAX_BITS = 8192;

    /**
     * The version of the checks {@link Pem#readPublicKey} makes of a public key ({@link #publicKeyFromDer}): a
     * remembered verdict names it (the key store's {@code .checked_keys}). Add one whenever a check is added or made
     * stricter, so that no key is spared a check it never passed.
     */
    public static final int CHECKS = 1;

    private static final SecureRandom RANDOM = new SecureRandom();

    private RsaKeys() {}

    /** Generates a key pair with public exponent 65537. */
    public static KeyPair generate(int bits) {
        checkGenerateSize(bits);
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(new RSAKeyGenParameterSpec(bits, RSAKeyGenParameterSpec.F4), RANDOM);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK cannot generate RSA keys", e);
        }
    }

    /** Refuses sizes brine will not generate: under 2048, over 8192, or not a multiple of 8. */
    public static void checkGenerateSize(int bits) {
        if (bits < MIN_BITS || bits > MAX_BITS || bits % 8 != 0) {
            throw new IllegalArgumentException("key size " + bits + " is not allowed: use a multiple of 8 from "
                    + MIN_BITS + " to " + MAX_BITS + " (2048 or 4096 are usual)");
        }
    }

    /** The modulus size in bits. */
    public static int bits(RSAKey key) {
        return key.getModulus().bitLength();
    }

    /**
     * Checks an RSA key as a key, naming the rule that fails: {@link #checkShape} and, for a public key,
     * {@link #checkFactors}. Returns the key.
     */
    public static <K extends RSAKey> K checkSize(K key) throws KeyFormatException {
        checkShape(key);
        if (key instanceof RSAPublicKey pub) {
            checkFactors(pub);
        }
        return key;
    }

    /**
     * The checks that cost nothing: a modulus of an allowed size ({@value #MIN_BITS} to {@value #MAX_BITS} bits);
     * for a public key also public exponent 65537 and an odd modulus. Returns the key.
     */
    public static <K extends RSAKey> K checkShape(K key) throws KeyFormatException {
        int bits = bits(key);
        if (bits < MIN_BITS) {
            throw new KeyFormatException(
                    "RSA key of " + bits + " bits is too small: at least " + MIN_BITS + " bits are required");
        }
        if (bits > MAX_BITS) {
            throw new KeyFormatException(
                    "RSA key of " + bits + " bits is too large: at most " + MAX_BITS + " bits are accepted");
        }
        if (key instanceof RSAPublicKey pub) {
            BigInteger e = pub.getPublicExponent();
            if (!e.equals(RSAKeyGenParameterSpec.F4)) {
                throw new KeyFormatException("RSA public exponent " + e + " is not acceptable: only 65537 is");
            }
            if (!pub.getModulus().testBit(0)) {
                throw new KeyFormatException("RSA modulus is even: not an RSA key");
            }
        }
        return key;
    }

    /**
     * Refuses a modulus with a prime factor below {@value SmallPrimes#BOUND} (it catches n = 3p, 5p, ... that a
     * self-signature does not). Tens of microseconds for a 2048-bit key ({@link SmallPrimes}); the key store runs it
     * once for a key it does not hold yet, not for every auth with a key it already stored.
     */
    public static RSAPublicKey checkFactors(RSAPublicKey key) throws KeyFormatException {
        int factor = SmallPrimes.factorOf(key.getModulus());
        if (factor != 0) {
            throw new KeyFormatException("RSA modulus has a small prime factor (" + factor + "): not an RSA key");
        }
        return key;
    }

    /**
     * Parses exactly one DER-canonical X.509 SubjectPublicKeyInfo holding an RSA key that passes {@link #checkSize}:
     * re-encoding the key must give the same bytes, so trailing bytes, a second SPKI or a non-canonical encoding are
     * refused.
     */
    public static RSAPublicKey publicKeyFromDer(byte[] spki) throws KeyFormatException {
        return checkFactors(offeredKeyFromDer(spki));
    }

    /**
     * {@link #publicKeyFromDer} without {@link #checkFactors}: for a key offered in an auth request, whose factors
     * the key store checks when it does not already hold that key ({@code KeyStore.offer}); nothing else may trust a
     * key parsed this way.
     */
    public static RSAPublicKey offeredKeyFromDer(byte[] spki) throws KeyFormatException {
        PublicKey key;
        try {
            key = KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(spki));
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new KeyFormatException("not an RSA SubjectPublicKeyInfo", e);
        }
        if (!(key instanceof RSAPublicKey rsa)) {
            throw new KeyFormatException("not an RSA public key");
        }
        byte[] canonical;
        try {
            canonical = KeyFactory.getInstance("RSA")
                    .generatePublic(new RSAPublicKeySpec(rsa.getModulus(), rsa.getPublicExponent()))
                    .getEncoded();
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new KeyFormatException("not an RSA SubjectPublicKeyInfo", e);
        }
        if (!Arrays.equals(canonical, spki)) {
            throw new KeyFormatException(
                    spki.length > canonical.length
                                    && Arrays.equals(canonical, 0, canonical.length, spki, 0, canonical.length)
                            ? "not exactly one SubjectPublicKeyInfo: " + (spki.length - canonical.length)
                                    + " bytes follow the key"
                            : "not a DER-canonical SubjectPublicKeyInfo: re-encoding the key gives other bytes");
        }
        return checkShape(rsa);
    }
}

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
import java.security.spec.X509EncodedKeySpec;

/** RSA key pairs of the sizes brine allows: 2048 bits by default, up to 8192. */
public final class RsaKeys {

    public static final int DEFAULT_BITS = 2048;
    public static final int MIN_BITS = 2048;
    public static final int MAX_BITS = 8192;

    private static final SecureRandom RANDOM = new SecureRandom();

    private RsaKeys() {
    }

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

    /** Checks an RSA key's size against the bounds brine accepts; returns the key. */
    public static <K extends RSAKey> K checkSize(K key) throws KeyFormatException {
        int bits = bits(key);
        if (bits < MIN_BITS) {
            throw new KeyFormatException("RSA key of " + bits + " bits is too small: at least " + MIN_BITS
                    + " bits are required");
        }
        if (bits > MAX_BITS) {
            throw new KeyFormatException("RSA key of " + bits + " bits is too large: at most " + MAX_BITS
                    + " bits are accepted");
        }
        if (key instanceof RSAPublicKey pub) {
            BigInteger e = pub.getPublicExponent();
            if (e.compareTo(BigInteger.valueOf(3)) < 0 || !e.testBit(0)) {
                throw new KeyFormatException("RSA public exponent " + e + " is not acceptable");
            }
        }
        return key;
    }

    /** Parses an X.509 SubjectPublicKeyInfo (DER) holding an RSA key of an accepted size. */
    public static RSAPublicKey publicKeyFromDer(byte[] spki) throws KeyFormatException {
        PublicKey key;
        try {
            key = KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(spki));
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new KeyFormatException("not an RSA SubjectPublicKeyInfo", e);
        }
        if (!(key instanceof RSAPublicKey rsa)) {
            throw new KeyFormatException("not an RSA public key");
        }
        return checkSize(rsa);
    }
}

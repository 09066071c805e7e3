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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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

    /**
     * Checks an RSA key as a key, naming the rule that fails: a modulus of an allowed size ({@value #MIN_BITS} to
     * {@value #MAX_BITS} bits); for a public key also public exponent 65537, an odd modulus and no small prime factor
     * (trial division by the primes below {@value #SMALL_PRIMES_BELOW}: microseconds, and it catches n = 2p, 3p, ...
     * that a self-signature does not). Returns the key.
     */
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
            if (!e.equals(RSAKeyGenParameterSpec.F4)) {
                throw new KeyFormatException("RSA public exponent " + e + " is not acceptable: only 65537 is");
            }
            BigInteger n = pub.getModulus();
            if (!n.testBit(0)) {
                throw new KeyFormatException("RSA modulus is even: not an RSA key");
            }
            int factor = smallPrimeFactor(n);
            if (factor != 0) {
                throw new KeyFormatException("RSA modulus has a small prime factor (" + factor + "): not an RSA key");
            }
        }
        return key;
    }

    /**
     * Parses exactly one DER-canonical X.509 SubjectPublicKeyInfo holding an RSA key that passes {@link #checkSize}:
     * re-encoding the key must give the same bytes, so trailing bytes, a second SPKI or a non-canonical encoding are
     * refused.
     */
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
        byte[] canonical;
        try {
            canonical = KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(rsa.getModulus(),
                    rsa.getPublicExponent())).getEncoded();
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new KeyFormatException("not an RSA SubjectPublicKeyInfo", e);
        }
        if (!java.util.Arrays.equals(canonical, spki)) {
            throw new KeyFormatException(spki.length > canonical.length && java.util.Arrays.equals(canonical, 0,
                    canonical.length, spki, 0, canonical.length)
                    ? "not exactly one SubjectPublicKeyInfo: " + (spki.length - canonical.length)
                            + " bytes follow the key"
                    : "not a DER-canonical SubjectPublicKeyInfo: re-encoding the key gives other bytes");
        }
        return checkSize(rsa);
    }

    private static final int SMALL_PRIMES_BELOW = 10_000;
    /**
     * The primes below {@value #SMALL_PRIMES_BELOW} in groups whose product fits a long: one remainder of the
     * modulus by each group's product (a one-word division) and then one long remainder per prime. A gcd with the
     * product of all the primes gives the same answer but cost about 1 ms per key, most of an auth's CPU.
     */
    private static final long[][] PRIME_GROUPS = primeGroups();
    private static final long[] GROUP_PRODUCTS = Arrays.stream(PRIME_GROUPS)
            .mapToLong(group -> Arrays.stream(group).reduce(1, (x, y) -> x * y)).toArray();

    private static long[][] primeGroups() {
        List<long[]> groups = new ArrayList<>();
        List<Long> group = new ArrayList<>();
        long product = 1;
        for (int p = 2; p < SMALL_PRIMES_BELOW; p++) {
            if (!BigInteger.valueOf(p).isProbablePrime(30)) {
                continue;
            }
            if (product > Long.MAX_VALUE / p) {
                groups.add(group.stream().mapToLong(Long::longValue).toArray());
                group.clear();
                product = 1;
            }
            group.add((long) p);
            product *= p;
        }
        groups.add(group.stream().mapToLong(Long::longValue).toArray());
        return groups.toArray(long[][]::new);
    }

    /** The smallest prime below {@value #SMALL_PRIMES_BELOW} that divides {@code n}, or 0 when none does. */
    static int smallPrimeFactor(BigInteger n) {
        for (int g = 0; g < PRIME_GROUPS.length; g++) {
            long remainder = n.mod(BigInteger.valueOf(GROUP_PRODUCTS[g])).longValue();
            for (long p : PRIME_GROUPS[g]) {
                if (remainder % p == 0) {
                    return (int) p;
                }
            }
        }
        return 0;
    }
}

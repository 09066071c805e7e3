package io.brine.protocol.salt;

import io.brine.protocol.crypto.CryptoException;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.RSAKey;
import java.security.spec.MGF1ParameterSpec;
import java.util.Arrays;
import java.util.Optional;
import javax.crypto.Cipher;
import javax.crypto.spec.OAEPParameterSpec;
import javax.crypto.spec.PSource;

/**
 * RSA as Salt uses it (SALT.md, "Crypto"): OAEP and PKCS#1 v1.5 signatures with the hash a minion names in
 * {@code enc_algo}/{@code sig_algo}, and the ANSI X9.31 private-key operation Salt uses for the {@code aes} hash in
 * an accepted auth reply and for the {@code tok} of every minion request. Every RSA operation is the JDK's; only
 * X9.31's padding (a fixed byte layout) is written here.
 */
public final class SaltRsa {

    /** Salt's {@code VALID_ENCRYPTION_ALGORITHMS} (salt/crypt.py): OAEP, hash and MGF1 hash the same, no label. */
    public enum Encryption {
        OAEP_SHA1("OAEP-SHA1", "SHA-1", MGF1ParameterSpec.SHA1),
        OAEP_SHA224("OAEP-SHA224", "SHA-224", MGF1ParameterSpec.SHA224);

        private final String wireName;
        private final OAEPParameterSpec spec;

        Encryption(String wireName, String hash, MGF1ParameterSpec mgf) {
            this.wireName = wireName;
            this.spec = new OAEPParameterSpec(hash, "MGF1", mgf, PSource.PSpecified.DEFAULT);
        }

        public String wireName() {
            return wireName;
        }

        /** The algorithm a minion named; empty for anything Salt does not know either ({@code "bad enc algo"}). */
        public static Optional<Encryption> named(String wireName) {
            return Arrays.stream(values())
                    .filter(e -> e.wireName.equals(wireName))
                    .findFirst();
        }
    }

    /** Salt's {@code VALID_SIGNING_ALGORITHMS}: PKCS#1 v1.5 with a standard DigestInfo. */
    public enum Signing {
        PKCS1V15_SHA1("PKCS1v15-SHA1", "SHA1withRSA"),
        PKCS1V15_SHA224("PKCS1v15-SHA224", "SHA224withRSA");

        private final String wireName;
        private final String jca;

        Signing(String wireName, String jca) {
            this.wireName = wireName;
            this.jca = jca;
        }

        public String wireName() {
            return wireName;
        }

        /** The algorithm a minion named; empty for anything Salt does not know either ({@code "bad sig algo"}). */
        public static Optional<Signing> named(String wireName) {
            return Arrays.stream(values())
                    .filter(s -> s.wireName.equals(wireName))
                    .findFirst();
        }
    }

    private SaltRsa() {}

    public static byte[] encrypt(PublicKey recipient, Encryption algorithm, byte[] plaintext) {
        try {
            Cipher cipher = Cipher.getInstance("RSA/ECB/OAEPPadding");
            cipher.init(Cipher.ENCRYPT_MODE, recipient, algorithm.spec);
            return cipher.doFinal(plaintext);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("RSA-" + algorithm.wireName + " encryption failed", e);
        }
    }

    public static byte[] decrypt(PrivateKey key, Encryption algorithm, byte[] ciphertext) throws CryptoException {
        try {
            Cipher cipher = Cipher.getInstance("RSA/ECB/OAEPPadding");
            cipher.init(Cipher.DECRYPT_MODE, key, algorithm.spec);
            return cipher.doFinal(ciphertext);
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new CryptoException("cannot decrypt " + algorithm.wireName + ": not for this key, or corrupted");
        }
    }

    public static byte[] sign(PrivateKey key, Signing algorithm, byte[] data) {
        try {
            Signature signature = Signature.getInstance(algorithm.jca);
            signature.initSign(key);
            signature.update(data);
            return signature.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(algorithm.wireName + " signing failed", e);
        }
    }

    /** True only for a valid signature; never throws on bad input. */
    public static boolean verify(PublicKey key, Signing algorithm, byte[] data, byte[] sig) {
        if (sig == null || sig.length == 0) {
            return false;
        }
        try {
            Signature signature = Signature.getInstance(algorithm.jca);
            signature.initVerify(key);
            signature.update(data);
            return signature.verify(sig);
        } catch (GeneralSecurityException | RuntimeException e) {
            return false;
        }
    }

    /**
     * OpenSSL's {@code RSA_private_encrypt(..., RSA_X931_PADDING)}, which Salt's {@code PrivateKey.encrypt} calls
     * (salt/utils/rsax931.py): the block {@code 6B BB..BB BA || message || CC}, raised to the private exponent, and
     * of {@code s} and {@code n - s} the smaller. Deterministic.
     */
    public static byte[] x931Sign(PrivateKey key, byte[] message) {
        int k = modulusBytes(key);
        int fill = k - message.length - 2;
        if (fill < 0) {
            throw new IllegalArgumentException("message too long for X9.31 with this key");
        }
        byte[] block = new byte[k];
        int p = 0;
        if (fill == 0) {
            block[p++] = 0x6A;
        } else {
            block[p++] = 0x6B;
            Arrays.fill(block, p, p + fill - 1, (byte) 0xBB);
            p += fill - 1;
            block[p++] = (byte) 0xBA;
        }
        System.arraycopy(message, 0, block, p, message.length);
        block[k - 1] = (byte) 0xCC;
        try {
            Cipher raw = Cipher.getInstance("RSA/ECB/NoPadding");
            raw.init(Cipher.ENCRYPT_MODE, key);
            BigInteger s = new BigInteger(1, raw.doFinal(block));
            BigInteger n = ((RSAKey) key).getModulus();
            return unsigned(s.min(n.subtract(s)), k);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("X9.31 private operation failed", e);
        }
    }

    /**
     * The message inside an X9.31 signature, as Salt's {@code PublicKey.decrypt} recovers it (OpenSSL's
     * {@code RSA_public_decrypt} with {@code RSA_X931_PADDING}); a signature that is not one by {@code key} throws.
     */
    public static byte[] x931Recover(PublicKey key, byte[] sig) throws CryptoException {
        int k = modulusBytes(key);
        if (sig == null || sig.length != k) {
            throw new CryptoException("X9.31 signature is not " + k + " bytes");
        }
        BigInteger n = ((RSAKey) key).getModulus();
        byte[] r;
        try {
            Cipher raw = Cipher.getInstance("RSA/ECB/NoPadding");
            raw.init(Cipher.DECRYPT_MODE, key);
            BigInteger value = new BigInteger(1, raw.doFinal(sig));
            if ((value.intValue() & 0xF) != 12) {
                value = n.subtract(value);
            }
            r = unsigned(value, k);
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new CryptoException("not an X9.31 signature by this key");
        }
        int p = 0;
        if (r[p] == 0x6B) {
            p++;
            while (p < k - 1 && r[p] == (byte) 0xBB) {
                p++;
            }
            if (p >= k - 1 || r[p] != (byte) 0xBA) {
                throw new CryptoException("not an X9.31 signature by this key");
            }
            p++;
        } else if (r[p] == 0x6A) {
            p++;
        } else {
            throw new CryptoException("not an X9.31 signature by this key");
        }
        if (r[k - 1] != (byte) 0xCC) {
            throw new CryptoException("not an X9.31 signature by this key");
        }
        return Arrays.copyOfRange(r, p, k - 1);
    }

    /** Checks that {@code sig} is {@code key}'s X9.31 signature of exactly {@code message}, in constant time. */
    public static boolean x931Verify(PublicKey key, byte[] message, byte[] sig) {
        try {
            return MessageDigest.isEqual(x931Recover(key, sig), message);
        } catch (CryptoException e) {
            return false;
        }
    }

    private static int modulusBytes(Key key) {
        if (!(key instanceof RSAKey rsa)) {
            throw new IllegalArgumentException("not an RSA key");
        }
        return (rsa.getModulus().bitLength() + 7) / 8;
    }

    private static byte[] unsigned(BigInteger value, int length) {
        byte[] bytes = value.toByteArray();
        if (bytes.length == length) {
            return bytes;
        }
        byte[] out = new byte[length];
        if (bytes.length > length) {
            System.arraycopy(bytes, bytes.length - length, out, 0, length);
        } else {
            System.arraycopy(bytes, 0, out, length - bytes.length, bytes.length);
        }
        return out;
    }
}

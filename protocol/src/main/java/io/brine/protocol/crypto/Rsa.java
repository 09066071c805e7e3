package io.brine.protocol.crypto;

import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.MGF1ParameterSpec;
import java.security.spec.PSSParameterSpec;
import javax.crypto.Cipher;
import javax.crypto.spec.OAEPParameterSpec;
import javax.crypto.spec.PSource;

/**
 * The RSA half of suite 1: RSA-OAEP with SHA-256 and MGF1-SHA-256 to wrap keys, RSA-PSS with SHA-256, MGF1-SHA-256
 * and a 32-byte salt to sign. OAEP's parameters are given explicitly: the JDK's transformation name alone would use
 * MGF1-SHA-1.
 */
public final class Rsa {

    private static final OAEPParameterSpec OAEP =
            new OAEPParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA256, PSource.PSpecified.DEFAULT);
    private static final PSSParameterSpec PSS =
            new PSSParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA256, 32, PSSParameterSpec.TRAILER_FIELD_BC);

    private Rsa() {}

    /** Encrypts a short secret (a session key) for the holder of {@code recipient}'s private key. */
    public static byte[] wrap(PublicKey recipient, byte[] secret) {
        try {
            Cipher cipher = Cipher.getInstance("RSA/ECB/OAEPPadding");
            cipher.init(Cipher.ENCRYPT_MODE, recipient, OAEP);
            return cipher.doFinal(secret);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("RSA-OAEP wrap failed", e);
        }
    }

    /** Decrypts what {@link #wrap} made; throws {@link CryptoException} when it was not made for this key. */
    public static byte[] unwrap(PrivateKey key, byte[] wrapped) throws CryptoException {
        try {
            Cipher cipher = Cipher.getInstance("RSA/ECB/OAEPPadding");
            cipher.init(Cipher.DECRYPT_MODE, key, OAEP);
            return cipher.doFinal(wrapped);
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new CryptoException("cannot unwrap: not encrypted for this key, or corrupted");
        }
    }

    public static byte[] sign(PrivateKey key, byte[] data) {
        try {
            Signature signature = Signature.getInstance("RSASSA-PSS");
            signature.setParameter(PSS);
            signature.initSign(key);
            signature.update(data);
            return signature.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("RSA-PSS sign failed", e);
        }
    }

    /** True only when {@code sig} is a valid signature of {@code data} by {@code key}; never throws on bad input. */
    public static boolean verify(PublicKey key, byte[] data, byte[] sig) {
        if (sig == null || sig.length == 0) {
            return false;
        }
        try {
            Signature signature = Signature.getInstance("RSASSA-PSS");
            signature.setParameter(PSS);
            signature.initVerify(key);
            signature.update(data);
            return signature.verify(sig);
        } catch (GeneralSecurityException | RuntimeException e) {
            return false;
        }
    }
}

package io.brine.protocol.crypto;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.util.Base64;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.openssl.PEMException;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;

/**
 * PEM in Salt's formats. Writes private keys as PKCS#1 ({@code BEGIN RSA PRIVATE KEY}) and public keys as SPKI
 * ({@code BEGIN PUBLIC KEY}); reads those and also PKCS#8 private keys and PKCS#1 public keys. Anything else
 * (encrypted keys, certificates, EC keys, RSA under 2048 bits, trailing garbage) is refused with a message that
 * says which.
 */
public final class Pem {

    /** Larger than any RSA-8192 private key in PEM; a bigger input is not a key. */
    public static final int MAX_PEM_CHARS = 16 * 1024;

    private static final JcaPEMKeyConverter CONVERTER = new JcaPEMKeyConverter();

    private Pem() {
    }

    /** PKCS#1 {@code RSA PRIVATE KEY} PEM, 64-character lines, trailing newline. */
    public static String privateKeyPkcs1(PrivateKey key) {
        if (!(key instanceof RSAPrivateCrtKey)) {
            throw new IllegalArgumentException("only RSA CRT private keys can be written as PKCS#1");
        }
        return write(key);
    }

    /** SPKI {@code PUBLIC KEY} PEM, 64-character lines, trailing newline. */
    public static String publicKeySpki(PublicKey key) {
        StringBuilder out = new StringBuilder(460).append("-----BEGIN PUBLIC KEY-----\n");
        for (String line : bodyLines(key)) {
            out.append(line).append('\n');
        }
        return out.append("-----END PUBLIC KEY-----\n").toString();
    }

    /** The base64 body lines of the canonical SPKI PEM of {@code key}, without newlines. */
    static String[] bodyLines(PublicKey key) {
        String b64 = Base64.getEncoder().encodeToString(key.getEncoded());
        String[] lines = new String[(b64.length() + 63) / 64];
        for (int i = 0; i < lines.length; i++) {
            lines[i] = b64.substring(i * 64, Math.min(b64.length(), (i + 1) * 64));
        }
        return lines;
    }

    private static String write(Object object) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
            writer.writeObject(object);
        } catch (IOException e) {
            throw new IllegalStateException("cannot encode key as PEM", e);
        }
        return out.toString();
    }

    /** Reads an RSA public key from SPKI or PKCS#1 PEM. */
    public static RSAPublicKey readPublicKey(String pem) throws KeyFormatException {
        Object object = readSingleObject(pem);
        if (object instanceof SubjectPublicKeyInfo info) {
            return toRsaPublic(info);
        }
        if (object instanceof PEMKeyPair || object instanceof PrivateKeyInfo) {
            throw new KeyFormatException("found a private key where a public key was expected");
        }
        throw new KeyFormatException("PEM holds " + describe(object) + ", not a public key");
    }

    /** Reads an RSA key pair from a PKCS#1 or PKCS#8 private key PEM. */
    public static KeyPair readPrivateKey(String pem) throws KeyFormatException {
        Object object = readSingleObject(pem);
        try {
            if (object instanceof PEMKeyPair pair) {
                KeyPair keyPair = CONVERTER.getKeyPair(pair);
                return checkPair(keyPair.getPublic(), keyPair.getPrivate());
            }
            if (object instanceof PrivateKeyInfo info) {
                PrivateKey key = CONVERTER.getPrivateKey(info);
                if (!(key instanceof RSAPrivateCrtKey crt)) {
                    throw new KeyFormatException("private key is " + key.getAlgorithm() + ", not RSA");
                }
                PublicKey pub = java.security.KeyFactory.getInstance("RSA").generatePublic(
                        new java.security.spec.RSAPublicKeySpec(crt.getModulus(), crt.getPublicExponent()));
                return checkPair(pub, key);
            }
        } catch (PEMException | java.security.GeneralSecurityException e) {
            throw new KeyFormatException("cannot decode private key: " + e.getMessage(), e);
        }
        if (object instanceof SubjectPublicKeyInfo) {
            throw new KeyFormatException("found a public key where a private key was expected");
        }
        throw new KeyFormatException("PEM holds " + describe(object) + ", not a private key");
    }

    private static KeyPair checkPair(PublicKey pub, PrivateKey key) throws KeyFormatException {
        if (!(pub instanceof RSAPublicKey rsaPub) || !(key instanceof RSAPrivateCrtKey)) {
            throw new KeyFormatException("private key is " + key.getAlgorithm() + ", not RSA");
        }
        RsaKeys.checkSize(rsaPub);
        return new KeyPair(pub, key);
    }

    private static RSAPublicKey toRsaPublic(SubjectPublicKeyInfo info) throws KeyFormatException {
        PublicKey key;
        try {
            key = CONVERTER.getPublicKey(info);
        } catch (PEMException | RuntimeException e) {
            throw new KeyFormatException("cannot decode public key: " + e.getMessage(), e);
        }
        if (!(key instanceof RSAPublicKey rsa)) {
            throw new KeyFormatException("public key is " + key.getAlgorithm() + ", not RSA");
        }
        // Re-parse through the JDK provider so callers get one key class whatever the PEM flavour.
        return RsaKeys.publicKeyFromDer(rsa.getEncoded());
    }

    private static Object readSingleObject(String pem) throws KeyFormatException {
        if (pem == null || pem.isBlank()) {
            throw new KeyFormatException("no PEM data");
        }
        if (pem.length() > MAX_PEM_CHARS) {
            throw new KeyFormatException("PEM data is larger than " + MAX_PEM_CHARS + " characters");
        }
        if (!StandardCharsets.US_ASCII.newEncoder().canEncode(pem)) {
            throw new KeyFormatException("PEM data has non-ASCII characters");
        }
        try (PEMParser parser = new PEMParser(new StringReader(pem))) {
            Object object = parser.readObject();
            if (object == null) {
                throw new KeyFormatException("no PEM block found (expected -----BEGIN ...-----)");
            }
            if (parser.readObject() != null) {
                throw new KeyFormatException("more than one PEM block");
            }
            return object;
        } catch (IOException | RuntimeException e) {
            throw new KeyFormatException("malformed PEM: " + e.getMessage(), e);
        }
    }

    private static String describe(Object object) {
        String name = object.getClass().getSimpleName();
        return switch (name) {
            case "PEMEncryptedKeyPair", "PKCS8EncryptedPrivateKeyInfo" -> "an encrypted private key (unsupported)";
            case "X509CertificateHolder" -> "a certificate";
            default -> "an unsupported object (" + name + ")";
        };
    }

    /** Bytes of a PEM string as written to disk. */
    public static byte[] bytes(String pem) {
        return pem.getBytes(StandardCharsets.US_ASCII);
    }
}

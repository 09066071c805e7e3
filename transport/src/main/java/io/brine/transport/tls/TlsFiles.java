package io.brine.transport.tls;

import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMEncryptedKeyPair;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;

/**
 * Reads the PEM files of the TCP transport's optional TLS layer: certificates (a chain, or trusted CAs) and an
 * unencrypted private key in PKCS#8 ({@code BEGIN PRIVATE KEY}), PKCS#1 ({@code BEGIN RSA PRIVATE KEY}) or SEC1
 * ({@code BEGIN EC PRIVATE KEY}) form. Errors name the file and what is wrong, never the key's bytes.
 */
public final class TlsFiles {

    /** A PEM file this large is not a certificate chain or a key. */
    private static final int MAX_FILE_BYTES = 1024 * 1024;

    private TlsFiles() {}

    /** Every certificate in {@code file}, in order; at least one. Other PEM blocks in the file are skipped. */
    public static List<X509Certificate> certificates(Path file) throws IOException {
        // Read with the JDK, not Bouncy Castle: a minion with TLS reads its CA file here, and loading Bouncy
        // Castle would cost it some 5 MiB of heap for as long as it runs (see Pem).
        List<X509Certificate> certificates = new ArrayList<>();
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            for (Pem.Block block : Pem.blocks(read(file))) {
                if (block.label().equals("CERTIFICATE") || block.label().equals("X509 CERTIFICATE")) {
                    certificates.add(
                            (X509Certificate) factory.generateCertificate(new ByteArrayInputStream(block.der())));
                }
            }
        } catch (KeyFormatException | CertificateException | RuntimeException e) {
            throw new IOException(file + ": not a PEM certificate file (" + e.getMessage() + ")", e);
        }
        if (certificates.isEmpty()) {
            throw new IOException(file + ": no PEM certificate (BEGIN CERTIFICATE) in it");
        }
        return List.copyOf(certificates);
    }

    /** The first private key in {@code file}. */
    public static PrivateKey privateKey(Path file) throws IOException {
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        try (PEMParser parser = new PEMParser(new StringReader(read(file)))) {
            Object item;
            while ((item = parser.readObject()) != null) {
                if (item instanceof PrivateKeyInfo info) {
                    return converter.getPrivateKey(info);
                }
                if (item instanceof PEMKeyPair pair) {
                    return converter.getKeyPair(pair).getPrivate();
                }
                if (item instanceof PEMEncryptedKeyPair || item instanceof PKCS8EncryptedPrivateKeyInfo) {
                    throw new IOException(file + ": the private key is encrypted; give it unencrypted (mode 0600)");
                }
            }
        } catch (RuntimeException e) {
            throw new IOException(
                    file + ": not a PEM private key file (" + e.getClass().getSimpleName() + ")", e);
        }
        throw new IOException(file + ": no PEM private key (BEGIN PRIVATE KEY or BEGIN RSA PRIVATE KEY) in it");
    }

    /** Follows symlinks on purpose: certificate files are often links (a renewal tool's "live" directory). */
    private static String read(Path file) throws IOException {
        if (Files.size(file) > MAX_FILE_BYTES) {
            throw new IOException(file + " is larger than " + MAX_FILE_BYTES + " bytes");
        }
        return new String(Files.readAllBytes(file), StandardCharsets.US_ASCII);
    }
}

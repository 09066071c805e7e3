package io.brine.transport.testing;

import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.TestKeys;
import io.brine.transport.tls.TlsFiles;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.CertificateEncodingException;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Self-signed TLS certificates for tests, made with BouncyCastle from a {@link TestKeys} pair so nothing waits for
 * key generation. The certificate names {@code localhost} and {@code 127.0.0.1}, so hostname verification passes
 * on loopback.
 */
public final class TestCertificates {

    /** The certificate and key files written by {@link #selfSigned}. */
    public record CertFiles(Path cert, Path key) {}

    private TestCertificates() {}

    /**
     * Writes {@code name.crt} (PEM certificate) and {@code name.key} (PKCS#1 PEM key) into {@code dir}, for test key
     * {@code keyIndex}.
     */
    public static CertFiles selfSigned(Path dir, String name, int keyIndex) {
        KeyPair pair = TestKeys.pair(keyIndex);
        X500Name subject = new X500Name("CN=" + name);
        return write(dir, name, subject, pair, subject, pair);
    }

    /**
     * Writes {@code name.crt} and {@code name.key} into {@code dir}: a certificate for {@code CN=commonName} and test
     * key {@code keyIndex}, signed by {@code issuer} (files {@link #selfSigned} wrote for test key
     * {@code issuerKeyIndex}), as a CA signs a TLS client's certificate.
     */
    public static CertFiles issued(
            Path dir, String name, String commonName, int keyIndex, CertFiles issuer, int issuerKeyIndex) {
        try {
            X500Name issuerName = new JcaX509CertificateHolder(
                            TlsFiles.certificates(issuer.cert()).get(0))
                    .getSubject();
            return write(
                    dir,
                    name,
                    new X500Name("CN=" + commonName),
                    TestKeys.pair(keyIndex),
                    issuerName,
                    TestKeys.pair(issuerKeyIndex));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (CertificateEncodingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static CertFiles write(
            Path dir, String name, X500Name subject, KeyPair pair, X500Name issuer, KeyPair issuerPair) {
        try {
            Files.createDirectories(dir);
            Instant now = Instant.now();
            JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(
                    issuer,
                    BigInteger.valueOf(now.toEpochMilli()),
                    Date.from(now.minus(Duration.ofHours(1))),
                    Date.from(now.plus(Duration.ofDays(1))),
                    subject,
                    pair.getPublic());
            builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                new GeneralName(GeneralName.dNSName, "localhost"), new GeneralName(GeneralName.iPAddress, "127.0.0.1")
            }));
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(subject.equals(issuer)));
            X509CertificateHolder holder =
                    builder.build(new JcaContentSignerBuilder("SHA256withRSA").build(issuerPair.getPrivate()));
            StringWriter pem = new StringWriter();
            try (JcaPEMWriter writer = new JcaPEMWriter(pem)) {
                writer.writeObject(holder);
            }
            Path cert = Files.writeString(dir.resolve(name + ".crt"), pem.toString());
            Path key = Files.writeString(dir.resolve(name + ".key"), Pem.privateKeyPkcs1(pair.getPrivate()));
            return new CertFiles(cert, key);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (OperatorCreationException e) {
            throw new IllegalStateException(e);
        }
    }
}

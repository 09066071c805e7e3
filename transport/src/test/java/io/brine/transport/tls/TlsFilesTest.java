package io.brine.transport.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.testing.TestKeys;
import io.brine.transport.testing.TestCertificates;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TlsFilesTest {

    @TempDir
    Path dir;

    @Test
    void readsACertificateAndItsPkcs1Key() throws IOException {
        TestCertificates.CertFiles files = TestCertificates.selfSigned(dir, "master", 0);

        assertThat(TlsFiles.certificates(files.cert()))
                .hasSize(1)
                .first()
                .satisfies(c ->
                        assertThat(c.getPublicKey()).isEqualTo(TestKeys.pair(0).getPublic()));
        assertThat(TlsFiles.privateKey(files.key())).isEqualTo(TestKeys.pair(0).getPrivate());
    }

    @Test
    void readsEveryCertificateOfABundleSkippingCommentsAndOtherBlocks() throws IOException {
        String first = Files.readString(
                TestCertificates.selfSigned(dir.resolve("a"), "ca1", 0).cert());
        String second = Files.readString(
                TestCertificates.selfSigned(dir.resolve("b"), "ca2", 1).cert());
        String key = Files.readString(
                TestCertificates.selfSigned(dir.resolve("b"), "ca2", 1).key());
        // The shape of curl's cacert.pem: a non-ASCII comment above each certificate.
        Path bundle = Files.writeString(
                dir.resolve("bundle.pem"),
                "# Főtanúsítvány\n" + first + "\r\n" + key + "Subject: CN=ca2\n" + second.replace("\n", "\r\n"));

        assertThat(TlsFiles.certificates(bundle))
                .extracting(X509Certificate::getPublicKey)
                .containsExactly(TestKeys.pair(0).getPublic(), TestKeys.pair(1).getPublic());
    }

    @Test
    void readsAPkcs8Key() throws IOException {
        byte[] der = TestKeys.pair(1).getPrivate().getEncoded();
        Path key = Files.writeString(
                dir.resolve("k.pem"),
                "-----BEGIN PRIVATE KEY-----\n"
                        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                        + "\n-----END PRIVATE KEY-----\n");

        assertThat(TlsFiles.privateKey(key)).isEqualTo(TestKeys.pair(1).getPrivate());
    }

    @Test
    void refusesFilesWithoutWhatTheyShouldHold() throws IOException {
        TestCertificates.CertFiles files = TestCertificates.selfSigned(dir, "master", 0);

        assertThatThrownBy(() -> TlsFiles.certificates(files.key()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("no PEM certificate");
        assertThatThrownBy(() -> TlsFiles.privateKey(files.cert()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("no PEM private key");
        assertThatThrownBy(() -> TlsFiles.privateKey(dir.resolve("missing.key")))
                .isInstanceOf(IOException.class);
    }
}

package io.brine.protocol.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.testing.TestKeys;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.util.Arrays;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class PemTest {

    static String fixture(String name) {
        try (InputStream in = PemTest.class.getResourceAsStream("/io/brine/protocol/fixtures/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void writesSaltsFormatsByteForByteLikeOpenssl() throws Exception {
        KeyPair pair = Pem.readPrivateKey(fixture("rsa2048.pkcs1.pem"));
        assertThat(Pem.publicKeySpki(pair.getPublic())).isEqualTo(fixture("rsa2048.spki.pub"));
        assertThat(Pem.privateKeyPkcs1(pair.getPrivate())).isEqualTo(fixture("rsa2048.pkcs1.pem"));
    }

    @Test
    void readsEveryAcceptedFormatToTheSameKey() throws Exception {
        RSAPublicKey spki = Pem.readPublicKey(fixture("rsa2048.spki.pub"));
        assertThat(Pem.readPublicKey(fixture("rsa2048.pkcs1.pub"))).isEqualTo(spki);
        assertThat(Pem.readPrivateKey(fixture("rsa2048.pkcs8.pem")).getPublic()).isEqualTo(spki);
        assertThat(Pem.readPrivateKey(fixture("rsa2048.pkcs1.pem")).getPublic()).isEqualTo(spki);
        assertThat(Pem.readPublicKey(fixture("rsa4096.spki.pub")).getModulus().bitLength())
                .isEqualTo(4096);
    }

    @Test
    void refusesSmallKeysSayingSo() {
        assertThatThrownBy(() -> Pem.readPublicKey(fixture("rsa1024.spki.pub")))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("1024 bits is too small");
        assertThatThrownBy(() -> Pem.readPrivateKey(fixture("rsa1024.pkcs1.pem")))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("too small");
    }

    @Test
    void refusesNonRsaKeysSayingSo() {
        assertThatThrownBy(() -> Pem.readPublicKey(fixture("ec.pub")))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("not RSA");
        assertThatThrownBy(() -> Pem.readPrivateKey(fixture("ec.pem")))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("not RSA");
    }

    @Test
    void refusesMalformedAndMisplacedPem() {
        String pub = fixture("rsa2048.spki.pub");
        assertThatThrownBy(() -> Pem.readPublicKey("")).hasMessageContaining("no PEM data");
        assertThatThrownBy(() -> Pem.readPublicKey("hello")).hasMessageContaining("no PEM block");
        assertThatThrownBy(() -> Pem.readPublicKey(pub.replace("M", "*"))).isInstanceOf(KeyFormatException.class);
        assertThatThrownBy(() -> Pem.readPublicKey(pub.substring(0, pub.length() / 2)))
                .isInstanceOf(KeyFormatException.class);
        assertThatThrownBy(() -> Pem.readPublicKey(pub + pub)).hasMessageContaining("more than one");
        assertThatThrownBy(() -> Pem.readPublicKey(fixture("rsa2048.pkcs1.pem")))
                .hasMessageContaining("private key where a public key");
        assertThatThrownBy(() -> Pem.readPrivateKey(pub)).hasMessageContaining("public key where a private key");
        assertThatThrownBy(() -> Pem.readPrivateKey(fixture("rsa2048.encrypted.pem")))
                .hasMessageContaining("encrypted");
        assertThatThrownBy(() -> Pem.readPublicKey("x".repeat(Pem.MAX_PEM_CHARS + 1)))
                .hasMessageContaining("larger than");
    }

    @Test
    void readsAroundTextAndCrLfLineEndsAsOpensslDoes() throws Exception {
        RSAPublicKey spki = Pem.readPublicKey(fixture("rsa2048.spki.pub"));
        String framed = "Bag Attributes\n    friendlyName: minion\r\n"
                + fixture("rsa2048.spki.pub").replace("\n", "\r\n") + "trailing words\n";

        assertThat(Pem.readPublicKey(framed)).isEqualTo(spki);
    }

    @Test
    void namesWhatItFoundInsteadOfAKey() {
        String pub = fixture("rsa2048.spki.pub");
        String certificate = pub.replace("PUBLIC KEY", "CERTIFICATE");
        assertThatThrownBy(() -> Pem.readPublicKey(certificate)).hasMessageContaining("a certificate");
        assertThatThrownBy(() -> Pem.readPrivateKey(certificate)).hasMessageContaining("a certificate");
        String pkcs8Encrypted = pub.replace("PUBLIC KEY", "ENCRYPTED PRIVATE KEY");
        assertThatThrownBy(() -> Pem.readPrivateKey(pkcs8Encrypted)).hasMessageContaining("encrypted");
        assertThatThrownBy(() -> Pem.readPublicKey(fixture("rsa2048.encrypted.pem")))
                .hasMessageContaining("encrypted");
        assertThatThrownBy(() -> Pem.readPublicKey(pub.replace("-----END PUBLIC KEY-----", "-----END KEY-----")))
                .hasMessageContaining("malformed PEM");
        assertThatThrownBy(() -> Pem.readPublicKey(pub.replace("\n-----END", "\nProc-Type: 4\n-----END")))
                .hasMessageContaining("header line inside the base64");
    }

    @Test
    void refusesAnRsaEnvelopeWhoseDerIsCutShort() {
        String pub = fixture("rsa2048.spki.pub");
        String body =
                pub.substring(pub.indexOf('\n') + 1, pub.indexOf("-----END")).replace("\n", "");
        byte[] der = Base64.getDecoder().decode(body);
        String cut = "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getEncoder().encodeToString(Arrays.copyOf(der, 12))
                + "\n-----END PUBLIC KEY-----\n";

        assertThatThrownBy(() -> Pem.readPublicKey(cut))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("malformed DER");
    }

    @Test
    void roundTripsGeneratedKeys() throws Exception {
        KeyPair pair = TestKeys.pair(0);
        String pem = Pem.privateKeyPkcs1(pair.getPrivate());
        assertThat(pem).startsWith("-----BEGIN RSA PRIVATE KEY-----\n").endsWith("-----END RSA PRIVATE KEY-----\n");
        assertThat(Pem.readPrivateKey(pem).getPublic()).isEqualTo(pair.getPublic());
        assertThat(Pem.readPublicKey(Pem.publicKeySpki(pair.getPublic()))).isEqualTo(pair.getPublic());
    }
}

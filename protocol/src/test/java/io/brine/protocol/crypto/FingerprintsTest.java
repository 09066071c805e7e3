package io.brine.protocol.crypto;

import static io.brine.protocol.crypto.PemTest.fixture;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FingerprintsTest {

    @Test
    void matchesSha256sumOfTheOpensslPemBody() throws Exception {
        assertThat(Fingerprints.of(Pem.readPublicKey(fixture("rsa2048.spki.pub"))))
                .isEqualTo(fixture("rsa2048.spki.pub.finger").strip());
        assertThat(Fingerprints.of(Pem.readPublicKey(fixture("rsa4096.spki.pub"))))
                .isEqualTo(fixture("rsa4096.spki.pub.finger").strip());
    }

    @Test
    void isTheSameWhicheverFormatTheKeyCameIn() throws Exception {
        assertThat(Fingerprints.of(Pem.readPublicKey(fixture("rsa2048.pkcs1.pub"))))
                .isEqualTo(fixture("rsa2048.spki.pub.finger").strip());
    }

    @Test
    void normalizesWhatAPersonTypes() {
        String fp = fixture("rsa2048.spki.pub.finger").strip();
        assertThat(Fingerprints.normalize(fp.toUpperCase())).isEqualTo(fp);
        assertThat(Fingerprints.normalize("  " + fp.replace(":", "") + "\n")).isEqualTo(fp);
        assertThat(Fingerprints.normalize(fp.substring(3))).isNull();
        assertThat(Fingerprints.normalize(fp.replace('f', 'g'))).isNull();
        assertThat(Fingerprints.normalize(null)).isNull();
    }
}

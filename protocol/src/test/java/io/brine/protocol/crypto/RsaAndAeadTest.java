package io.brine.protocol.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.Signature;
import java.security.spec.MGF1ParameterSpec;
import java.security.spec.PSSParameterSpec;
import javax.crypto.Cipher;
import javax.crypto.spec.OAEPParameterSpec;
import javax.crypto.spec.PSource;
import org.junit.jupiter.api.Test;

class RsaAndAeadTest {

    private final KeyPair alice = TestKeys.pair(1);
    private final KeyPair bob = TestKeys.pair(2);

    @Test
    void wrapsForTheRecipientOnly() throws Exception {
        SessionKey key = SessionKey.random();
        byte[] wrapped = Rsa.wrap(alice.getPublic(), key.bytes());
        assertThat(Rsa.unwrap(alice.getPrivate(), wrapped)).isEqualTo(key.bytes());
        assertThatThrownBy(() -> Rsa.unwrap(bob.getPrivate(), wrapped)).isInstanceOf(CryptoException.class);
    }

    @Test
    void wrapUsesOaepWithSha256ForBothDigestAndMgf1() throws Exception {
        byte[] wrapped = Rsa.wrap(alice.getPublic(), new byte[] {1, 2, 3});
        Cipher sha1Mgf = Cipher.getInstance("RSA/ECB/OAEPWithSHA-256AndMGF1Padding");
        sha1Mgf.init(Cipher.DECRYPT_MODE, alice.getPrivate());
        assertThatThrownBy(() -> sha1Mgf.doFinal(wrapped)).isInstanceOf(Exception.class);
        Cipher explicit = Cipher.getInstance("RSA/ECB/OAEPPadding");
        explicit.init(
                Cipher.DECRYPT_MODE,
                alice.getPrivate(),
                new OAEPParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA256, PSource.PSpecified.DEFAULT));
        assertThat(explicit.doFinal(wrapped)).containsExactly(1, 2, 3);
    }

    @Test
    void signaturesAreRsaPssSha256AndBindSignerAndData() throws Exception {
        byte[] data = "publication".getBytes(StandardCharsets.UTF_8);
        byte[] sig = Rsa.sign(alice.getPrivate(), data);
        assertThat(Rsa.verify(alice.getPublic(), data, sig)).isTrue();
        assertThat(Rsa.verify(bob.getPublic(), data, sig)).isFalse();
        assertThat(Rsa.verify(alice.getPublic(), "other".getBytes(StandardCharsets.UTF_8), sig))
                .isFalse();
        assertThat(Rsa.verify(alice.getPublic(), data, new byte[0])).isFalse();
        assertThat(Rsa.verify(alice.getPublic(), data, null)).isFalse();

        Signature jdk = Signature.getInstance("RSASSA-PSS");
        jdk.setParameter(new PSSParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA256, 32, 1));
        jdk.initVerify(alice.getPublic());
        jdk.update(data);
        assertThat(jdk.verify(sig)).isTrue();
    }

    @Test
    void aeadOpensOnlyWithSameKeyAndContext() throws Exception {
        SessionKey key = SessionKey.random();
        byte[] aad = {7};
        byte[] box = Aead.seal(key, aad, "hello".getBytes(StandardCharsets.UTF_8));
        assertThat(box).hasSize(5 + Aead.OVERHEAD);
        assertThat(new String(Aead.open(key, aad, box), StandardCharsets.UTF_8)).isEqualTo("hello");
        assertThatThrownBy(() -> Aead.open(SessionKey.random(), aad, box)).isInstanceOf(CryptoException.class);
        assertThatThrownBy(() -> Aead.open(key, new byte[] {8}, box)).isInstanceOf(CryptoException.class);
        byte[] tampered = box.clone();
        tampered[tampered.length - 1] ^= 1;
        assertThatThrownBy(() -> Aead.open(key, aad, tampered)).isInstanceOf(CryptoException.class);
        assertThatThrownBy(() -> Aead.open(key, aad, new byte[3])).isInstanceOf(CryptoException.class);
    }

    @Test
    void sessionKeysNeverPrintTheirBytes() throws Exception {
        SessionKey key = SessionKey.of(new byte[32]);
        assertThat(key.toString()).doesNotContain("0, 0").contains("redacted");
        assertThatThrownBy(() -> SessionKey.of(new byte[16])).isInstanceOf(CryptoException.class);
    }

    @Test
    void refusesKeySizesOutsideTheBounds() {
        assertThatThrownBy(() -> RsaKeys.generate(1024)).hasMessageContaining("1024 is not allowed");
        assertThatThrownBy(() -> RsaKeys.generate(16384)).hasMessageContaining("not allowed");
    }
}

package io.brine.protocol.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.testing.TestKeys;
import java.math.BigInteger;
import java.security.KeyFactory;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.RSAPublicKeySpec;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Public keys are checked as keys: one canonical SPKI, e = 65537, an odd modulus with no small factor. */
class RsaKeysTest {

    private static final BigInteger F4 = BigInteger.valueOf(65537);

    private static byte[] spki(BigInteger n, BigInteger e) throws Exception {
        return KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(n, e)).getEncoded();
    }

    private static byte[] good() {
        return TestKeys.pair(1).getPublic().getEncoded();
    }

    @Test
    void aRealKeyIsAccepted() throws Exception {
        assertThat(RsaKeys.publicKeyFromDer(good()).getModulus())
                .isEqualTo(((RSAPublicKey) TestKeys.pair(1).getPublic()).getModulus());
    }

    @Test
    void anEvenModulusIsRefusedNamingTheRule() throws Exception {
        BigInteger p = BigInteger.probablePrime(2047, new SecureRandom());
        byte[] even = spki(p.shiftLeft(1), F4);

        assertThatThrownBy(() -> RsaKeys.publicKeyFromDer(even)).isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("modulus is even");
    }

    @Test
    void everySmallPrimeIsFoundAndTheSmallestIsNamed() {
        BigInteger n = ((RSAPublicKey) TestKeys.pair(1).getPublic()).getModulus();
        assertThat(RsaKeys.smallPrimeFactor(n)).isZero();
        for (int p : new int[] {3, 5, 61, 67, 7919, 9967, 9973}) {
            assertThat(RsaKeys.smallPrimeFactor(n.multiply(BigInteger.valueOf(p)))).as("n * %d", p).isEqualTo(p);
        }
        assertThat(RsaKeys.smallPrimeFactor(n.multiply(BigInteger.valueOf(9973L * 61)))).isEqualTo(61);
        assertThat(RsaKeys.smallPrimeFactor(n.multiply(BigInteger.valueOf(10_007)))).as("above the bound").isZero();
    }

    @Test
    void aModulusWithASmallPrimeFactorIsRefusedNamingTheFactor() throws Exception {
        BigInteger n = ((RSAPublicKey) TestKeys.pair(1).getPublic()).getModulus();
        byte[] der = spki(n.multiply(BigInteger.valueOf(7919)), F4);

        assertThatThrownBy(() -> RsaKeys.publicKeyFromDer(der)).isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("small prime factor (7919)");
    }

    @Test
    void anExponentOtherThan65537IsRefused() throws Exception {
        BigInteger n = ((RSAPublicKey) TestKeys.pair(1).getPublic()).getModulus();

        assertThatThrownBy(() -> RsaKeys.publicKeyFromDer(spki(n, BigInteger.valueOf(3))))
                .isInstanceOf(KeyFormatException.class).hasMessageContaining("exponent 3")
                .hasMessageContaining("only 65537");
    }

    @Test
    void trailingBytesOrASecondKeyAreRefused() {
        byte[] garbage = Arrays.copyOf(good(), good().length + 64);
        byte[] two = Arrays.copyOf(good(), good().length * 2);
        System.arraycopy(good(), 0, two, good().length, good().length);

        assertThatThrownBy(() -> RsaKeys.publicKeyFromDer(garbage)).isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("64 bytes follow the key");
        assertThatThrownBy(() -> RsaKeys.publicKeyFromDer(two)).isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("not exactly one SubjectPublicKeyInfo");
    }
}

package io.brine.protocol.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.testing.TestKeys;
import java.math.BigInteger;
import java.security.KeyFactory;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.RSAPublicKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Public keys are checked as keys: one canonical SPKI, e = 65537, an odd modulus with no small factor. */
class RsaKeysTest {

    private static final BigInteger F4 = BigInteger.valueOf(65537);

    private static byte[] spki(BigInteger n, BigInteger e) throws Exception {
        return KeyFactory.getInstance("RSA")
                .generatePublic(new RSAPublicKeySpec(n, e))
                .getEncoded();
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
        // A real modulus less one: 2048 bits and even (a fresh 2047-bit prime times two took a second and a half).
        byte[] even =
                spki(((RSAPublicKey) TestKeys.pair(1).getPublic()).getModulus().clearBit(0), F4);

        assertThatThrownBy(() -> RsaKeys.publicKeyFromDer(even))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("modulus is even");
    }

    @Test
    void everySmallPrimeIsFoundAndTheSmallestIsNamed() {
        BigInteger n = ((RSAPublicKey) TestKeys.pair(1).getPublic()).getModulus();
        assertThat(SmallPrimes.factorOf(n)).isZero();
        for (int p : new int[] {3, 5, 61, 67, 7919, 9967, 9973}) {
            assertThat(SmallPrimes.factorOf(n.multiply(BigInteger.valueOf(p))))
                    .as("n * %d", p)
                    .isEqualTo(p);
        }
        assertThat(SmallPrimes.factorOf(n.multiply(BigInteger.valueOf(9973L * 61))))
                .isEqualTo(61);
        assertThat(SmallPrimes.factorOf(n.multiply(BigInteger.valueOf(10_007))))
                .as("above the bound")
                .isZero();
    }

    @Test
    void everyPrimeBelowTheBoundIsFoundAsNaiveTrialDivisionFindsIt() {
        // Every prime, on moduli of every allowed size class and odd sizes between, against the obvious algorithm:
        // the reduction by chunk products and the Barrett step must not lose a factor anywhere.
        SecureRandom random = new SecureRandom(new byte[] {7});
        BigInteger modulus = ((RSAPublicKey) TestKeys.pair(1).getPublic()).getModulus();
        List<BigInteger> bases = new ArrayList<>();
        for (int bits : new int[] {31, 32, 33, 63, 64, 65, 511, 512, 513, 1023, 1024, 1025}) {
            bases.add(BigInteger.probablePrime(bits, random));
        }
        // Larger sizes from a real modulus (generating 4096- or 8192-bit primes takes seconds to minutes).
        bases.addAll(List.of(modulus, modulus.multiply(bases.get(bases.size() - 1)), modulus.pow(2), modulus.pow(4)));
        for (BigInteger base : bases) {
            // None of these has a factor below the bound: p is the only one, so the answer.
            int bits = base.bitLength();
            // One assertion per base, naming every prime missed (an assertion per prime cost more than the check).
            List<String> missed = new ArrayList<>();
            for (int p : PRIMES) {
                int found = SmallPrimes.factorOf(base.multiply(BigInteger.valueOf(p)));
                if (found != p) {
                    missed.add(p + " (found " + found + ")");
                }
            }
            assertThat(missed).as("%d-bit prime times each prime", bits).isEmpty();
            BigInteger odd = new BigInteger(bits, random).setBit(0);
            assertThat(SmallPrimes.factorOf(odd)).as("random %d bits", bits).isEqualTo(naive(odd));
            BigInteger even = odd.clearBit(0).setBit(1);
            assertThat(SmallPrimes.factorOf(even)).as("even %d bits", bits).isEqualTo(2);
        }
    }

    private static final int[] PRIMES = IntStream.range(2, SmallPrimes.BOUND)
            .filter(p -> BigInteger.valueOf(p).isProbablePrime(50))
            .toArray();

    private static int naive(BigInteger n) {
        for (int p : PRIMES) {
            if (n.mod(BigInteger.valueOf(p)).signum() == 0) {
                return p;
            }
        }
        return 0;
    }

    @Test
    void anOfferedKeyIsParsedWithoutTheFactorCheckWhichStaysAvailable() throws Exception {
        BigInteger n = ((RSAPublicKey) TestKeys.pair(1).getPublic()).getModulus();
        byte[] der = spki(n.multiply(BigInteger.valueOf(9973)), F4);

        RSAPublicKey offered = RsaKeys.offeredKeyFromDer(der);
        assertThatThrownBy(() -> RsaKeys.checkFactors(offered))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("small prime factor (9973)");
        assertThatThrownBy(() -> RsaKeys.offeredKeyFromDer(spki(n.shiftLeft(1), F4)))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("modulus is even");
    }

    @Test
    void aModulusWithASmallPrimeFactorIsRefusedNamingTheFactor() throws Exception {
        BigInteger n = ((RSAPublicKey) TestKeys.pair(1).getPublic()).getModulus();
        byte[] der = spki(n.multiply(BigInteger.valueOf(7919)), F4);

        assertThatThrownBy(() -> RsaKeys.publicKeyFromDer(der))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("small prime factor (7919)");
    }

    @Test
    void anExponentOtherThan65537IsRefused() throws Exception {
        BigInteger n = ((RSAPublicKey) TestKeys.pair(1).getPublic()).getModulus();

        assertThatThrownBy(() -> RsaKeys.publicKeyFromDer(spki(n, BigInteger.valueOf(3))))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("exponent 3")
                .hasMessageContaining("only 65537");
    }

    @Test
    void trailingBytesOrASecondKeyAreRefused() {
        byte[] garbage = Arrays.copyOf(good(), good().length + 64);
        byte[] two = Arrays.copyOf(good(), good().length * 2);
        System.arraycopy(good(), 0, two, good().length, good().length);

        assertThatThrownBy(() -> RsaKeys.publicKeyFromDer(garbage))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("64 bytes follow the key");
        assertThatThrownBy(() -> RsaKeys.publicKeyFromDer(two))
                .isInstanceOf(KeyFormatException.class)
                .hasMessageContaining("not exactly one SubjectPublicKeyInfo");
    }
}

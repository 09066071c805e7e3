package io.brine.protocol.crypto;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * Trial division of a modulus by every prime below {@value #BOUND}, in tens of microseconds for 2048 bits.
 *
 * <p>Two steps, so that the costly one-word divisions run over a few words instead of the whole modulus: the
 * modulus is first reduced by the products of about 1,024 bits of the primes ({@link BigInteger#mod}, about a dozen
 * of them), then each residue, 32 bits at a time, by products of primes that fit 31 bits (Horner's rule with a
 * Barrett reduction: a multiply instead of a divide), and the 31-bit remainder by each of its primes. The remainder
 * of n by a product P is the remainder of (n mod Q) by P whenever P divides Q, so no factor is missed. Grouping the
 * primes 63 bits at a time and reducing the whole modulus by each group cost about 1 ms per key (most of an auth's
 * master CPU); a gcd with the product of all the primes cost as much.
 */
final class SmallPrimes {

    static final int BOUND = 10_000;
    private static final int CHUNK_BITS = 1_024;

    /** The 31-bit products, each with its primes and floor((2^64 - 1) / product) for the Barrett step. */
    private record Group(long product, long inverse, int[] primes) {}

    /** About 1,024 bits of the primes' product and the groups whose primes it holds. */
    private record Chunk(BigInteger product, Group[] groups) {}

    private static final Chunk[] CHUNKS = chunks(groups());

    private SmallPrimes() {}

    /** The smallest prime below {@value #BOUND} that divides {@code n}, or 0 when none does; n must be positive. */
    static int factorOf(BigInteger n) {
        if (n.signum() <= 0) {
            throw new IllegalArgumentException("not a positive modulus");
        }
        for (Chunk chunk : CHUNKS) {
            int[] words = words(n.mod(chunk.product()));
            for (Group group : chunk.groups()) {
                long m = group.product();
                long inverse = group.inverse();
                long r = 0;
                for (int word : words) {
                    // r < m < 2^31, so x < 2^63; q undershoots x / m by less than 2, so two corrections at most.
                    long x = (r << 32) | (word & 0xFFFF_FFFFL);
                    r = x - Math.multiplyHigh(x, inverse) * m;
                    while (r >= m) {
                        r -= m;
                    }
                }
                for (int p : group.primes()) {
                    if (r % p == 0) {
                        return p;
                    }
                }
            }
        }
        return 0;
    }

    /** The magnitude of a non-negative {@code n} as 32-bit words, most significant first. */
    private static int[] words(BigInteger n) {
        byte[] bytes = n.toByteArray();
        int[] words = new int[(bytes.length + 3) / 4];
        for (int i = 0; i < bytes.length; i++) {
            int fromEnd = bytes.length - 1 - i;
            words[words.length - 1 - fromEnd / 4] |= (bytes[i] & 0xFF) << (8 * (fromEnd % 4));
        }
        return words;
    }

    private static List<Group> groups() {
        List<Group> groups = new ArrayList<>();
        List<Integer> primes = new ArrayList<>();
        long product = 1;
        // A sieve: a probable-prime test of each number below the bound was a sixth of a master's start.
        boolean[] composite = new boolean[BOUND];
        for (int p = 2; p < BOUND; p++) {
            if (composite[p]) {
                continue;
            }
            for (int multiple = p * p; multiple < BOUND; multiple += p) {
                composite[multiple] = true;
            }
            if (product * p >= 1L << 31) {
                groups.add(group(product, primes));
                primes.clear();
                product = 1;
            }
            primes.add(p);
            product *= p;
        }
        groups.add(group(product, primes));
        return groups;
    }

    private static Group group(long product, List<Integer> primes) {
        // product > 2, so the inverse is below 2^63 and multiplyHigh's signed product is the unsigned one.
        return new Group(
                product,
                Long.divideUnsigned(-1L, product),
                primes.stream().mapToInt(Integer::intValue).toArray());
    }

    private static Chunk[] chunks(List<Group> groups) {
        List<Chunk> chunks = new ArrayList<>();
        List<Group> members = new ArrayList<>();
        BigInteger product = BigInteger.ONE;
        for (Group group : groups) {
            BigInteger next = product.multiply(BigInteger.valueOf(group.product()));
            if (next.bitLength() > CHUNK_BITS && !members.isEmpty()) {
                chunks.add(new Chunk(product, members.toArray(Group[]::new)));
                members.clear();
                next = BigInteger.valueOf(group.product());
            }
            members.add(group);
            product = next;
        }
        chunks.add(new Chunk(product, members.toArray(Group[]::new)));
        return chunks.toArray(Chunk[]::new);
    }
}

package io.brine.bench;

import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.RsaKeys;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;

/**
 * This machine's raw speed at the operations brine's protocol is built from, on one thread through the JCA, as the
 * master does them: RSASSA-PSS-SHA256 signatures with an RSA-2048 key (the private-key operation) and their
 * verification (the public-key operation), and the key store's check of a public key it does not hold yet
 * ({@link RsaKeys#checkFactors}). Each is warmed up until C2 has compiled it, then timed for a while.
 */
record RsaLimits(double privateOpsPerSecond, double publicOpsPerSecond, double keyChecksPerSecond) {

    static RsaLimits measure(KeyPair key, double seconds) {
        byte[] data = new byte[256];
        byte[] signature = Rsa.sign(key.getPrivate(), data);
        for (int i = 0; i < 300; i++) {
            Rsa.sign(key.getPrivate(), data);
        }
        double privateRate = rate(seconds, () -> Rsa.sign(key.getPrivate(), data));
        for (int i = 0; i < 3000; i++) {
            Rsa.verify(key.getPublic(), data, signature);
        }
        double publicRate = rate(seconds, () -> {
            if (!Rsa.verify(key.getPublic(), data, signature)) {
                throw new IllegalStateException("signature does not verify");
            }
        });
        RSAPublicKey pub = (RSAPublicKey) key.getPublic();
        Runnable check = () -> {
            try {
                RsaKeys.checkFactors(pub);
            } catch (KeyFormatException e) {
                throw new IllegalStateException("a generated key fails the key check", e);
            }
        };
        for (int i = 0; i < 3000; i++) {
            check.run();
        }
        return new RsaLimits(privateRate, publicRate, rate(seconds, check));
    }

    double privateOpMillis() {
        return 1000 / privateOpsPerSecond;
    }

    double keyCheckMicros() {
        return 1e6 / keyChecksPerSecond;
    }

    double publicOpMillis() {
        return 1000 / publicOpsPerSecond;
    }

    private static double rate(double seconds, Runnable op) {
        long started = System.nanoTime();
        long deadline = started + (long) (seconds * 1e9);
        long count = 0;
        long now;
        do {
            for (int i = 0; i < 10; i++) {
                op.run();
            }
            count += 10;
            now = System.nanoTime();
        } while (now < deadline);
        return count / ((now - started) / 1e9);
    }
}

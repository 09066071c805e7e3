package io.brine.bench;

import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.RsaKeys;
import java.lang.management.ManagementFactory;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.util.function.LongSupplier;

/**
 * This machine's raw speed at the operations brine's protocol is built from, on one thread through the JCA, as the
 * master does them: RSASSA-PSS-SHA256 signatures with an RSA-2048 key (the private-key operation) and their
 * verification (the public-key operation), and the key store's check of a public key it does not hold yet
 * ({@link RsaKeys#checkFactors}). Each is warmed up until C2 has compiled it, then timed for a while.
 *
 * <p>Timed by the measuring thread's CPU time, not the wall clock: the figures are compared with the master's CPU
 * time, and on a machine shared past its cores a thread waits most of the wall clock for a core (at a load average of
 * 40 a private op took 28-41 ms by the wall clock and 2.0-2.2 ms of CPU), which made every ratio to a private op look
 * up to twenty times better than it was. {@code coreShare} is the CPU time over the wall time of the private ops'
 * timing: 1.0 on a quiet machine.
 */
record RsaLimits(double privateOpsPerSecond, double publicOpsPerSecond, double keyChecksPerSecond, double coreShare) {

    /** Nanoseconds of CPU the current thread has used. */
    private static final LongSupplier THREAD_CPU = ManagementFactory.getThreadMXBean()::getCurrentThreadCpuTime;

    static RsaLimits measure(KeyPair key, double seconds) {
        byte[] data = new byte[256];
        byte[] signature = Rsa.sign(key.getPrivate(), data);
        for (int i = 0; i < 300; i++) {
            Rsa.sign(key.getPrivate(), data);
        }
        long wall0 = System.nanoTime();
        long cpu0 = THREAD_CPU.getAsLong();
        double privateRate = rate(seconds, () -> Rsa.sign(key.getPrivate(), data), System::nanoTime, THREAD_CPU);
        double coreShare = (THREAD_CPU.getAsLong() - cpu0) / (double) Math.max(1, System.nanoTime() - wall0);
        for (int i = 0; i < 3000; i++) {
            Rsa.verify(key.getPublic(), data, signature);
        }
        double publicRate = rate(
                seconds,
                () -> {
                    if (!Rsa.verify(key.getPublic(), data, signature)) {
                        throw new IllegalStateException("signature does not verify");
                    }
                },
                System::nanoTime,
                THREAD_CPU);
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
        return new RsaLimits(
                privateRate, publicRate, rate(seconds, check, System::nanoTime, THREAD_CPU), Math.min(1, coreShare));
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

    /**
     * Operations per second of the thread's CPU time ({@code cpu}), run for {@code seconds} of the wall clock
     * ({@code wall}); both in nanoseconds.
     */
    static double rate(double seconds, Runnable op, LongSupplier wall, LongSupplier cpu) {
        long deadline = wall.getAsLong() + (long) (seconds * 1e9);
        long cpuStarted = cpu.getAsLong();
        long count = 0;
        do {
            for (int i = 0; i < 10; i++) {
                op.run();
            }
            count += 10;
        } while (wall.getAsLong() < deadline);
        return count / (Math.max(1, cpu.getAsLong() - cpuStarted) / 1e9);
    }
}

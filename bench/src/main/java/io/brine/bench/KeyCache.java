package io.brine.bench;

import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * RSA-2048 key pairs for simulated minions, generated once and kept on disk, so that a run with 10,000 minions does
 * not start with half an hour of key generation: one PKCS#1 PEM file per key, {@code 00000.pem}, {@code 00001.pem},
 * ... Missing keys are generated in parallel (one thread per core) and written atomically; a run never changes an
 * existing key. These are throw-away test keys for loopback benchmarks, never used anywhere else.
 */
final class KeyCache {

    static final int BITS = 2048;

    private final Path dir;

    KeyCache(Path dir) {
        this.dir = dir;
    }

    /** {@code $XDG_CACHE_HOME/brine-bench/keys-2048}, or {@code ~/.cache/brine-bench/keys-2048}. */
    static Path defaultDir() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("brine-bench").resolve("keys-" + BITS);
    }

    Path dir() {
        return dir;
    }

    /**
     * The index of minion {@code index}'s second key, the one the keyrotate scenario rotates it to, in a run of
     * {@code minions} minions (as requested) after {@code warm} warm-up minions. A run's keys: the minions' at {@code
     * 0 .. N-1}, the warm-up's at {@code N .. N+W-1}, and with keyrotate the second keys at {@code N+W .. 2N+W-1}, so
     * no two ids of a run share a key (the master refuses that) and one cache serves every N.
     */
    static int secondKey(int minions, int warm, int index) {
        return minions + warm + index;
    }

    Path file(int index) {
        return dir.resolve(String.format("%05d.pem", index));
    }

    /** How many of keys {@code 0 .. count-1} are missing. */
    int missing(int count) {
        int missing = 0;
        for (int i = 0; i < count; i++) {
            if (!Files.isRegularFile(file(i))) {
                missing++;
            }
        }
        return missing;
    }

    /**
     * Generates the missing keys among {@code 0 .. count-1} on {@code threads} threads; {@code progress} hears the
     * number generated so far now and then.
     */
    void ensure(int count, int threads, IntConsumer progress) throws IOException {
        Files.createDirectories(
                dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        List<Integer> todo = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            if (!Files.isRegularFile(file(i))) {
                todo.add(i);
            }
        }
        if (todo.isEmpty()) {
            return;
        }
        AtomicInteger done = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int index : todo) {
                futures.add(pool.submit(() -> {
                    write(index, RsaKeys.generate(BITS));
                    int n = done.incrementAndGet();
                    if (n % 250 == 0 || n == todo.size()) {
                        progress.accept(n);
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while generating keys", e);
        } catch (ExecutionException e) {
            throw new IOException("cannot generate keys: " + e.getCause(), e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }

    private void write(int index, KeyPair pair) {
        Path target = file(index);
        try {
            Path temp = Files.createTempFile(
                    dir,
                    ".key-",
                    ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(temp, Pem.privateKeyPkcs1(pair.getPrivate()), StandardCharsets.US_ASCII);
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + target, e);
        }
    }

    KeyPair load(int index) {
        Path file = file(index);
        try {
            return Pem.readPrivateKey(Files.readString(file, StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read key " + file + ": " + e.getMessage(), e);
        } catch (KeyFormatException e) {
            throw new IllegalStateException(
                    "broken cached key " + file + " (delete it and run again): " + e.getMessage(), e);
        }
    }
}

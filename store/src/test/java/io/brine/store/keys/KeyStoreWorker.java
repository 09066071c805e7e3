package io.brine.store.keys;

import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A separate JVM that works on a key store, for the crash, concurrency and notification tests. It prints one line
 * per operation so the test can kill it at a moment of its choosing.
 *
 * <pre>
 * crash  PKI CACHEDIR SEED STABLE CHURN   loop until killed
 * mixed  PKI CACHEDIR SEED IDS OPS        OPS operations, then exit 0
 * accept PKI ID                           accept one pending key, then exit 0
 * </pre>
 */
public final class KeyStoreWorker {

    /** Test key of a stable id (never deleted) / its other key (denied when offered). */
    static final int STABLE_KEYS = 0;

    static final int CHURN_KEYS = 64;
    static final int OTHER_KEYS = 128;

    private KeyStoreWorker() {}

    static Process start(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                KeyStoreWorker.class.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }

    static String stableId(int i) {
        return "stable-" + i;
    }

    static String churnId(int i) {
        return "churn-" + i;
    }

    static RSAPublicKey key(int index) {
        return (RSAPublicKey) TestKeys.pair(index).getPublic();
    }

    public static void main(String[] args) throws Exception {
        // stdout carries the protocol lines; logs go to stderr, and only warnings.
        PrintStream out = System.out;
        System.setOut(System.err);
        ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME))
                .setLevel(ch.qos.logback.classic.Level.WARN);
        switch (args[0]) {
            case "crash" ->
                crash(
                        Path.of(args[1]),
                        Path.of(args[2]),
                        Long.parseLong(args[3]),
                        Integer.parseInt(args[4]),
                        Integer.parseInt(args[5]),
                        out);
            case "mixed" ->
                mixed(
                        Path.of(args[1]),
                        Path.of(args[2]),
                        Long.parseLong(args[3]),
                        Integer.parseInt(args[4]),
                        Integer.parseInt(args[5]),
                        out);
            case "accept" -> {
                try (KeyStore store = open(Path.of(args[1]), null)) {
                    out.println(store.accept(args[2], null, "worker").status());
                }
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
        out.flush();
    }

    /** A store auditing to {@code cachedir} (none when null); the audit log lives as long as this process. */
    private static KeyStore open(Path pki, Path cachedir) throws Exception {
        AuditLog audit = cachedir == null ? AuditLog.none() : AuditLog.open(cachedir, Clock.systemUTC());
        return FileKeyStore.open(KeyStoreOptions.builder(pki)
                .auditLog(audit)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build());
    }

    /** Random accept/reject/delete/offer operations, forever; stable ids are moved but never deleted. */
    private static void crash(Path pki, Path cachedir, long seed, int stable, int churn, PrintStream out)
            throws Exception {
        Random random = new Random(seed);
        try (KeyStore store = open(pki, cachedir)) {
            out.println("ready");
            out.flush();
            for (long n = 0; ; n++) {
                if (random.nextInt(stable + churn) < stable) {
                    int i = random.nextInt(stable);
                    stableOperation(store, stableId(i), STABLE_KEYS + i, random);
                } else {
                    int i = random.nextInt(churn);
                    churnOperation(store, churnId(i), CHURN_KEYS + i, random);
                }
                out.println("op " + n);
                out.flush();
            }
        }
    }

    private static void stableOperation(KeyStore store, String id, int keyIndex, Random random) {
        switch (random.nextInt(6)) {
            case 0 ->
                store.accept(
                        id,
                        random.nextBoolean() ? KeyState.PENDING : KeyState.REJECTED,
                        random.nextBoolean() ? Fingerprints.of(key(keyIndex)) : null,
                        "worker");
            case 1 -> store.reject(id, random.nextBoolean() ? KeyState.PENDING : KeyState.ACCEPTED, null, "worker");
            case 2 -> store.offer(id, key(keyIndex), PolicyVerdict.values()[random.nextInt(3)]);
            case 3 -> store.offer(id, key(OTHER_KEYS + keyIndex), PolicyVerdict.NONE);
            case 4 -> store.delete(id, KeyState.DENIED, null, "worker");
            default -> store.list();
        }
    }

    private static void churnOperation(KeyStore store, String id, int keyIndex, Random random) {
        switch (random.nextInt(5)) {
            case 0, 1 -> store.offer(id, key(keyIndex), PolicyVerdict.values()[random.nextInt(3)]);
            case 2 -> store.delete(id, KeyState.values()[random.nextInt(4)], null, "worker");
            case 3 -> store.accept(id, KeyState.PENDING, null, "worker");
            default -> {
                // Only a known id gets the other key (denied); an unknown id would simply take it.
                if (store.lookup(id, key(keyIndex)) != KeyLookup.UNKNOWN) {
                    store.offer(id, key(OTHER_KEYS + keyIndex), PolicyVerdict.NONE);
                }
            }
        }
    }

    /** Master-like offers and admin-like moves on shared ids; nothing but denied keys is ever deleted. */
    private static void mixed(Path pki, Path cachedir, long seed, int ids, int operations, PrintStream out)
            throws Exception {
        Random random = new Random(seed);
        try (KeyStore store = open(pki, cachedir)) {
            for (int n = 0; n < operations; n++) {
                int i = random.nextInt(ids);
                stableOperation(store, stableId(i), STABLE_KEYS + i, random);
            }
        }
        out.println("done");
    }
}

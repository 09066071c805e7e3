package io.brine.keytool;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * Makes a pki dir with many minion keys for measuring brine-key at scale (BENCHMARKS.md, "brine-key at scale"): a
 * few real RSA public keys, each written under many ids, so making 100,000 takes seconds. Every key is therefore
 * stored under several ids, and brine-key marks them "same key as ...". No brine class is used, so it runs on its
 * own with the JDK's source launcher:
 *
 * <pre>java keytool/src/test/java/io/brine/keytool/ManyKeys.java PKI_DIR 100000 [DISTINCT_KEYS]</pre>
 */
public final class ManyKeys {

    private ManyKeys() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: ManyKeys PKI_DIR COUNT [DISTINCT_KEYS (default 4)]");
            System.exit(2);
        }
        Path pki = Path.of(args[0]);
        int count = Integer.parseInt(args[1]);
        int distinct = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        write(pki, "minions", "minion", count, publicKeys(distinct));
        System.out.println("wrote " + count + " accepted keys (" + distinct + " distinct) under " + pki);
    }

    /** {@code count} SPKI PEMs, as many distinct RSA-2048 keys as asked (made now: 0.2 s each). */
    static List<String> publicKeys(int distinct) throws NoSuchAlgorithmException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        List<String> pems = new ArrayList<>();
        for (int i = 0; i < distinct; i++) {
            String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                    .encodeToString(generator.generateKeyPair().getPublic().getEncoded());
            pems.add("-----BEGIN PUBLIC KEY-----\n" + body + "\n-----END PUBLIC KEY-----\n");
        }
        return pems;
    }

    /**
     * Writes {@code count} keys into {@code pki/stateDir} as {@code prefix000001} and on, cycling through
     * {@code pems}; makes the four state directories (0700) when missing.
     */
    static void write(Path pki, String stateDir, String prefix, int count, List<String> pems) throws IOException {
        for (String dir : List.of("minions", "minions_pre", "minions_rejected", "minions_denied")) {
            Files.createDirectories(pki.resolve(dir));
            Files.setPosixFilePermissions(pki.resolve(dir), PosixFilePermissions.fromString("rwx------"));
        }
        Files.setPosixFilePermissions(pki, PosixFilePermissions.fromString("rwx------"));
        Path dir = pki.resolve(stateDir);
        for (int i = 1; i <= count; i++) {
            Path file = dir.resolve(String.format("%s%06d", prefix, i));
            Files.writeString(file, pems.get(i % pems.size()), StandardCharsets.US_ASCII);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        }
    }
}

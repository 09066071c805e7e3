package io.brine.store.keys;

import io.brine.protocol.crypto.Fingerprints;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Judges a key file as {@link KeyDirectory} does ({@link KeyDirectory.KeyFile}), keeping only its fingerprint. A
 * verdict is remembered for the last {@value #REMEMBERED} contents seen (by SHA-256 of the bytes): parsing and checking
 * an RSA key costs far more than reading the file, and in a pki dir of many copies of one key (a test fleet, or one
 * host's key offered under many ids) each content is parsed once.
 */
final class KeyFileCheck {

    /** A valid key's fingerprint, or why the file is not one. */
    record Verdict(String fingerprint, String problem) {}

    static final int REMEMBERED = 1024;

    private final Map<String, Verdict> recent = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Verdict> eldest) {
            return size() > REMEMBERED;
        }
    };
    private final MessageDigest sha256;

    KeyFileCheck() {
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks SHA-256", e);
        }
    }

    Verdict check(Path path, BasicFileAttributes attributes) {
        String problem = KeyDirectory.KeyFile.problem(attributes);
        if (problem != null) {
            return new Verdict(null, problem);
        }
        byte[] bytes;
        try {
            bytes = KeyDirectory.KeyFile.bytes(path);
        } catch (IOException e) {
            return verdict(new KeyDirectory.KeyFile(null, "cannot be read: " + e.getMessage()));
        }
        String content = HexFormat.of().formatHex(sha256.digest(bytes));
        Verdict known = recent.get(content);
        if (known != null) {
            return known;
        }
        Verdict verdict = verdict(KeyDirectory.KeyFile.parse(bytes));
        recent.put(content, verdict);
        return verdict;
    }

    private static Verdict verdict(KeyDirectory.KeyFile file) {
        return file.key() == null ? new Verdict(null, file.problem()) : new Verdict(Fingerprints.of(file.key()), null);
    }
}

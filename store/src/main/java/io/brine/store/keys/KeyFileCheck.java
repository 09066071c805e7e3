package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Judges a key file as {@link KeyDirectory} does (a regular file, not a link, small, holding a valid RSA public key),
 * keeping only its fingerprint. A verdict is remembered for the last {@value #REMEMBERED} contents seen (by SHA-256
 * of the bytes): parsing and checking an RSA key costs far more than reading the file, and in a pki dir of many copies
 * of one key (a test fleet, or one host's key offered under many ids) each content is parsed once.
 */
final class KeyFileCheck {

    /** A valid key's fingerprint, or why the file is not one. */
    record Verdict(String fingerprint, String problem) {
    }

    static final int REMEMBERED = 1024;
    private static final int MAX_KEY_BYTES = Pem.MAX_PEM_CHARS;

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
        if (attributes.isSymbolicLink()) {
            return problem("is a symbolic link (links are never followed)");
        }
        if (!attributes.isRegularFile()) {
            return problem("is not a regular file");
        }
        if (attributes.size() > MAX_KEY_BYTES) {
            return problem("is larger than " + MAX_KEY_BYTES + " bytes: not a public key");
        }
        byte[] bytes;
        try {
            bytes = AtomicFiles.readSmall(path, MAX_KEY_BYTES);
        } catch (IOException e) {
            return problem("cannot be read: " + e.getMessage());
        }
        String content = HexFormat.of().formatHex(sha256.digest(bytes));
        Verdict known = recent.get(content);
        if (known != null) {
            return known;
        }
        Verdict verdict;
        try {
            verdict = new Verdict(Fingerprints.of(Pem.readPublicKey(new String(bytes, StandardCharsets.US_ASCII))),
                    null);
        } catch (KeyFormatException e) {
            verdict = problem("is not a valid public key: " + e.getMessage());
        }
        recent.put(content, verdict);
        return verdict;
    }

    private static Verdict problem(String problem) {
        // Parser messages may quote the file; keep terminal escapes out of what admins read.
        return new Verdict(null, problem.replaceAll("[\\p{Cntrl}]", "?"));
    }
}

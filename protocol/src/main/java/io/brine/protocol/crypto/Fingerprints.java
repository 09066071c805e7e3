package io.brine.protocol.crypto;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Key fingerprints in Salt's {@code master_finger} form: SHA-256 over the body lines of the key's SPKI PEM (64
 * base64 characters a line, each with its trailing newline), printed as colon-separated lower-case hex pairs.
 * The same value as {@code sed '1d;$d' key.pub | sha256sum} for a key written by brine or openssl.
 */
public final class Fingerprints {

    private static final HexFormat HEX = HexFormat.ofDelimiter(":");

    private Fingerprints() {}

    public static String of(PublicKey key) {
        MessageDigest digest = sha256();
        for (String line : Pem.bodyLines(key)) {
            digest.update(line.getBytes(StandardCharsets.US_ASCII));
            digest.update((byte) '\n');
        }
        return HEX.formatHex(digest.digest());
    }

    /**
     * Normalizes a fingerprint typed by a person: case and surrounding white space do not matter, colons are
     * optional. Returns null when it is not 32 hex bytes.
     */
    public static String normalize(String typed) {
        if (typed == null) {
            return null;
        }
        String hex = typed.strip().toLowerCase(Locale.ROOT).replace(":", "");
        if (hex.length() != 64 || !hex.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return null;
        }
        return HEX.formatHex(HexFormat.of().parseHex(hex));
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks SHA-256", e);
        }
    }
}

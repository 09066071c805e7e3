package io.brine.protocol.salt;

import io.brine.protocol.crypto.Pem;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * The PEM text forms Salt puts on the wire and hashes (SALT.md, "Keys"). On the wire every public key is in
 * {@code clean_key} form: SPKI PEM, stripped, lines joined with {@code \n}, no trailing newline (450 characters for
 * RSA-2048). Keys are compared in that form too ({@code compare_keys}).
 */
public final class SaltPem {

    /** Python's {@code str.splitlines()} boundaries that can occur in ASCII text. */
    private static final Pattern LINES = Pattern.compile("\r\n|[\n\r\u000b\u000c\u001c\u001d\u001e\u0085]");

    private static final HexFormat HEX = HexFormat.of();

    private SaltPem() {}

    /** Salt's {@code clean_key}: {@code "\n".join(key.strip().splitlines())}. */
    public static String cleanKey(String pem) {
        return String.join("\n", LINES.split(pem.strip(), -1));
    }

    /** The {@code pub_key} of an accepted auth reply / the {@code pub} of an auth request: SPKI in clean form. */
    public static String wireForm(PublicKey key) {
        return cleanKey(Pem.publicKeySpki(key));
    }

    /** Salt's {@code compare_keys}: equal once both are in clean form. */
    public static boolean sameKey(String a, String b) {
        return cleanKey(a).equals(cleanKey(b));
    }

    /**
     * {@code salt.utils.crypt.pem_finger} of a key file's text, as a minion's {@code master_finger} and
     * {@code salt-key -F} on the master's file use it: SHA-256 over the non-blank lines between the BEGIN and END
     * lines, each with its newline, as colon-separated hex pairs.
     */
    public static String fileFinger(String pemFileText) {
        String[] lines = pemFileText.replace("\r\n", "\n").split("\n", -1);
        StringBuilder body = new StringBuilder();
        int seen = 0;
        int nonBlank = 0;
        for (String line : lines) {
            if (!line.strip().isEmpty()) {
                nonBlank++;
            }
        }
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.strip().isEmpty()) {
                continue;
            }
            seen++;
            if (seen > 1 && seen < nonBlank) {
                // readlines() keeps each line's newline; the last line of a file may lack one.
                body.append(line).append(i < lines.length - 1 ? "\n" : "");
            }
        }
        return colons(sha256(body.toString()));
    }

    /** {@code pem_finger(key=text)}: SHA-256 over the whole text given (what {@code salt-key -f} prints). */
    public static String textFinger(String text) {
        return colons(sha256(text));
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String colons(byte[] digest) {
        String hex = HEX.formatHex(digest);
        StringBuilder out = new StringBuilder(hex.length() * 3 / 2);
        for (int i = 0; i < hex.length(); i += 2) {
            if (i > 0) {
                out.append(':');
            }
            out.append(hex, i, i + 2);
        }
        return out.toString();
    }
}

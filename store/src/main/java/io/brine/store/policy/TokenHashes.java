package io.brine.store.policy;

import io.brine.daemon.config.MasterConfig.AutosignToken;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * Salted hashes of autosign tokens: {@code SHA-256(salt || UTF-8(token))} with a random 16-byte salt per entry
 * (MasterConfig.AutosignToken says why not a slow KDF). {@code brine-key token-hash} uses {@link #entry} so that
 * admins never compute one by hand.
 */
public final class TokenHashes {

    /** Tokens shorter than this are refused by {@code brine-key token-hash}: the hash is only as strong as them. */
    public static final int MIN_TOKEN_LENGTH = 16;

    public static final int SALT_BYTES = 16;

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final HexFormat HEX = HexFormat.of();

    private TokenHashes() {}

    /** A config entry for {@code token}, with a fresh salt. */
    public static AutosignToken entry(String match, String token, boolean singleUse) {
        byte[] salt = new byte[SALT_BYTES];
        RANDOM.nextBytes(salt);
        return new AutosignToken(match, HEX.formatHex(salt), HEX.formatHex(hash(salt, token)), singleUse);
    }

    /** A new random token: 32 bytes, base64url without padding (43 characters). */
    public static String generate() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** Whether {@code token} is the one {@code entry} was made from; constant time in the hash comparison. */
    public static boolean matches(AutosignToken entry, String token) {
        byte[] expected = HEX.parseHex(entry.sha256());
        return MessageDigest.isEqual(expected, hash(HEX.parseHex(entry.salt()), token));
    }

    static byte[] hash(byte[] salt, String token) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(salt);
            digest.update(token.getBytes(StandardCharsets.UTF_8));
            return digest.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks SHA-256", e);
        }
    }
}

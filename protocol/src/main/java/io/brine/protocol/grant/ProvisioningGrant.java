package io.brine.protocol.grant;

import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What a provisioner vouches for (PROTOCOL.md, "Provisioning grants"): the host {@code id} may enrol with the key
 * whose fingerprint is {@code fingerprint} from {@code notBefore} until {@code notAfter}, and is classified as
 * {@code classification}. The grant is single use; {@code nonce} makes every grant distinct.
 *
 * @param id             the minion id the grant is for
 * @param fingerprint    the fingerprint of the host's public key, in {@code Fingerprints}' form
 * @param notBefore      when it was made; a master tolerates its clock skew on this bound only
 * @param notAfter       when it expires; never stretched
 * @param classification key/value pairs the master stores with the minion for targeting (grain {@code class})
 * @param nonce          16 random bytes as 32 lower-case hex digits
 */
public record ProvisioningGrant(
        String id,
        String fingerprint,
        Instant notBefore,
        Instant notAfter,
        Map<String, String> classification,
        String nonce) {

    /** The longest lifetime a grant may have: it bounds how long a master must remember a spent one. */
    public static final long MAX_LIFETIME_SECONDS = 30L * 24 * 3600;

    public static final int MAX_CLASSES = 64;
    public static final int MAX_CLASS_VALUE = 256;

    private static final Pattern CLASS_KEY = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    private static final Pattern NONCE = Pattern.compile("[0-9a-f]{32}");

    /** @throws IllegalArgumentException naming the first field that breaks its rule */
    public ProvisioningGrant {
        MinionIds.requireValid(id);
        String normalized = Fingerprints.normalize(fingerprint);
        if (normalized == null) {
            throw new IllegalArgumentException("fingerprint is not 32 hex bytes");
        }
        fingerprint = normalized;
        Objects.requireNonNull(notBefore, "notBefore");
        Objects.requireNonNull(notAfter, "notAfter");
        if (notBefore.getNano() != 0 || notAfter.getNano() != 0 || notBefore.getEpochSecond() < 0) {
            throw new IllegalArgumentException("times must be whole seconds since the epoch");
        }
        if (!notAfter.isAfter(notBefore)) {
            throw new IllegalArgumentException("not_after must be after not_before");
        }
        if (notAfter.getEpochSecond() - notBefore.getEpochSecond() > MAX_LIFETIME_SECONDS) {
            throw new IllegalArgumentException("a grant may live " + MAX_LIFETIME_SECONDS + " s (30 days) at most");
        }
        Map<String, String> copy = new LinkedHashMap<>();
        for (Map.Entry<String, String> entry : classification.entrySet()) {
            classProblem(entry.getKey(), entry.getValue()).ifPresent(problem -> {
                throw new IllegalArgumentException(problem);
            });
            copy.put(entry.getKey(), entry.getValue());
        }
        if (copy.size() > MAX_CLASSES) {
            throw new IllegalArgumentException("at most " + MAX_CLASSES + " classes");
        }
        classification = Collections.unmodifiableMap(copy);
        if (nonce == null || !NONCE.matcher(nonce).matches()) {
            throw new IllegalArgumentException("nonce must be 32 lower-case hex digits");
        }
    }

    /** Why a classification entry is not acceptable, or empty: keys are {@code [A-Za-z0-9_.-]{1,64}}. */
    public static Optional<String> classProblem(String key, String value) {
        if (key == null || !CLASS_KEY.matcher(key).matches()) {
            return Optional.of("class key " + MinionIds.printable(key) + " is not 1-64 characters of [A-Za-z0-9_.-]");
        }
        if (value == null
                || value.length() > MAX_CLASS_VALUE
                || value.chars().anyMatch(c -> c < 0x20 || (c >= 0x7f && c <= 0x9f))) {
            return Optional.of("class " + key + ": the value must be at most " + MAX_CLASS_VALUE
                    + " characters without control characters");
        }
        return Optional.empty();
    }
}

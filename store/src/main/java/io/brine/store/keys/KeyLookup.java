package io.brine.store.keys;

import java.security.interfaces.RSAPublicKey;

/** What the store holds for an id, relative to a key being offered under it. */
public enum KeyLookup {
    UNKNOWN,
    PENDING_SAME,
    /** A different key, or an unreadable file, is pending under the id. */
    PENDING_OTHER,
    ACCEPTED_SAME,
    /** A different key, or an unreadable file, is accepted under the id. */
    ACCEPTED_OTHER,
    /** The id is rejected, whatever its key. */
    REJECTED;

    /**
     * {@code offered} against the key a backend holds for the id in {@code state} (pending, accepted or rejected):
     * every backend answers it alike.
     *
     * @throws IllegalArgumentException for {@link KeyState#DENIED}, which is not a state an id is in
     */
    public static KeyLookup of(KeyState state, RSAPublicKey stored, RSAPublicKey offered) {
        boolean same = sameKey(stored, offered);
        return switch (state) {
            case PENDING -> same ? PENDING_SAME : PENDING_OTHER;
            case ACCEPTED -> same ? ACCEPTED_SAME : ACCEPTED_OTHER;
            case REJECTED -> REJECTED;
            case DENIED -> throw new IllegalArgumentException("denied is not an exclusive state");
        };
    }

    /** Whether the id's pending or accepted key is the offered one. */
    public boolean isOfferedKey() {
        return this == PENDING_SAME || this == ACCEPTED_SAME;
    }

    /** Whether two RSA public keys are the same key. */
    public static boolean sameKey(RSAPublicKey a, RSAPublicKey b) {
        return a.getModulus().equals(b.getModulus()) && a.getPublicExponent().equals(b.getPublicExponent());
    }
}

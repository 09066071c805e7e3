package io.brine.protocol.message;

/**
 * Crypto suites. Each auth request, auth reply and publication names its suite, so a later one can be added;
 * a peer refuses any suite it does not support (no downgrade: there is no negotiation).
 */
public final class Suite {

    /** RSA-2048..8192 keys, RSA-OAEP-SHA256 (MGF1-SHA256) wraps, RSA-PSS-SHA256 signatures, AES-256-GCM. */
    public static final int RSA_OAEP_PSS_AES256GCM = 1;

    private Suite() {}
}

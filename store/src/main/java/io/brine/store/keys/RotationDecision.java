package io.brine.store.keys;

/**
 * The store's answer to a minion's key rotation ({@link KeyStore#rotate}). Callers switch over it exhaustively;
 * {@code reason} is for the minion, the logs and the audit trail and never holds key material.
 */
public sealed interface RotationDecision
        permits RotationDecision.Rotated, RotationDecision.Pending, RotationDecision.Refused {

    String id();

    String reason();

    /**
     * The new key ({@code newFingerprint}) is the id's accepted key; the old one ({@code oldFingerprint}) is retired
     * for the id. Also the answer when the new key already was the accepted key (a retry after a lost answer): then
     * nothing was written.
     */
    record Rotated(String id, String oldFingerprint, String newFingerprint, String reason)
            implements RotationDecision {}

    /**
     * {@code key_rotation: pending}: the new key waits for an admin ({@link KeyStore#acceptRotation}) while the old
     * one stays accepted; filed now, or already waiting with this key (then nothing was written).
     */
    record Pending(String id, String oldFingerprint, String newFingerprint, String reason)
            implements RotationDecision {}

    /** Nothing was written: the id's accepted key is what it was. */
    record Refused(String id, String newFingerprint, String reason) implements RotationDecision {}
}

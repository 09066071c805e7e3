package io.brine.store.keys;

/** What acceptance policies concluded about an offered key (computed by the caller, outside the store lock). */
public enum PolicyVerdict {
    /** A policy (auto_accept, autosign file, ...) accepts the key. */
    ACCEPT,
    /** A policy (autoreject file, ...) rejects the key. */
    REJECT,
    /** No policy decided: the key waits for an admin. */
    NONE
}

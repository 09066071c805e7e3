package io.brine.store.keys;

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
    REJECTED
}

package io.brine.store.keys;

/**
 * Where a minion key sits in the pki dir (DESIGN.md §2). An id is in at most one of {@link #PENDING},
 * {@link #ACCEPTED} and {@link #REJECTED}; {@link #DENIED} holds, next to that, the last different key offered
 * under the id.
 */
public enum KeyState {
    PENDING("minions_pre", "pending"),
    ACCEPTED("minions", "accepted"),
    REJECTED("minions_rejected", "rejected"),
    DENIED("minions_denied", "denied");

    private final String dirName;
    private final String label;

    KeyState(String dirName, String label) {
        this.dirName = dirName;
        this.label = label;
    }

    /** The directory under {@code pki_dir}, as Salt names it. */
    public String dirName() {
        return dirName;
    }

    /** A lower-case word for messages and the audit log. */
    public String label() {
        return label;
    }

    /** True for the three states an id holds exclusively; false for {@link #DENIED}. */
    public boolean exclusive() {
        return this != DENIED;
    }
}

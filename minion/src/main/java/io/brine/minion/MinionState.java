package io.brine.minion;

/** Where a minion stands with its master, as shown in its log and its status file. */
public enum MinionState {
    /** Started; no answer from the master yet. */
    CONNECTING,
    /** The key waits in the master's {@code minions_pre/} (or the master is full); retrying. */
    PENDING,
    ACCEPTED,
    /** The master rejected the key; the minion stops unless {@code rejected_retry} is on. */
    REJECTED,
    /** The master holds a different key for this id; retrying, an admin must act. */
    DENIED,
    /**
     * A reply presented a master key other than the pinned one (or {@code master_finger}'s). Shown while such
     * replies come; the minion drops them and keeps asking, since anybody on the path can send one. Only when the
     * pinned key itself signed it does the minion stop (exit 4).
     */
    MASTER_KEY_MISMATCH,
    STOPPED;

    /** States in which the daemon stops trying. */
    public boolean terminal() {
        return this == STOPPED;
    }
}

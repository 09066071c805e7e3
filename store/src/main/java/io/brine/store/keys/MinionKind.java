package io.brine.store.keys;

/**
 * Which protocol a minion's key was filed through: brine's auth or Salt's {@code _auth} (SALT.md §4). Fixed when the
 * key is first filed, in the same atomic step of the key store, and changed only by an admin deleting the key so that
 * the minion offers it again. A key with no recorded kind is a brine minion's: its jobs go to its brine session only.
 * Salt's {@code _auth} proves nothing about the private key, so a Salt sign-in may never claim a brine minion's key.
 */
public enum MinionKind {
    BRINE("brine"),
    SALT("salt");

    private final String label;

    MinionKind(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}

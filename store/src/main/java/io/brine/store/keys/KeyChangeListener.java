package io.brine.store.keys;

import java.util.List;

/** Hears every change of the key store, including changes made by other processes. */
@FunctionalInterface
public interface KeyChangeListener {

    /** Called on the store's own thread, one change at a time, in the order the store saw them. */
    void onChange(KeyChange change);

    /**
     * The changes the store saw at once (one write, or everything another writer did since the last look: a
     * {@code brine-key -D} of thousands of keys is one such list), in order. By default each is told to
     * {@link #onChange}, every one even when one throws; a listener that acts once per list (the master rotates the
     * publish key once for all the keys removed) overrides this.
     */
    default void onChanges(List<KeyChange> changes) {
        RuntimeException failed = null;
        for (KeyChange change : changes) {
            try {
                onChange(change);
            } catch (RuntimeException e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }
}

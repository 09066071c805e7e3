package io.brine.store.keys;

/** Hears every change of the key store, including changes made by other processes. */
@FunctionalInterface
public interface KeyChangeListener {

    /** Called on the store's own thread, one change at a time, in the order the store saw them. */
    void onChange(KeyChange change);
}

package io.brine.store.keys;

import io.brine.store.keys.Snapshot.Tenure;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * What {@link KeyStore#offer} answered and what the store holds for the id afterwards, so that a caller needs no
 * second read: the stored key (its state, and the store's own instance of the key, which a session can share) and
 * whether it is the offered key.
 */
public final class Offer {

    private static final Tenure NEVER = new Tenure();

    static {
        NEVER.end();
    }

    private final KeyDecision decision;
    private final StoredKey stored;
    private final boolean sameKey;
    private final BooleanSupplier current;

    private Offer(KeyDecision decision, StoredKey stored, boolean sameKey, Tenure tenure) {
        this(decision, stored, sameKey, tenure::current);
    }

    private Offer(KeyDecision decision, StoredKey stored, boolean sameKey, BooleanSupplier current) {
        this.decision = decision;
        this.stored = stored;
        this.sameKey = sameKey;
        this.current = current;
    }

    /**
     * An offer answered by another backend (the cluster's): {@code current} answers {@link #current()} and must
     * turn false, for good, before that backend tells any listener that {@code stored} moved or left.
     */
    public static Offer of(KeyDecision decision, StoredKey stored, boolean sameKey, BooleanSupplier current) {
        return stored == null ? new Offer(decision, null, false, NEVER) : new Offer(decision, stored, sameKey, current);
    }

    /** An offer answered with the id's entry {@code entry} (null when the id holds no key). */
    static Offer of(KeyDecision decision, Snapshot.Entry entry, boolean sameKey) {
        return entry == null
                ? new Offer(decision, null, false, NEVER)
                : new Offer(decision, entry.key(), sameKey, entry.tenure());
    }

    /** An offer whose stored key the store could not tie to its snapshot: never {@link #current()}. */
    static Offer untracked(KeyDecision decision, StoredKey stored, boolean sameKey) {
        return new Offer(decision, stored, sameKey, NEVER);
    }

    /** The answer. */
    public KeyDecision decision() {
        return decision;
    }

    /**
     * The id's key in its pending, accepted or rejected state after the offer: the offered key itself when
     * {@link #sameKey()}, the other key when the offer was denied; empty when the id holds none (a full store, an
     * autoreject past its limit).
     */
    public Optional<StoredKey> stored() {
        return Optional.ofNullable(stored);
    }

    /** Whether {@link #stored()} is the offered key. */
    public boolean sameKey() {
        return sameKey;
    }

    /**
     * Whether {@link #stored()} is still the id's key in that state: false once it was moved, deleted or replaced,
     * here or by another process (as soon as the store has seen that). Reads nothing: the store ends the stored
     * key's tenure before it tells any listener of the change, so a caller that sees it current acted before
     * whatever the change sets off.
     */
    public boolean current() {
        return current.getAsBoolean();
    }

    @Override
    public String toString() {
        return "Offer[" + decision + ", stored " + stored + (sameKey ? " (the offered key)" : "") + "]";
    }
}

package io.brine.store.keys;

import java.security.interfaces.RSAPublicKey;
import java.util.Objects;

/** A valid public key found in a state directory, and the kind of minion it was filed for ({@link MinionKind}). */
public record StoredKey(String id, KeyState state, RSAPublicKey key, String fingerprint, MinionKind kind) {

    public StoredKey {
        Objects.requireNonNull(kind, "kind");
    }

    /** A brine minion's key. */
    public StoredKey(String id, KeyState state, RSAPublicKey key, String fingerprint) {
        this(id, state, key, fingerprint, MinionKind.BRINE);
    }

    /** The same key, filed for {@code newKind}. */
    public StoredKey as(MinionKind newKind) {
        return newKind == kind ? this : new StoredKey(id, state, key, fingerprint, newKind);
    }

    @Override
    public String toString() {
        return state.dirName() + "/" + id + " " + fingerprint + (kind == MinionKind.SALT ? " (salt)" : "");
    }
}

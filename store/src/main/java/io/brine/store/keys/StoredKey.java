package io.brine.store.keys;

import java.security.interfaces.RSAPublicKey;

/** A valid public key found in a state directory. */
public record StoredKey(String id, KeyState state, RSAPublicKey key, String fingerprint) {

    @Override
    public String toString() {
        return state.dirName() + "/" + id + " " + fingerprint;
    }
}

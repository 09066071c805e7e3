package io.brine.store.keys;

import java.util.Optional;

/**
 * One change of what the store holds for an id. For the exclusive states {@code from}/{@code to} say where the key
 * moved (empty = absent); a denied key written or removed shows as {@code to = DENIED} or {@code from = DENIED}.
 * {@code fingerprint} is the key's that arrived, or else the one that left.
 */
public record KeyChange(String id, Optional<KeyState> from, Optional<KeyState> to, String fingerprint) {

    @Override
    public String toString() {
        return id + ": " + from.map(KeyState::label).orElse("none") + " -> "
                + to.map(KeyState::label).orElse("none");
    }
}

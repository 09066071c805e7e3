package io.brine.store.policy;

import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import java.security.interfaces.RSAPublicKey;
import java.time.Instant;
import java.util.Map;

/** Auth attempts and a clock that tests move by hand. */
final class Attempts {

    static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

    private Attempts() {}

    static RSAPublicKey key(int index) {
        return (RSAPublicKey) TestKeys.pair(index).getPublic();
    }

    static String fingerprint(int index) {
        return Fingerprints.of(key(index));
    }

    static AuthAttempt attempt(String id, int keyIndex) {
        return attempt(id, keyIndex, Map.of(), null, null, "10.0.0.5");
    }

    static AuthAttempt attempt(
            String id, int keyIndex, Map<String, Object> claims, byte[] grant, String token, String from) {
        return new AuthAttempt(id, key(keyIndex), fingerprint(keyIndex), claims, grant, token, from, T0);
    }
}

package io.brine.store.policy;

import java.security.interfaces.RSAPublicKey;
import java.time.Instant;
import java.util.Map;

/**
 * Everything an acceptance policy may look at: the id, the key that proved itself, and the minion's claims, which
 * are claims and never authority unless signed by a trusted provisioner.
 */
public record AuthAttempt(String id, RSAPublicKey publicKey, String fingerprint, Map<String, Object> claims,
        byte[] grant, String token, String remoteAddress, Instant time) {

    @Override
    public String toString() {
        return "AuthAttempt[id=" + id + ", fingerprint=" + fingerprint + ", from=" + remoteAddress + "]";
    }
}

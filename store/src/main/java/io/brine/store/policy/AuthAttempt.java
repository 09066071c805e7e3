package io.brine.store.policy;

import java.security.interfaces.RSAPublicKey;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Everything an acceptance policy may look at: the id, the key that proved itself, and the minion's claims, which
 * are claims and never authority unless signed by a trusted provisioner. The claim {@value #ID_CLAIM} is always the
 * id the request is for, whatever the minion sent under that name: identity is never a claim.
 */
public record AuthAttempt(
        String id,
        RSAPublicKey publicKey,
        String fingerprint,
        Map<String, Object> claims,
        byte[] grant,
        String token,
        String remoteAddress,
        Instant time) {

    /** The claim (Salt's grain) that names the minion. */
    public static final String ID_CLAIM = "id";

    public AuthAttempt {
        if (claims != null && claims.containsKey(ID_CLAIM) && !Objects.equals(claims.get(ID_CLAIM), id)) {
            Map<String, Object> own = new LinkedHashMap<>(claims);
            own.put(ID_CLAIM, id);
            claims = Collections.unmodifiableMap(own);
        }
    }

    @Override
    public String toString() {
        return "AuthAttempt[id=" + id + ", fingerprint=" + fingerprint + ", from=" + remoteAddress + "]";
    }
}

package io.brine.protocol.message;

import java.util.Map;

/**
 * A minion offers its public key, signed with its private key so that only the key's holder can offer it.
 *
 * @param suite       crypto suite, {@link Suite#RSA_OAEP_PSS_AES256GCM}
 * @param id          the minion id it asks for (validated by the receiver with {@code MinionIds})
 * @param publicKey   its RSA public key, X.509 SubjectPublicKeyInfo DER
 * @param nonce       32 fresh random bytes; the reply must echo them
 * @param timestampMs the minion's clock, epoch milliseconds
 * @param claims      grains and other self-descriptions: claims, never authority
 * @param grant       a provisioning grant signed by a trusted provisioner, or null
 * @param token       a pre-shared autosign token, or null; secret, never printed
 */
public record AuthRequest(
        int suite,
        String id,
        byte[] publicKey,
        byte[] nonce,
        long timestampMs,
        Map<String, Object> claims,
        byte[] grant,
        String token)
        implements Message.ToMaster {

    public AuthRequest {
        claims = claims == null ? Map.of() : Copies.map(claims);
    }

    @Override
    public FrameType type() {
        return FrameType.AUTH_REQUEST;
    }

    @Override
    public ToMaster.Kind toMaster() {
        return ToMaster.Kind.AUTH_REQUEST;
    }

    @Override
    public String toString() {
        return "AuthRequest[id=" + id + ", suite=" + suite + ", claims=" + claims.keySet() + ", grant="
                + (grant != null) + ", token=" + (token != null ? "[redacted]" : "none") + "]";
    }
}

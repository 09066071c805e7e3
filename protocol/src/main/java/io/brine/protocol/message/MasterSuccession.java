package io.brine.protocol.message;

import java.util.Arrays;

/**
 * A master key rotation's record (PROTOCOL.md 6.4): {@code nextKey} succeeds {@code previousKey}, signed by the
 * previous key's private key and, where an offline signing key is configured, by that key too. The master keeps
 * answering with the previous key's signature on publications until {@code graceUntilMs}.
 *
 * @param previousKey       the key being replaced, SPKI DER
 * @param nextKey           its successor, SPKI DER
 * @param issuedMs          when the rotation was made, epoch milliseconds
 * @param graceUntilMs      until when the master still signs publications with the previous key
 * @param previousSignature RSA-PSS by the previous key over the record's bytes; null when only the signing key signed
 *                          (a compromised key replaced offline)
 * @param signingSignature  RSA-PSS by the offline signing key over the same bytes; null when none signed
 */
public record MasterSuccession(
        byte[] previousKey,
        byte[] nextKey,
        long issuedMs,
        long graceUntilMs,
        byte[] previousSignature,
        byte[] signingSignature) {

    public MasterSuccession {
        if (previousSignature == null && signingSignature == null) {
            throw new IllegalArgumentException("a succession record is signed by the previous key or the signing key");
        }
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof MasterSuccession o
                && Arrays.equals(previousKey, o.previousKey)
                && Arrays.equals(nextKey, o.nextKey)
                && issuedMs == o.issuedMs
                && graceUntilMs == o.graceUntilMs
                && Arrays.equals(previousSignature, o.previousSignature)
                && Arrays.equals(signingSignature, o.signingSignature);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(nextKey) * 31 + Long.hashCode(issuedMs);
    }

    @Override
    public String toString() {
        return "MasterSuccession[issuedMs=" + issuedMs + ", graceUntilMs=" + graceUntilMs + "]";
    }
}

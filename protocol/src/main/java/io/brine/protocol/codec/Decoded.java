package io.brine.protocol.codec;

import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.message.Message;
import java.security.PublicKey;

/** What {@link Codec#decode} made of a frame: a well-formed message, or the reason it is not one. */
public sealed interface Decoded {

    /**
     * A well-formed frame. Well-formed is not authentic: for a signed type the receiver must call {@link #verify}
     * with the key it trusts before acting on the message.
     *
     * @param message       the decoded message
     * @param signedPayload for signed types, the exact payload bytes the signature covers; null for unsigned types
     * @param signature     for signed types, the signature as received (possibly empty); null for unsigned types
     */
    record Ok(Message message, byte[] signedPayload, byte[] signature) implements Decoded {

        /**
         * Whether the signature is {@code signer}'s over the received payload bytes (never re-encoded). False for
         * unsigned types, a missing or empty signature, the wrong key, or any tampering.
         */
        public boolean verify(PublicKey signer) {
            if (signedPayload == null || signature == null || signature.length == 0 || signer == null) {
                return false;
            }
            return Rsa.verify(signer, Codec.signatureInput(message.type(), signedPayload), signature);
        }

        @Override
        public String toString() {
            return "Ok[" + message + (signature != null ? ", signed" : "") + "]";
        }
    }

    /** Not a brine frame; {@code reason} is safe to log and never quotes the input. */
    record Malformed(String reason) implements Decoded {}
}

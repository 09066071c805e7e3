package io.brine.protocol.codec;

import io.brine.protocol.message.Message;
import java.security.PublicKey;

/**
 * A decoded message of a signed type, with the frame it came in, so that its receiver can check the signature
 * against the key it trusts. Well-formed is not authentic: nothing is concluded from {@code message} before
 * {@link #by}.
 */
public record Signed<M extends Message>(M message, Decoded.Ok frame) {

    /** Whether the frame is signed by {@code signer} (false when unsigned, or for a null key). */
    public boolean by(PublicKey signer) {
        return frame.verify(signer);
    }
}

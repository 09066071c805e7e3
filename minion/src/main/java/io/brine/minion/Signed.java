package io.brine.minion;

import io.brine.protocol.codec.Decoded;
import io.brine.protocol.message.Message;
import java.security.PublicKey;

/**
 * A decoded message of a signed type, with the frame it came in, so that a part can check the signature against
 * the key it trusts. Well-formed is not authentic: nothing is concluded from {@code message} before {@link #by}.
 */
record Signed<M extends Message>(M message, Decoded.Ok frame) {

    /** Whether the frame is signed by {@code signer} (false when unsigned, or for a null key). */
    boolean by(PublicKey signer) {
        return frame.verify(signer);
    }
}

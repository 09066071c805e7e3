package io.brine.protocol.codec;

/**
 * Bytes that are not a well-formed brine frame, inner message or publish load. The message names the field and the
 * problem and is safe to log: it never quotes the offending bytes.
 */
public final class MalformedException extends Exception {

    public MalformedException(String reason) {
        super(reason, null, false, false);
    }
}

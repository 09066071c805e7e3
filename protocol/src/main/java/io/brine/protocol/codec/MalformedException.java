package io.brine.protocol.codec;

/**
 * Bytes that are not a well-formed brine frame, inner message or publish load. The message names the field and the
 * problem and is safe to log: it never quotes the offending bytes.
 */
public class MalformedException extends Exception {

    public MalformedException(String reason) {
        super(reason, null, false, false);
    }

    /**
     * An authentic session message of another direction than the receiver's (PROTOCOL.md 6.1). Its message names
     * only the type and the receiver, so a receiver may log it as its reason.
     */
    public static final class WrongDirection extends MalformedException {

        public WrongDirection(String reason) {
            super(reason);
        }
    }
}

package io.brine.protocol;

/** An id failed {@link MinionIds#requireValid}; the message says why and is safe to print. */
public final class InvalidIdException extends IllegalArgumentException {

    public InvalidIdException(String message) {
        super(message);
    }
}

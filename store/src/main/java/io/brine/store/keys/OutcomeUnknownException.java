package io.brine.store.keys;

import java.io.IOException;

/**
 * A change was sent and its answer lost (a cluster connection lost during the commit): it may or may not have been
 * made. Whoever reports it must say so, never "nothing changed".
 */
public final class OutcomeUnknownException extends IOException {

    public OutcomeUnknownException(String message, Throwable cause) {
        super(message, cause);
    }
}

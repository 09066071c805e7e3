package io.brine.protocol.grant;

/** A grant that is not well-formed. The message names the problem and never quotes the grant's bytes. */
public final class GrantException extends Exception {

    public GrantException(String message) {
        super(message, null, false, false);
    }
}

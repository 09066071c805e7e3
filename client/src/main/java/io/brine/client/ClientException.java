package io.brine.client;

/** A publisher-side failure with a message fit for a person: cannot connect, refused, timed out. */
public final class ClientException extends Exception {

    public ClientException(String message) {
        super(message);
    }

    public ClientException(String message, Throwable cause) {
        super(message, cause);
    }
}

package io.brine.client;

/** A publisher-side failure with a message fit for a person: cannot connect, refused, timed out. */
public class ClientException extends Exception {

    public ClientException(String message) {
        super(message);
    }

    public ClientException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The master refused the request and says why: a refused job runs nowhere. */
    public static final class Refused extends ClientException {
        public Refused(String message) {
            super(message);
        }
    }

    /**
     * The master cannot be trusted or will not have this publisher: its answer is not signed by the expected key, or
     * it refused the publisher's key. Trying again does not help.
     */
    public static final class Untrusted extends ClientException {
        public Untrusted(String message) {
            super(message);
        }
    }
}

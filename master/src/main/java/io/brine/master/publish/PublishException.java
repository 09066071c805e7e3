package io.brine.master.publish;

/** A publication refused before anything was sent: bad target, not allowed, nothing to send it with. */
public final class PublishException extends Exception {

    public PublishException(String message) {
        super(message);
    }
}

package io.brine.protocol.targeting;

/** A target expression that cannot be parsed; the message says where and why. */
public final class TargetException extends IllegalArgumentException {

    public static final int MAX_EXPRESSION = 4096;

    public TargetException(String message) {
        super(message);
    }
}

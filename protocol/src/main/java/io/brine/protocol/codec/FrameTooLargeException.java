package io.brine.protocol.codec;

/**
 * A message that would encode to a frame over {@link FrameLimits#MAX_FRAME}, which no peer accepts: the caller's
 * input is too large, and the caller says so before anything is sent.
 */
public final class FrameTooLargeException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final int size;

    FrameTooLargeException(String what, int size) {
        super("refusing to encode " + what + ": frame of " + size + " bytes exceeds the limit of "
                + FrameLimits.MAX_FRAME);
        this.size = size;
    }

    /** The frame's size in bytes. */
    public int size() {
        return size;
    }
}

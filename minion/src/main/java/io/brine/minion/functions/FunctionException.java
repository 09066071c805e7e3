package io.brine.minion.functions;

/**
 * How a function says it failed: the message becomes the job's return value and {@code retcode} its retcode, so
 * the publisher sees a reason and not a stack trace.
 */
public class FunctionException extends Exception {

    private final int retcode;

    /** @param retcode non-zero (0 would read as success, so it becomes 1) */
    public FunctionException(String message, int retcode) {
        super(message);
        this.retcode = retcode == 0 ? FunctionResult.ERROR : retcode;
    }

    /** A failure with retcode 1. */
    public FunctionException(String message) {
        this(message, FunctionResult.ERROR);
    }

    public int retcode() {
        return retcode;
    }
}

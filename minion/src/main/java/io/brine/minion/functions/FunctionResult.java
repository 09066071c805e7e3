package io.brine.minion.functions;

/**
 * What running a function came to: a msgpack-friendly value and a retcode; as in Salt a job succeeded exactly
 * when its retcode is 0. Functions may return one to set a retcode along with a normal value.
 *
 * @param value   the return value (the message, when the function failed)
 * @param retcode 0 for success
 */
public record FunctionResult(Object value, int retcode) {

    /** Any failure without a more specific code: an exception, bad arguments. */
    public static final int ERROR = 1;
    /** The minion is running as many jobs as it may and its queue is full (sysexits' EX_TEMPFAIL: retry later). */
    public static final int BUSY = 75;
    /** The job ran past its timeout and was interrupted (the code timeout(1) uses). */
    public static final int TIMEOUT = 124;
    /** A command could not be started: not found, not executable (the shell's code). */
    public static final int NOT_FOUND = 127;
    /** The function exists but this minion's {@code functions} allow/deny lists refuse it. */
    public static final int DENIED = 253;
    /** No function of that name on this minion (Salt's "is not available"). */
    public static final int UNKNOWN = 254;

    public static FunctionResult success(Object value) {
        return new FunctionResult(value, 0);
    }

    public static FunctionResult failure(String message, int retcode) {
        return new FunctionResult(message, retcode == 0 ? ERROR : retcode);
    }

    public boolean success() {
        return retcode == 0;
    }
}

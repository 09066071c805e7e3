package io.brine.keytool;

/** A mistake of the user or of the configuration: one line on stderr, no stack trace, a non-zero exit. */
final class UserError extends RuntimeException {

    static final int REFUSED = 1;
    static final int USAGE = 2;
    /** The cluster's ZooKeeper ensemble cannot be reached or has no quorum: nothing changed, try again later. */
    static final int UNAVAILABLE = 4;

    private final int exitCode;

    UserError(int exitCode, String message) {
        super(message, null, false, false);
        this.exitCode = exitCode;
    }

    static UserError usage(String message) {
        return new UserError(USAGE, message);
    }

    int exitCode() {
        return exitCode;
    }
}

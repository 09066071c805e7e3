package io.brine.store.keys;

/**
 * A file in a state directory that the store does not act on: a name that is not a valid id, content that is not
 * a valid public key, a symbolic link, or an id present in two exclusive states. {@code file} is relative to the
 * pki dir and safe to print.
 */
public record KeyProblem(String file, String reason) {

    @Override
    public String toString() {
        return file + ": " + reason;
    }
}

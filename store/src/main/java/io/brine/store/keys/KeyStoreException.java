package io.brine.store.keys;

/**
 * The key store refuses its pki dir: an unsafe permission, a symbolic link where a file or directory must be, a
 * master key that cannot be read. The message names the path and is meant for an admin.
 */
public final class KeyStoreException extends Exception {

    public KeyStoreException(String message) {
        super(message);
    }

    public KeyStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}

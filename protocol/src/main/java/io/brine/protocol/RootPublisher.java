package io.brine.protocol;

/**
 * The local administrator as a publisher (PROTOCOL.md 8.7): the name it signs in with and the file in the master's
 * {@code cachedir} holding its private key (Salt's {@code .root_key}), which only the master's user can read. The
 * master writes and checks the key; {@code brine} and {@code BrineClient.connectLocal} read it.
 */
public final class RootPublisher {

    /** The publisher name the holder of {@link #KEY_FILE} signs in with. */
    public static final String NAME = "root";

    /** The root publisher's private key, in the master's {@code cachedir}. */
    public static final String KEY_FILE = "root.pem";

    private RootPublisher() {}
}

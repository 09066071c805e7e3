package io.brine.protocol.salt;

/**
 * Bounds on what one decoded Salt message may hold, so that a hostile peer (before auth as much as after) can make
 * the reader neither run out of memory nor out of stack: the input size, how deeply containers nest, and how many
 * values the whole tree has. Every bound is refused with a {@link io.brine.protocol.codec.MalformedException}.
 */
public record SaltLimits(int maxBytes, int maxDepth, int maxElements, boolean opaqueExtensions) {

    /**
     * What a peer may send before it holds a session: a recorded {@code _auth} request with its token is 858 bytes
     * (a 4096-bit key and {@code autosign_grains} make it larger), a TCP frame adds its head.
     */
    public static final SaltLimits UNAUTHENTICATED = new SaltLimits(64 * 1024, 16, 4_096);

    /** A session request (a job's return, a pillar request carrying all grains) or a publication. */
    public static final SaltLimits SESSION = new SaltLimits(8 * 1024 * 1024, 100, 1_000_000);

    /**
     * The load of a session request once its MAC has verified (only a holder of the minion's session key gets a load
     * read with these): as {@link #SESSION}, and msgpack extension values (Salt's datetime, which a minion's opts
     * carry in {@code _master_tops}) are read as their bytes, which brine never interprets.
     */
    public static final SaltLimits SESSION_LOAD = new SaltLimits(8 * 1024 * 1024, 100, 1_000_000, true);

    /** Extension values refused. */
    public SaltLimits(int maxBytes, int maxDepth, int maxElements) {
        this(maxBytes, maxDepth, maxElements, false);
    }

    public SaltLimits {
        if (maxBytes < 1 || maxDepth < 1 || maxElements < 1) {
            throw new IllegalArgumentException("every limit must be positive");
        }
    }
}

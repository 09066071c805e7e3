package io.brine.master.salt;

import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;

/**
 * The Salt side of the master's inbound path (SALT.md): the dispatcher hands it every frame in Salt's TCP framing and
 * every payload on brine's framing that it {@linkplain #claims claims}. {@link SaltFrames} serves stock Salt minions
 * ({@code salt_minions: true}); {@link #off} claims nothing and refuses Salt's TCP framing, so brine's codec judges
 * every payload.
 */
public interface SaltInbound {

    /** The dispatcher's lanes, through which a Salt request reaches a worker or is dropped. */
    interface Lanes {

        /**
         * Rate-limited per source like an auth request, then queued with the other unauthenticated frames; true when
         * a worker took it (and will tell the transport it is handled).
         */
        boolean unauthenticated(Peer from, int size, Runnable task);

        /** Queued with the session frames; true when a worker took it. */
        boolean session(Peer from, int size, Runnable task);

        /** Counts and logs a frame dropped before a handler saw it. */
        void drop(Peer from, String reason);
    }

    /** Whether {@code payload}, on brine's framing (the ZeroMQ request channel), is Salt's to read. */
    boolean claims(byte[] payload);

    /**
     * Takes a payload it {@linkplain #claims claims} or a frame in Salt's TCP framing; true when a worker took it (and
     * will tell the transport it is handled), false when the caller must.
     */
    boolean onFrame(Peer from, byte[] frame, Lanes lanes);

    /** Without {@code salt_minions}: no payload is Salt's, and a peer in Salt's TCP framing loses its connection. */
    static SaltInbound off(ServerTransport transport) {
        return new SaltInbound() {
            @Override
            public boolean claims(byte[] payload) {
                return false;
            }

            @Override
            public boolean onFrame(Peer from, byte[] frame, Lanes lanes) {
                lanes.drop(from, "Salt TCP frame while salt_minions is off");
                transport.disconnect(from);
                return false;
            }
        };
    }
}

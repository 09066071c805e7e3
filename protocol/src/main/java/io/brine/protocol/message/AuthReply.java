package io.brine.protocol.message;

import java.util.List;

/**
 * The master's signed answer to an {@link AuthRequest}, bound to that request's nonce.
 *
 * @param suite             crypto suite
 * @param status            the decision
 * @param nonce             the request's nonce, echoed
 * @param timestampMs       the master's clock, epoch milliseconds
 * @param masterPublicKey   the master's RSA public key, SPKI DER (minions pin it)
 * @param reason            human-readable reason, for logs
 * @param retryAfterSeconds when not accepted: how long the minion should wait before asking again (0: its own)
 * @param session           present only when {@code status} is ACCEPTED
 * @param masterChain       the master's key rotations, oldest first (PROTOCOL.md 6.4); empty before the first
 */
public record AuthReply(
        int suite,
        AuthStatus status,
        byte[] nonce,
        long timestampMs,
        byte[] masterPublicKey,
        String reason,
        int retryAfterSeconds,
        Session session,
        List<MasterSuccession> masterChain)
        implements Message.ToPeer {

    public AuthReply {
        if ((status == AuthStatus.ACCEPTED) != (session != null)) {
            throw new IllegalArgumentException("a session comes with ACCEPTED and only then");
        }
        masterChain = List.copyOf(masterChain);
    }

    /** A reply of a master whose key was never rotated: no chain. */
    public AuthReply(
            int suite,
            AuthStatus status,
            byte[] nonce,
            long timestampMs,
            byte[] masterPublicKey,
            String reason,
            int retryAfterSeconds,
            Session session) {
        this(suite, status, nonce, timestampMs, masterPublicKey, reason, retryAfterSeconds, session, List.of());
    }

    @Override
    public FrameType type() {
        return FrameType.AUTH_REPLY;
    }

    @Override
    public ToPeer.Kind toPeer() {
        return ToPeer.Kind.AUTH_REPLY;
    }

    /**
     * What an accepted minion receives.
     *
     * @param sessionId         16 random bytes naming the minion's session in every {@link SessionFrame}
     * @param generation        the publish key's generation
     * @param wrappedPublishKey the generation's publish key, RSA-OAEP-wrapped for the minion's public key
     * @param wrappedRequestKey the minion's own request key, RSA-OAEP-wrapped for its public key
     * @param publishPort       where to subscribe (ZeroMQ PUB port), 0 when publications come on this connection
     * @param serialFloor       the last serial the master used: accept only publications above it
     */
    public record Session(
            byte[] sessionId,
            long generation,
            byte[] wrappedPublishKey,
            byte[] wrappedRequestKey,
            int publishPort,
            long serialFloor) {

        @Override
        public String toString() {
            return "Session[generation=" + generation + ", publishPort=" + publishPort + ", serialFloor=" + serialFloor
                    + "]";
        }
    }

    @Override
    public String toString() {
        return "AuthReply[status=" + status + ", reason=" + reason + ", retryAfter=" + retryAfterSeconds
                + (session != null ? ", " + session : "") + "]";
    }
}

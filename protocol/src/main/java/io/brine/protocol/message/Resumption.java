package io.brine.protocol.message;

/**
 * Session resumption's frames (PROTOCOL.md 8.9): a minion accepted by a full auth holds a ticket that only masters
 * can open and the secret it names, and after a master restart or a failover asks for a new session with them, with
 * no RSA operation on either side. They are outer frames of their own (type bytes {@link #REQUEST}, {@link #REPLY},
 * {@link #TICKET}, {@link #TICKET_REQUEST}), read by {@code Resumptions}, not by the {@link Message} codec. A minion
 * asks for its ticket, so that a master never sends an older minion a frame it does not know.
 */
public sealed interface Resumption permits Resumption.ToMaster, Resumption.ToMinion {

    /** Minion to master: a ticket and the proof of its secret. */
    int REQUEST = 0x07;
    /** Master to minion: the new session sealed under a key derived from the secret, or a refusal. */
    int REPLY = 0x08;
    /** Master to minion, asked by a {@link TicketRequest}: a ticket and its secret, sealed under the request key. */
    int TICKET = 0x09;
    /** Minion to master, once a full auth opened its session: asks for a ticket, sealed under the request key. */
    int TICKET_REQUEST = 0x0a;

    /** The type byte that follows the version byte. */
    int type();

    /** Minion to master: {@link Request}, {@link TicketRequest}. The codec refuses the others at the master. */
    sealed interface ToMaster extends Resumption permits Request, TicketRequest {}

    /** Master to minion: {@link Reply}, {@link Ticket}. The codec refuses the others at a minion. */
    sealed interface ToMinion extends Resumption permits Reply, Ticket {}

    /**
     * @param id          the minion id the ticket was given to
     * @param ticket      the ticket as the master gave it (opaque to the minion)
     * @param nonce       32 fresh random bytes; the reply's key is derived with them
     * @param timestampMs the minion's clock, epoch milliseconds
     * @param proof       HMAC-SHA256 under the ticket's secret over everything above
     */
    record Request(String id, byte[] ticket, byte[] nonce, long timestampMs, byte[] proof) implements ToMaster {
        @Override
        public int type() {
            return REQUEST;
        }

        @Override
        public String toString() {
            return "Resumption.Request[id=" + id + "]";
        }
    }

    /**
     * @param nonce the request's nonce, echoed
     * @param box   the {@link Resumed} session sealed under the key derived from the secret and the nonce; null for a
     *              refusal, which is not authenticated and only ever makes the minion authenticate in full
     */
    record Reply(byte[] nonce, byte[] box) implements ToMinion {
        @Override
        public int type() {
            return REPLY;
        }

        public boolean refused() {
            return box == null;
        }

        @Override
        public String toString() {
            return "Resumption.Reply[" + (refused() ? "refused" : "resumed") + "]";
        }
    }

    /**
     * @param sessionId the session whose minion asks
     * @param box       the minion's clock, sealed under that session's request key: only the minion can ask
     */
    record TicketRequest(byte[] sessionId, byte[] box) implements ToMaster {
        @Override
        public int type() {
            return TICKET_REQUEST;
        }

        @Override
        public String toString() {
            return "Resumption.TicketRequest";
        }
    }

    /**
     * @param sessionId the session whose request key sealed {@code box}
     * @param box       a {@link Grant}, sealed under that session's request key
     */
    record Ticket(byte[] sessionId, byte[] box) implements ToMinion {
        @Override
        public int type() {
            return TICKET;
        }

        @Override
        public String toString() {
            return "Resumption.Ticket";
        }
    }

    /**
     * What a minion holds to resume: the ticket, when it expires (the master's clock), and its secret.
     */
    record Grant(byte[] ticket, long expiresMs, byte[] secret) {
        @Override
        public String toString() {
            return "Resumption.Grant[expiresMs=" + expiresMs + "]";
        }
    }

    /**
     * A resumed session, what a {@link Reply}'s box holds: as an accepted auth reply's session, with the keys in
     * clear (the box is the protection), and the next ticket.
     */
    record Resumed(
            byte[] sessionId,
            long generation,
            byte[] publishKey,
            byte[] requestKey,
            int publishPort,
            long serialFloor,
            Grant next) {
        @Override
        public String toString() {
            return "Resumption.Resumed[generation=" + generation + ", publishPort=" + publishPort + "]";
        }
    }

    /**
     * What a ticket holds, sealed under a ticket key that only masters hold.
     *
     * @param id          the minion id
     * @param fingerprint the fingerprint of the key it was accepted with
     * @param generation  the publish key generation when the ticket was made
     * @param issuedMs    when the full auth it descends from was answered
     * @param expiresMs   when it stops being honoured: at most 24 h after {@code issuedMs}
     * @param secret      the 32-byte resumption secret
     */
    record Contents(String id, String fingerprint, long generation, long issuedMs, long expiresMs, byte[] secret) {
        @Override
        public String toString() {
            return "Resumption.Contents[id=" + id + ", expiresMs=" + expiresMs + "]";
        }
    }
}

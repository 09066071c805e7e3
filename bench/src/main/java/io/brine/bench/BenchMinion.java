package io.brine.bench;

import io.brine.transport.ClientTransport;
import java.io.IOException;
import java.util.function.Consumer;

/**
 * What a swarm worker ({@link SwarmWorker}) drives in one simulated minion, whichever protocol it speaks: brine's
 * ({@link SimMinion}) or a stock Salt minion's ({@link SaltSimMinion}, {@code --protocol salt}).
 */
interface BenchMinion {

    /** Opens its request connection. */
    void connect(ClientTransport transport) throws IOException;

    /** Signs (or builds) a fresh auth request now, to be sent by {@link #sendAuth}. */
    void prepareAuth();

    /** Sends the prepared request (preparing one first if there is none). */
    void sendAuth(long nanos);

    /** Forgets the session, as a minion does after a master restart, so that {@link #sendAuth} starts anew. */
    void resetSession();

    /** Whether {@link #sendAuth} resumes with the ticket it holds (brine) or authenticates in full (the default). */
    default void useTickets(boolean use) {}

    /**
     * Whether it rejoins by itself when its connection comes back with a session open (brine: resumes, or authenticates
     * in full, as a real minion does after a master restart), or ignores reconnections (the default).
     */
    default void rejoinOnReconnect(boolean rejoin) {}

    /** Whether it holds a resumption ticket (brine, PROTOCOL.md 8.9). */
    default boolean holdsTicket() {
        return false;
    }

    boolean accepted();

    long authSentNanos();

    boolean awaitingReply();

    /** Opens the session keys of its accepted reply with its private key; false if they do not open. */
    boolean unwrap();

    /** Whatever the minion sends periodically, when due. */
    void heartbeatIfDue(long nowMs);

    /** The publish key generation it holds (brine); -1 where the protocol has none. */
    long generation();

    long keyInstalledNanos();

    void close();

    /** The transport listener of a simulated minion: replies and publications to the given methods. */
    static ClientTransport.Listener listener(Consumer<byte[]> replies, Consumer<byte[]> publications) {
        return listener(replies, publications, () -> {});
    }

    /** As {@link #listener(Consumer, Consumer)}, and each connection that comes up to {@code connected}. */
    static ClientTransport.Listener listener(
            Consumer<byte[]> replies, Consumer<byte[]> publications, Runnable connected) {
        return new ClientTransport.Listener() {
            @Override
            public void onConnected() {
                connected.run();
            }

            @Override
            public void onReply(byte[] frame) {
                replies.accept(frame);
            }

            @Override
            public void onPublication(byte[] frame) {
                publications.accept(frame);
            }
        };
    }
}

package io.brine.transport.server;

import io.brine.transport.Peer;

/**
 * A connection as the master's handlers see it: equal by connection (identity), so a reconnection is a new peer,
 * and nothing the peer sends (a ZMTP Identity, an id field) can take over another connection's replies.
 */
final class ServerPeer implements Peer {

    private final ServerConnection connection;

    ServerPeer(ServerConnection connection) {
        this.connection = connection;
    }

    ServerConnection connection() {
        return connection;
    }

    @Override
    public String remoteAddress() {
        return connection.remoteAddress();
    }

    @Override
    public String transportName() {
        return connection.transportName();
    }

    @Override
    public Framing framing() {
        return connection.framing();
    }

    @Override
    public String toString() {
        return "Peer[" + connection + "]";
    }
}

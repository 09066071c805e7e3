package io.brine.transport.tcp;

import io.brine.transport.Peer;

/** A minion's TCP connection: equal by connection (identity), so a reconnection is a new peer. */
final class TcpPeer implements Peer {

    private final TcpConnection connection;

    TcpPeer(TcpConnection connection) {
        this.connection = connection;
    }

    TcpConnection connection() {
        return connection;
    }

    @Override
    public String transportName() {
        return "tcp";
    }

    @Override
    public String remoteAddress() {
        return connection.remoteAddress();
    }

    @Override
    public String toString() {
        return "TcpPeer[" + connection.channel().id().asShortText() + "@" + connection.remoteAddress() + "]";
    }
}

package io.brine.transport.zmtp;

import io.brine.transport.Peer;

/**
 * A connection on the request port, as the master sees it: the ROUTER's routing is by connection (identity of this
 * object), so a reconnection is a new peer, and a peer-chosen ZMTP Identity cannot take over another's replies.
 */
final class ZmtpPeer implements Peer {

    private final ZmtpConnection connection;

    ZmtpPeer(ZmtpConnection connection) {
        this.connection = connection;
    }

    ZmtpConnection connection() {
        return connection;
    }

    @Override
    public String transportName() {
        return "zeromq";
    }

    @Override
    public String remoteAddress() {
        return connection.remoteAddress();
    }

    @Override
    public String toString() {
        return "ZmtpPeer[" + connection + "]";
    }
}

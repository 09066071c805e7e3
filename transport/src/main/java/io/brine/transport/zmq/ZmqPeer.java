package io.brine.transport.zmq;

import io.brine.transport.Peer;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * A minion connection on the ROUTER: its routing identity (what replies are addressed by) and its source address.
 * Equal by identity alone, which ZeroMQ keeps unique per live connection.
 */
final class ZmqPeer implements Peer {

    private final byte[] identity;
    private final String remoteAddress;
    /** The peer put an empty delimiter before its frame (a REQ socket): replies must carry one too. */
    private final boolean delimited;

    ZmqPeer(byte[] identity, String remoteAddress, boolean delimited) {
        this.identity = identity.clone();
        this.remoteAddress = remoteAddress;
        this.delimited = delimited;
    }

    /** "ip:port" from ZeroMQ's Peer-Address property to the IP alone; "unknown" when ZeroMQ did not say. */
    static String addressOf(String peerAddress) {
        if (peerAddress == null || peerAddress.isEmpty()) {
            return "unknown";
        }
        int colon = peerAddress.lastIndexOf(':');
        return colon > 0 ? peerAddress.substring(0, colon) : peerAddress;
    }

    /** The identity itself, not a copy: the transport thread only reads it. */
    byte[] identity() {
        return identity;
    }

    boolean delimited() {
        return delimited;
    }

    @Override
    public String remoteAddress() {
        return remoteAddress;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ZmqPeer that && Arrays.equals(identity, that.identity);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(identity);
    }

    @Override
    public String toString() {
        return "ZmqPeer[" + HexFormat.of().formatHex(identity) + "@" + remoteAddress + "]";
    }
}

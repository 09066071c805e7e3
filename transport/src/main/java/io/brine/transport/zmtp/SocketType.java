package io.brine.transport.zmtp;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** ZeroMQ socket types as READY's Socket-Type names them (RFC 23), and which may talk to which. */
public enum SocketType {
    REQ,
    REP,
    DEALER,
    ROUTER,
    PUB,
    XPUB,
    SUB,
    XSUB,
    PUSH,
    PULL,
    PAIR;

    private final byte[] wireName = name().getBytes(StandardCharsets.US_ASCII);

    /**
     * Whether a peer of type {@code peer} may connect to this socket: RFC 23's table, except that brine's ROUTER
     * takes only REQ and DEALER peers (a ROUTER peer is legal ZMTP, but no minion is one).
     */
    public boolean accepts(SocketType peer) {
        return switch (this) {
            case REQ -> peer == REP || peer == ROUTER;
            case REP -> peer == REQ || peer == DEALER;
            case DEALER -> peer == REP || peer == DEALER || peer == ROUTER;
            case ROUTER -> peer == REQ || peer == DEALER;
            case PUB, XPUB -> peer == SUB || peer == XSUB;
            case SUB, XSUB -> peer == PUB || peer == XPUB;
            case PUSH -> peer == PULL;
            case PULL -> peer == PUSH;
            case PAIR -> peer == PAIR;
        };
    }

    /** Whether this is the sending side of publish-subscribe, where subscriptions arrive. */
    boolean publishes() {
        return this == PUB || this == XPUB;
    }

    /** The type a READY names, matched exactly (the grammar is upper case), or null for anything else. */
    static SocketType named(byte[] value) {
        for (SocketType type : values()) {
            if (Arrays.equals(type.wireName, value)) {
                return type;
            }
        }
        return null;
    }

    byte[] wireName() {
        return wireName.clone();
    }
}

package io.brine.protocol.message;

/**
 * A frame on the wire: the request channel (minion to master) and the publish channel (master to minions) carry
 * exactly these. Encoding, limits and the crypto that binds them are in {@code protocol/PROTOCOL.md}.
 */
public sealed interface Message permits AuthRequest, ClientAuth, AuthReply, Publish, SessionFrame,
        SessionUnknown {

    /** The type byte that follows the version byte in a frame. */
    MessageType type();
}

package io.brine.protocol.message;

/**
 * A frame on the wire: the request channel (minion or publisher to master, and the master's answers) and the publish
 * channel (master to minions) carry exactly these. Each travels one way, {@link ToMaster} or {@link ToPeer} (a
 * {@link SessionFrame} both, its direction field saying which); the codec refuses a frame arriving the wrong way as
 * malformed. Encoding, limits and the crypto that binds them are in {@code protocol/PROTOCOL.md}.
 */
public sealed interface Message permits Message.ToMaster, Message.ToPeer {

    /** The type byte that follows the version byte in a frame. */
    FrameType type();

    /** What a master receives: from a minion or a publisher. */
    sealed interface ToMaster extends Message permits AuthRequest, ClientAuth, SessionFrame {

        /** One constant per record, so that a receiver's switch is exhaustive (Java 17 cannot switch on types). */
        enum Kind {
            AUTH_REQUEST,
            CLIENT_AUTH,
            SESSION
        }

        Kind toMaster();
    }

    /** What a minion or a publisher receives from the master. */
    sealed interface ToPeer extends Message permits AuthReply, Publish, SessionUnknown, SessionFrame {

        /** One constant per record, so that a receiver's switch is exhaustive. */
        enum Kind {
            AUTH_REPLY,
            PUBLISH,
            SESSION,
            SESSION_UNKNOWN
        }

        Kind toPeer();
    }
}

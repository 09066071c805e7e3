package io.brine.protocol.message;

import java.util.Optional;

/** Type bytes of outer frames ({@link Message}) and of messages sealed inside a session frame. */
public enum MessageType {
    AUTH_REQUEST(0x01, true),
    AUTH_REPLY(0x02, true),
    PUBLISH(0x03, true),
    SESSION(0x04, false),
    SESSION_UNKNOWN(0x05, true),
    CLIENT_AUTH(0x06, true),
    // 0x07-0x09 are session resumption's frames, read by their own codec: Resumption, Resumptions.

    RETURN(0x10, false),
    GRAINS(0x11, false),
    HEARTBEAT(0x12, false),
    KEY_REQUEST(0x13, false),
    PUBLISH_REQUEST(0x14, false),
    JOB_QUERY(0x15, false),
    EVENTS_SUBSCRIBE(0x16, false),
    KEY_ROTATE(0x17, false),
    ACK(0x20, false),
    KEY_UPDATE(0x21, false),
    HEARTBEAT_REPLY(0x22, false),
    PUBLISH_REPLY(0x23, false),
    RETURN_EVENT(0x24, false),
    JOB_REPLY(0x25, false),
    EVENT(0x26, false),
    KEY_ROTATE_REPLY(0x27, false);

    private final int code;
    private final boolean signed;

    MessageType(int code, boolean signed) {
        this.code = code;
        this.signed = signed;
    }

    public int code() {
        return code;
    }

    /**
     * Whether frames of this type carry a signature (by the minion or publisher for auth requests, else by the
     * master).
     */
    public boolean signed() {
        return signed;
    }

    public static Optional<MessageType> of(int code) {
        for (MessageType type : values()) {
            if (type.code == code) {
                return Optional.of(type);
            }
        }
        return Optional.empty();
    }
}

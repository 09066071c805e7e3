package io.brine.protocol.message;

import java.util.Optional;

/**
 * Type bytes of the messages sealed inside a session frame ({@link SessionMessage}): 0x1N travel to the master, 0x2N
 * from it. Which peer may send or receive each is the record's direction ({@link SessionMessage.FromMinion},
 * {@link SessionMessage.FromPublisher}, {@link SessionMessage.ToMinion}, {@link SessionMessage.ToPublisher}).
 */
public enum SessionType {
    RETURN(0x10),
    GRAINS(0x11),
    HEARTBEAT(0x12),
    KEY_REQUEST(0x13),
    PUBLISH_REQUEST(0x14),
    JOB_QUERY(0x15),
    EVENTS_SUBSCRIBE(0x16),
    KEY_ROTATE(0x17),
    ACK(0x20),
    KEY_UPDATE(0x21),
    HEARTBEAT_REPLY(0x22),
    PUBLISH_REPLY(0x23),
    RETURN_EVENT(0x24),
    JOB_REPLY(0x25),
    EVENT(0x26),
    KEY_ROTATE_REPLY(0x27),
    MASTER_KEY_SUCCESSION(0x28),
    KEY_ROTATE_ASK(0x29);

    private final int code;

    SessionType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static Optional<SessionType> of(int code) {
        for (SessionType type : values()) {
            if (type.code == code) {
                return Optional.of(type);
            }
        }
        return Optional.empty();
    }
}

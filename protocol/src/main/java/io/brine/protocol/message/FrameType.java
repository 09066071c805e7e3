package io.brine.protocol.message;

import java.util.Optional;

/**
 * Type bytes of outer frames ({@link Message}). The messages sealed inside a session frame have their own:
 * {@link SessionType}. Session resumption's frames, 0x07-0x0a, are read by their own codec ({@link Resumption}).
 */
public enum FrameType {
    AUTH_REQUEST(0x01, true),
    AUTH_REPLY(0x02, true),
    PUBLISH(0x03, true),
    SESSION(0x04, false),
    SESSION_UNKNOWN(0x05, true),
    CLIENT_AUTH(0x06, true);

    private final int code;
    private final boolean signed;

    FrameType(int code, boolean signed) {
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

    public static Optional<FrameType> of(int code) {
        for (FrameType type : values()) {
            if (type.code == code) {
                return Optional.of(type);
            }
        }
        return Optional.empty();
    }
}

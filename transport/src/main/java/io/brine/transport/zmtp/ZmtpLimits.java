package io.brine.transport.zmtp;

import java.util.function.IntSupplier;

/**
 * What one connection may send, each read when it is needed (on the event loop), so the transport can raise a
 * connection's limits once its peer is authenticated:
 *
 * @param frame the largest frame body, read as each frame header completes; commands are further held to
 *     {@link #MAX_COMMAND}
 * @param parts the most frames in one message, read as each data frame header completes
 * @param messageBytes the most body bytes in one message (all its frames), read as each data frame header completes
 */
public record ZmtpLimits(IntSupplier frame, IntSupplier parts, IntSupplier messageBytes) {

    /**
     * Commands are control traffic: a READY with a 255-byte identity, a topic, a 16-byte ping context. None needs
     * more than this, whatever a connection's frame limit.
     */
    public static final int MAX_COMMAND = 64 * 1024;

    /** Limits that never change. */
    public static ZmtpLimits fixed(int frame, int parts, int messageBytes) {
        return new ZmtpLimits(() -> frame, () -> parts, () -> messageBytes);
    }
}

package io.brine.transport;

import io.brine.protocol.codec.FrameLimits;
import java.time.Duration;
import java.util.Objects;

/** The checks the transports' option records run in their constructors, with one wording for each failure. */
public final class OptionChecks {

    private OptionChecks() {}

    public static void requirePositive(String name, long value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " must be positive: " + value);
        }
    }

    /** A frame limit: 1 to {@link FrameLimits#MAX_FRAME}. */
    public static void requireFrameLimit(String name, long value) {
        if (value < 1 || value > FrameLimits.MAX_FRAME) {
            throw new IllegalArgumentException(name + " out of range (1 to FrameLimits.MAX_FRAME): " + value);
        }
    }

    /**
     * What the options of the master's transports on Netty have in common, in their records' order: frame limits
     * ({@link #requireFrameLimits}, {@code framing} the bytes around a frame on the wire), water marks, timeouts of
     * 1 ms or more, positive connection caps, a positive backlog, 0 (Netty's default) or more event loop threads.
     */
    public static void requireServer(
            int maxUnauthenticatedFrame,
            int maxFrame,
            long maxQueuedBytes,
            long framing,
            int writeBufferLowWaterMark,
            int writeBufferHighWaterMark,
            Duration unauthenticatedTimeout,
            Duration idleTimeout,
            int maxConnections,
            int maxUnauthenticatedConnections,
            int backlog,
            int ioThreads,
            Object io) {
        requireFrameLimits(maxUnauthenticatedFrame, maxFrame, maxQueuedBytes, framing);
        requireWaterMarks(writeBufferLowWaterMark, writeBufferHighWaterMark);
        requireMillis("unauthenticatedTimeout", unauthenticatedTimeout, 1);
        requireMillis("idleTimeout", idleTimeout, 1);
        requirePositive("maxConnections", maxConnections);
        requirePositive("maxUnauthenticatedConnections", maxUnauthenticatedConnections);
        requirePositive("backlog", backlog);
        if (ioThreads < 0) {
            throw new IllegalArgumentException("ioThreads must be 0 (default) or more: " + ioThreads);
        }
        Objects.requireNonNull(io, "io");
    }

    /**
     * A server's frame limits: {@code maxUnauthenticatedFrame <= maxFrame <= FrameLimits.MAX_FRAME}, both positive,
     * and an outbound queue that holds at least one largest frame with {@code framing} bytes around it.
     */
    private static void requireFrameLimits(
            int maxUnauthenticatedFrame, int maxFrame, long maxQueuedBytes, long framing) {
        requirePositive("maxUnauthenticatedFrame", maxUnauthenticatedFrame);
        requirePositive("maxFrame", maxFrame);
        if (maxFrame > FrameLimits.MAX_FRAME || maxUnauthenticatedFrame > maxFrame) {
            throw new IllegalArgumentException("need maxUnauthenticatedFrame <= maxFrame <= FrameLimits.MAX_FRAME");
        }
        if (maxQueuedBytes < maxFrame + framing) {
            throw new IllegalArgumentException("maxQueuedBytes must hold at least one frame: " + maxQueuedBytes);
        }
    }

    /** Inbound bytes in flight ({@code ServerOptions}): {@code 0 < perConnection <= total}. */
    public static void requireInflight(long total, long perConnection) {
        if (total < 1 || perConnection < 1 || perConnection > total) {
            throw new IllegalArgumentException("need 0 < maxInflightPerConnection <= maxInflightBytes");
        }
    }

    /** Netty's write buffer water marks: the low one positive, the high one not below it. */
    private static void requireWaterMarks(int low, int high) {
        requirePositive("writeBufferLowWaterMark", low);
        if (high < low) {
            throw new IllegalArgumentException("writeBufferHighWaterMark below writeBufferLowWaterMark");
        }
    }

    /** A duration of {@code min} to {@link Integer#MAX_VALUE} milliseconds (what socket options take). */
    public static void requireMillis(String name, Duration value, long min) {
        Objects.requireNonNull(value, name);
        if (value.toMillis() < min || value.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(name + " out of range: " + value);
        }
    }

    /** A back-off: both at least 1 ms, the maximum not below the first wait. */
    public static void requireBackoff(String name, Duration interval, Duration intervalMax) {
        requireMillis(name + "Interval", interval, 1);
        requireMillis(name + "IntervalMax", intervalMax, 1);
        if (intervalMax.compareTo(interval) < 0) {
            throw new IllegalArgumentException(name + "IntervalMax below " + name + "Interval");
        }
    }
}

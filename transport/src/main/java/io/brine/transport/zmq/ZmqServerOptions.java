package io.brine.transport.zmq;

import static io.brine.transport.OptionChecks.requireFrameLimit;
import static io.brine.transport.OptionChecks.requireMillis;
import static io.brine.transport.OptionChecks.requirePositive;

import io.brine.protocol.codec.FrameLimits;
import java.time.Duration;

/**
 * Tuning of {@link ZmqServerTransport}; validated on construction, immutable. Start from {@link #defaults()}.
 *
 * @param publishHighWaterMark publications queued per subscriber connection before {@code publish} reports that
 *     minion undelivered (XPUB send high-water mark; counted in messages, not bytes)
 * @param requestHighWaterMark messages queued per minion connection on the request channel, each way
 * @param maxFrameSize largest frame accepted on the request channel; ZeroMQ drops the connection of a peer that
 *     sends more, before the frame reaches the heap ({@code ZMQ_MAXMSGSIZE})
 * @param heartbeatInterval how often ZMTP heartbeats are sent to each peer; zero (the default) for none. jeromq keeps
 *     a few timers per connection for them and sorts all of a thread's timers on each of its wake-ups, which at
 *     10,000 minions doubled the master's CPU in every scenario and kept an idle master at half a core
 *     (BENCHMARKS.md). Without them a dead peer's connection is closed when TCP keepalive (always on) or a failed
 *     write notices; minions still find a dead master with their own heartbeats
 * @param heartbeatTimeout with heartbeats, a peer silent this long after one is disconnected (also sent as TTL)
 * @param handshakeTimeout a connection that has not completed its ZMTP handshake by then is dropped (bounds idle
 *     unauthenticated connections)
 * @param linger how long close() lets queued outbound messages drain
 * @param mailboxCapacity commands (sends, publications) waiting for the transport thread before calls are refused
 * @param ioThreads ZeroMQ I/O threads carrying the connections. jeromq's I/O thread does work proportional to all
 *     of its connections on every wake-up (it sorts all its timers, a few per connection for ZMTP heartbeats, and
 *     revisits every channel after any interest change), so thousands of minions on one I/O thread cost CPU that
 *     grows with the square of the minions; spreading them over several threads divides that work
 */
public record ZmqServerOptions(
        int publishHighWaterMark,
        int requestHighWaterMark,
        int maxFrameSize,
        Duration heartbeatInterval,
        Duration heartbeatTimeout,
        Duration handshakeTimeout,
        Duration linger,
        int mailboxCapacity,
        int ioThreads) {

    public ZmqServerOptions {
        requirePositive("publishHighWaterMark", publishHighWaterMark);
        requirePositive("requestHighWaterMark", requestHighWaterMark);
        requireFrameLimit("maxFrameSize", maxFrameSize);
        requireMillis("heartbeatInterval", heartbeatInterval, 0);
        requireMillis("heartbeatTimeout", heartbeatTimeout, 1);
        requireMillis("handshakeTimeout", handshakeTimeout, 1);
        requireMillis("linger", linger, 0);
        requirePositive("mailboxCapacity", mailboxCapacity);
        requirePositive("ioThreads", ioThreads);
    }

    /**
     * 100,000 publications per subscriber, 10,000 requests per peer, 8 MiB frames, no ZMTP heartbeats (timeout 30 s
     * if turned on), handshake 10 s, linger 100 ms, 100,000 waiting commands, {@link #DEFAULT_IO_THREADS} I/O
     * threads.
     */
    public static ZmqServerOptions defaults() {
        return new ZmqServerOptions(100_000, 10_000, FrameLimits.MAX_FRAME, Duration.ZERO,
                Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofMillis(100), 100_000, DEFAULT_IO_THREADS);
    }

    /**
     * See {@code ioThreads}: with 5,000 minions on a 2-core machine, 16 I/O threads instead of one cut the master's
     * CPU in jeromq during the first auth by about 2x and when idle by about 1.5x (brine-bench, BENCHMARKS.md).
     * More is not better: 64 instead of 16 at 4,000 minions doubled the master's CPU per test.ping return and per
     * publication (more wake-ups, each a context switch), so 16 stays until jeromq stops rescanning its channels.
     * An idle I/O thread costs a thread and a few descriptors.
     */
    public static final int DEFAULT_IO_THREADS = 16;

    public ZmqServerOptions withIoThreads(int value) {
        return new ZmqServerOptions(publishHighWaterMark, requestHighWaterMark, maxFrameSize, heartbeatInterval,
                heartbeatTimeout, handshakeTimeout, linger, mailboxCapacity, value);
    }

    public ZmqServerOptions withPublishHighWaterMark(int value) {
        return new ZmqServerOptions(value, requestHighWaterMark, maxFrameSize, heartbeatInterval, heartbeatTimeout,
                handshakeTimeout, linger, mailboxCapacity, ioThreads);
    }

    public ZmqServerOptions withRequestHighWaterMark(int value) {
        return new ZmqServerOptions(publishHighWaterMark, value, maxFrameSize, heartbeatInterval, heartbeatTimeout,
                handshakeTimeout, linger, mailboxCapacity, ioThreads);
    }

    public ZmqServerOptions withHeartbeat(Duration interval, Duration timeout) {
        return new ZmqServerOptions(publishHighWaterMark, requestHighWaterMark, maxFrameSize, interval, timeout,
                handshakeTimeout, linger, mailboxCapacity, ioThreads);
    }

    public ZmqServerOptions withMailboxCapacity(int value) {
        return new ZmqServerOptions(publishHighWaterMark, requestHighWaterMark, maxFrameSize, heartbeatInterval,
                heartbeatTimeout, handshakeTimeout, linger, value, ioThreads);
    }

}

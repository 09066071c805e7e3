package io.brine.transport.zmq;

import static io.brine.transport.OptionChecks.requireBackoff;
import static io.brine.transport.OptionChecks.requireFrameLimit;
import static io.brine.transport.OptionChecks.requireMillis;
import static io.brine.transport.OptionChecks.requirePositive;

import io.brine.protocol.codec.FrameLimits;
import java.time.Duration;

/**
 * Tuning of {@link ZmqClientTransport}; validated on construction, immutable. Start from {@link #defaults()}.
 *
 * @param requestHighWaterMark frames queued towards the master, and replies queued from it, before ZeroMQ refuses
 * @param publishHighWaterMark publications queued on the SUB socket before ZeroMQ stops reading (the master then
 *     sees this minion's queue fill up and reports it undelivered)
 * @param maxFrameSize largest frame accepted from the master; ZeroMQ drops the connection on a bigger one
 * @param requestHeartbeatInterval how often the DEALER sends the master a ZMTP PING; {@link Duration#ZERO} (the
 *     default) sends none: the request connection carries the session heartbeat, answered end to end, and the
 *     minion drops the connection ({@link ZmqClientTransport#reconnect()}) when that goes unanswered (ZMTP.md)
 * @param publishHeartbeatInterval how often the SUB sends the master a ZMTP PING; {@code ZERO} sends none. The
 *     publish connection is quiet between jobs: this keeps NAT state alive and finds a dead master. Keep it below
 *     the master's ping point (half its idle timeout, 60 s by default) so that the master never pings it
 * @param heartbeatTimeout the master silent this long after a PING counts as a lost connection; shorter than each
 *     heartbeat interval that is not {@code ZERO}, else jeromq 0.5.4 (and 0.6.0) may never time the PING out and
 *     keeps a dead connection (ZMTP.md "Heartbeats, minion side")
 * @param handshakeTimeout a ZMTP handshake not done by then is dropped and retried (jeromq 0.6.0 sometimes left a
 *     fresh connection waiting for this timer, which is one reason the build pins 0.5.4)
 * @param reconnectInterval the first wait before reconnecting (ZeroMQ moves each wait by up to this much either way at
 *     random)
 * @param reconnectIntervalMax the wait doubles after each failed attempt up to this
 * @param linger how long close() lets queued outbound frames drain
 * @param mailboxCapacity calls waiting for the transport thread before {@code send} returns false
 */
public record ZmqClientOptions(
        int requestHighWaterMark,
        int publishHighWaterMark,
        int maxFrameSize,
        Duration requestHeartbeatInterval,
        Duration publishHeartbeatInterval,
        Duration heartbeatTimeout,
        Duration handshakeTimeout,
        Duration reconnectInterval,
        Duration reconnectIntervalMax,
        Duration linger,
        int mailboxCapacity) {

    public ZmqClientOptions {
        requirePositive("requestHighWaterMark", requestHighWaterMark);
        requirePositive("publishHighWaterMark", publishHighWaterMark);
        requireFrameLimit("maxFrameSize", maxFrameSize);
        requireMillis("requestHeartbeatInterval", requestHeartbeatInterval, 0);
        requireMillis("publishHeartbeatInterval", publishHeartbeatInterval, 0);
        requireMillis("heartbeatTimeout", heartbeatTimeout, 1);
        requireTimeoutBelow("requestHeartbeatInterval", requestHeartbeatInterval, heartbeatTimeout);
        requireTimeoutBelow("publishHeartbeatInterval", publishHeartbeatInterval, heartbeatTimeout);
        requireMillis("handshakeTimeout", handshakeTimeout, 1);
        requireBackoff("reconnect", reconnectInterval, reconnectIntervalMax);
        requireMillis("linger", linger, 0);
        requirePositive("mailboxCapacity", mailboxCapacity);
    }

    /**
     * 10,000 requests, 100,000 publications, 8 MiB frames, ZMTP heartbeats none on the request connection and
     * every 45 s on the publish connection (timeout 30 s), handshake 3 s, reconnect 1 s up to 5 s (a master that comes
     * back sees every minion within 6 s; BENCHMARKS.md, the restart at 10,000), linger 100 ms.
     */
    public static ZmqClientOptions defaults() {
        return new ZmqClientOptions(
                10_000,
                100_000,
                FrameLimits.MAX_FRAME,
                Duration.ZERO,
                Duration.ofSeconds(45),
                Duration.ofSeconds(30),
                Duration.ofSeconds(3),
                Duration.ofSeconds(1),
                Duration.ofSeconds(5),
                Duration.ofMillis(100),
                10_000);
    }

    public ZmqClientOptions withReconnect(Duration interval, Duration intervalMax) {
        return new ZmqClientOptions(
                requestHighWaterMark,
                publishHighWaterMark,
                maxFrameSize,
                requestHeartbeatInterval,
                publishHeartbeatInterval,
                heartbeatTimeout,
                handshakeTimeout,
                interval,
                intervalMax,
                linger,
                mailboxCapacity);
    }

    /** ZMTP heartbeat intervals of the request (DEALER) and publish (SUB) sockets, {@code ZERO} for none. */
    public ZmqClientOptions withHeartbeat(Duration request, Duration publish, Duration timeout) {
        return new ZmqClientOptions(
                requestHighWaterMark,
                publishHighWaterMark,
                maxFrameSize,
                request,
                publish,
                timeout,
                handshakeTimeout,
                reconnectInterval,
                reconnectIntervalMax,
                linger,
                mailboxCapacity);
    }

    public ZmqClientOptions withHandshakeTimeout(Duration timeout) {
        return new ZmqClientOptions(
                requestHighWaterMark,
                publishHighWaterMark,
                maxFrameSize,
                requestHeartbeatInterval,
                publishHeartbeatInterval,
                heartbeatTimeout,
                timeout,
                reconnectInterval,
                reconnectIntervalMax,
                linger,
                mailboxCapacity);
    }

    public ZmqClientOptions withLinger(Duration value) {
        return new ZmqClientOptions(
                requestHighWaterMark,
                publishHighWaterMark,
                maxFrameSize,
                requestHeartbeatInterval,
                publishHeartbeatInterval,
                heartbeatTimeout,
                handshakeTimeout,
                reconnectInterval,
                reconnectIntervalMax,
                value,
                mailboxCapacity);
    }

    public ZmqClientOptions withPublishHighWaterMark(int value) {
        return new ZmqClientOptions(
                requestHighWaterMark,
                value,
                maxFrameSize,
                requestHeartbeatInterval,
                publishHeartbeatInterval,
                heartbeatTimeout,
                handshakeTimeout,
                reconnectInterval,
                reconnectIntervalMax,
                linger,
                mailboxCapacity);
    }

    /**
     * jeromq cancels a PING's timeout timer lazily (PollerBase marks it, the timer loop drops it when it gets there)
     * and, arming a new one for the same engine while the cancelled one is still queued, keeps the cancelled one in its
     * place (MultiMap.insert): the new PING then never times out. A cancelled timeout shorter than the interval comes
     * before the next PING's timer in the loop, which drops it first.
     */
    private static void requireTimeoutBelow(String name, Duration interval, Duration timeout) {
        if (interval.toMillis() > 0 && timeout.toMillis() >= interval.toMillis()) {
            throw new IllegalArgumentException("heartbeatTimeout (" + timeout.toMillis() + " ms) must be shorter than "
                    + name + " (" + interval.toMillis() + " ms): ZeroMQ would keep a dead connection");
        }
    }
}

package io.brine.transport.tcp;

import io.brine.protocol.MinionIds;
import io.brine.transport.ClientTransport;
import io.brine.transport.DropLog;
import io.brine.transport.GuardedListener;
import io.brine.transport.ReconnectBackoff;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The minion's side of the TCP transport (PROTOCOL.md 2.2): one connection to the master's {@code tcp_port}
 * carries requests, replies and publications, each frame behind a 4-byte big-endian length. Everything about the
 * connection happens on one event loop of its group; other threads only queue frames.
 *
 * <p><b>Frames from the master</b> all go to {@link Listener#onReply} (on the event loop, which must only enqueue):
 * replies and publications share the connection and the minion dispatches by frame type.
 * {@link Listener#onPublication} is never called.
 *
 * <p><b>Connection.</b> The transport connects at {@link #start} and again after every loss, waiting
 * {@link TcpClientOptions#reconnectInterval()} doubling up to {@link TcpClientOptions#reconnectIntervalMax()}, each
 * wait moved at random by up to one interval either way, as ZeroMQ's sockets do ({@link ReconnectBackoff}), so that a
 * restarted master is not hit by every minion at once.
 * {@link Listener#onConnected()} fires whenever a connection is ready (the first one too),
 * {@link Listener#onDisconnected()} when a ready connection is lost. Ready means connected, and with TLS the
 * handshake done and the master's certificate verified. A master silent for {@link TcpClientOptions#idleTimeout()} counts as lost.
 *
 * <p><b>Sending</b> mirrors the ZeroMQ client: {@link #send} queues, also before the first connection and while
 * disconnected, up to {@link TcpClientOptions#maxQueuedFrames()} frames waiting for a connection and
 * {@link TcpClientOptions#maxQueuedBytes()} not yet written to the socket; beyond that it returns false. Frames
 * written to a connection that then drops are lost with it; the minion's own retries cover them.
 *
 * <p>By default each transport has its own single-thread event loop group; pass a group to share one among many
 * transports (thousands of simulated minions in one JVM): the caller then closes it.
 */
public final class TcpClientTransport implements ClientTransport {

    private static final Logger LOG = LoggerFactory.getLogger(TcpClientTransport.class);
    private static final int WRITES_PER_RUN = 1024;

    private enum State {
        NEW,
        RUNNING,
        CLOSED
    }

    private final String host;
    private final int port;
    private final TcpClientOptions options;
    private final SslContext tls;
    private final EventLoopGroup sharedGroup;
    private final AtomicReference<State> state = new AtomicReference<>(State.NEW);
    private final Queue<byte[]> outbox = new ConcurrentLinkedQueue<>();
    private final AtomicInteger outboxFrames = new AtomicInteger();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final DropLog refusals = new DropLog(LOG);
    /** For logs: "TCP transport" until the minion's id is known, then "Minion ID". */
    private volatile String label = "TCP transport";

    private volatile boolean connected;

    // Set in start(), then used on the event loop only.
    private EventLoopGroup group;
    private EventLoop loop;
    private Bootstrap bootstrap;
    private Listener listener;
    private Channel channel;
    private boolean ready;
    /** Grows while attempts fail; reset by a frame from the master. */
    private ReconnectBackoff backoff;

    private ScheduledFuture<?> reconnect;

    /** Plain TCP with default options and its own event loop. */
    public TcpClientTransport(String host, int port) {
        this(host, port, TcpClientOptions.defaults(), null, null);
    }

    /**
     * @param host the master's name or address ({@code master} in minion.yaml)
     * @param port the master's TCP port ({@code tcp_port})
     * @param tls a client TLS context ({@link TcpClientTls#client}); null for plain TCP
     * @param sharedGroup the event loops to run on, owned by the caller; null to make (and close) its own
     */
    public TcpClientTransport(
            String host, int port, TcpClientOptions options, SslContext tls, EventLoopGroup sharedGroup) {
        this.host = Objects.requireNonNull(host, "host");
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        this.port = port;
        this.options = Objects.requireNonNull(options, "options");
        this.tls = tls;
        this.sharedGroup = sharedGroup;
    }

    /** Starts connecting in the background: a master that is not up yet is retried with back-off. */
    @Override
    public void start(Listener listener) throws IOException {
        Objects.requireNonNull(listener, "listener");
        if (state.get() != State.NEW) {
            throw new IllegalStateException("transport already started or closed");
        }
        this.listener = new GuardedListener(listener, "TCP transport");
        try {
            group = sharedGroup != null ? sharedGroup : options.io().newGroup(1, "brine-tcp-client");
        } catch (RuntimeException e) {
            throw new IOException("cannot start the TCP transport's event loop: " + e.getMessage(), e);
        }
        loop = group.next();
        backoff = new ReconnectBackoff(
                options.reconnectInterval(),
                options.reconnectIntervalMax(),
                () -> ThreadLocalRandom.current().nextDouble());
        bootstrap = new Bootstrap()
                .group(loop)
                .channel(TcpIo.socketChannel(group))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int)
                        options.connectTimeout().toMillis())
                .handler(new TcpClientInitializer(this, options, tls, host, port));
        if (!state.compareAndSet(State.NEW, State.RUNNING)) {
            shutDownGroup();
            throw new IOException("transport closed while starting");
        }
        loop.execute(this::connect);
    }

    /**
     * Queues {@code frame} for the master (also before start and while disconnected). False when closed, when the
     * frame is over {@link TcpClientOptions#maxFrame()}, or when the queue is full.
     */
    @Override
    public boolean send(byte[] frame) {
        Objects.requireNonNull(frame, "frame");
        if (state.get() == State.CLOSED || frame.length > options.maxFrame()) {
            return false;
        }
        long size = frame.length + (long) TcpFrameDecoder.PREFIX;
        if (queuedBytes.addAndGet(size) > options.maxQueuedBytes()) {
            queuedBytes.addAndGet(-size);
            return false;
        }
        if (outboxFrames.incrementAndGet() > options.maxQueuedFrames()) {
            outboxFrames.decrementAndGet();
            queuedBytes.addAndGet(-size);
            return false;
        }
        outbox.add(frame);
        if (state.get() == State.RUNNING) {
            scheduleDrain();
        }
        return true;
    }

    /** Remembers the id for logs: publications come down the one connection, so there is nothing to subscribe. */
    @Override
    public void subscribe(String minionId, int publishPort) {
        this.label = "Minion " + MinionIds.requireValid(minionId);
    }

    /** Whether a connection is ready now (for status and tests). */
    public boolean isConnected() {
        return connected;
    }

    /** Stops reconnecting, closes the connection, and the event loop group if it is this transport's. Idempotent. */
    @Override
    public void close() {
        State previous = state.getAndSet(State.CLOSED);
        if (previous != State.RUNNING) {
            return;
        }
        CountDownLatch closed = new CountDownLatch(1);
        Runnable stop = () -> {
            if (reconnect != null) {
                reconnect.cancel(false);
            }
            Channel current = channel;
            channel = null;
            ready = false;
            connected = false;
            if (current != null) {
                current.close().addListener(f -> closed.countDown());
            } else {
                closed.countDown();
            }
        };
        if (loop.inEventLoop()) {
            stop.run();
        } else {
            try {
                loop.execute(stop);
                closed.await(5, TimeUnit.SECONDS);
            } catch (RejectedExecutionException e) {
                // the group is shutting down already
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        shutDownGroup();
        outbox.clear();
    }

    // ---- event loop ----

    private void connect() {
        if (state.get() != State.RUNNING) {
            return;
        }
        ChannelFuture future = bootstrap.connect(host, port);
        Channel connecting = future.channel();
        channel = connecting;
        connecting.closeFuture().addListener(f -> onClosed(connecting));
        future.addListener(f -> {
            if (!f.isSuccess()) {
                LOG.debug(
                        "{}: cannot connect to the master at {}:{}: {}", label, host, port, String.valueOf(f.cause()));
                connecting.close();
            }
        });
    }

    /** Connected (and with TLS, the handshake done): frames may flow. */
    void ready(Channel ready) {
        if (channel != ready || state.get() != State.RUNNING) {
            return;
        }
        this.ready = true;
        connected = true;
        LOG.debug("{}: connected to the master at {}:{}", label, host, port);
        listener.onConnected();
        drain();
    }

    private void onClosed(Channel closed) {
        if (channel != closed) {
            return;
        }
        channel = null;
        boolean wasReady = ready;
        ready = false;
        connected = false;
        if (state.get() != State.RUNNING) {
            return;
        }
        if (wasReady) {
            LOG.info("{}: lost the connection to the master at {}:{}; reconnecting", label, host, port);
            listener.onDisconnected();
        }
        reconnect = loop.schedule(this::connect, backoff.nextMillis(), TimeUnit.MILLISECONDS);
    }

    /** The master announced a frame this minion may not take: a WARN per reason and interval, then reconnecting. */
    void refused(TcpFrameDecoder.Refused refused) {
        refusals.dropped(
                host + ":" + port,
                "TCP: " + refused.reason() + "; reconnecting",
                refused.length() + " bytes announced");
    }

    void deliver(byte[] frame) {
        // Only a frame from the master proves the connection works (a TLS or framing mismatch is closed before
        // one arrives): until then the back-off keeps growing, so a misconfigured minion does not hammer.
        backoff.reset();
        listener.onReply(frame);
    }

    private void scheduleDrain() {
        if (drainScheduled.compareAndSet(false, true)) {
            try {
                loop.execute(this::drain);
            } catch (RejectedExecutionException e) {
                drainScheduled.set(false);
            }
        }
    }

    /** Writes what is queued, then flushes once; leaves it queued while there is no ready connection. */
    private void drain() {
        drainScheduled.set(false);
        Channel current = channel;
        if (current == null || !ready) {
            return;
        }
        int count = 0;
        byte[] frame;
        while (count < WRITES_PER_RUN && (frame = outbox.poll()) != null) {
            count++;
            outboxFrames.decrementAndGet();
            long size = frame.length + (long) TcpFrameDecoder.PREFIX;
            current.write(
                    Unpooled.wrappedBuffer(frame), current.newPromise().addListener(f -> queuedBytes.addAndGet(-size)));
        }
        if (count > 0) {
            current.flush();
        }
        if (!outbox.isEmpty()) {
            scheduleDrain();
        }
    }

    private void shutDownGroup() {
        if (sharedGroup == null && group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }
}

package io.brine.bench;

import io.brine.protocol.MinionIds;
import io.brine.transport.ClientTransport;
import io.brine.transport.GuardedListener;
import io.brine.transport.ReconnectBackoff;
import io.brine.transport.Topics;
import io.brine.transport.tcp.TcpIo;
import io.brine.transport.zmq.ZmqClientOptions;
import io.brine.transport.zmtp.SocketType;
import io.brine.transport.zmtp.ZmtpClientPipeline;
import io.brine.transport.zmtp.ZmtpEncoder;
import io.brine.transport.zmtp.ZmtpEvent;
import io.brine.transport.zmtp.ZmtpLimits;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Many minions' ZeroMQ sockets as ZMTP 3.1 on one Netty event loop group ({@code --zmq-client netty}, the default):
 * per minion a DEALER to the request port and, once subscribed, a SUB to the publish port with the topics
 * {@code m/<id>/} and {@code b/}, speaking through the transport module's own ZMTP codec
 * ({@link ZmtpClientPipeline}). On the wire they behave as a real minion's jeromq sockets configured from
 * {@link ZmqClientOptions#defaults()}: READY with the Socket-Type and no Identity; a PING (no TTL) every heartbeat
 * interval of each socket (none on the DEALER, every 45 s on the SUB) and the connection dropped when the master is
 * silent for the heartbeat timeout after one;
 * the handshake timeout; a reconnect after each loss, waiting as jeromq does ({@link ReconnectBackoff}: the reconnect
 * interval doubled per failed attempt up to its maximum, moved by up to one interval either way at random); the
 * subscriptions sent again on each connection. One
 * difference in form: jeromq 0.5.4 greets as ZMTP 3.0 and subscribes with the message {@code 0x01 topic}, these
 * sockets greet as 3.1 and send the SUBSCRIBE command, as libzmq 4.3 does; the master handles both alike. What
 * differs otherwise is only the load generator's own cost (no jeromq I/O threads, pipes and mailboxes per socket).
 *
 * <p>High-water marks become bounded queues: a DEALER keeps up to the request high-water mark of frames waiting
 * for a connection (as a ZeroMQ pipe does, across reconnects) and stops writing while the socket is not writable;
 * beyond that {@code send} returns false. Frames from the master go to the listener as they are read (it only
 * enqueues), so nothing waits on the receiving side to be bounded. Each link lives on one event loop of the group.
 * {@link ClientTransport.Listener#onConnected()} and {@code onDisconnected()} follow the DEALER's handshakes and
 * losses (a simulated minion rejoins on the first in the restart scenario, as a real minion does, and otherwise
 * ignores them; {@link ZmqSwarmTransports} never calls them).
 */
final class NettyZmtpSwarmTransports implements SwarmTransports {

    private static final Logger LOG = LoggerFactory.getLogger(NettyZmtpSwarmTransports.class);

    private static final ZmqClientOptions OPTIONS = ZmqClientOptions.defaults();
    private static final int WRITES_PER_RUN = 1024;
    /** A reply is one or two parts and a publication two; a few more are read and dropped, as jeromq delivers them. */
    private static final int MAX_PARTS = 16;

    private static final ZmtpLimits LIMITS =
            ZmtpLimits.fixed(OPTIONS.maxFrameSize(), MAX_PARTS, OPTIONS.maxFrameSize() + ZmtpLimits.MAX_COMMAND);
    /** Each socket's timers, as ZmqSockets.configureRequest and configurePublish set them on a real minion's. */
    private static final ZmtpClientPipeline.Timers REQUEST_TIMERS = new ZmtpClientPipeline.Timers(
            OPTIONS.handshakeTimeout(), OPTIONS.requestHeartbeatInterval(), OPTIONS.heartbeatTimeout());

    private static final ZmtpClientPipeline.Timers PUBLISH_TIMERS = new ZmtpClientPipeline.Timers(
            OPTIONS.handshakeTimeout(), OPTIONS.publishHeartbeatInterval(), OPTIONS.heartbeatTimeout());

    private final EventLoopGroup group;
    private final Bootstrap bootstrap;

    NettyZmtpSwarmTransports(int ioThreads) {
        this.group = TcpIo.AUTO.newGroup(ioThreads, "bench-zmtp");
        this.bootstrap = new Bootstrap()
                .channel(TcpIo.socketChannel(group))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int)
                        OPTIONS.handshakeTimeout().toMillis());
    }

    @Override
    public ClientTransport open(String host, int requestPort) {
        return new Link(host, requestPort, false);
    }

    @Override
    public ClientTransport openSalt(String host, int requestPort) {
        return new Link(host, requestPort, true);
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }

    /** One minion's transport: its DEALER and SUB, both on one event loop. */
    private final class Link implements ClientTransport {

        private final String host;
        private final int requestPort;
        private final boolean salt;
        private final EventLoop loop = group.next();
        private final Queue<byte[]> outbox = new ConcurrentLinkedQueue<>();
        private final AtomicInteger queued = new AtomicInteger();
        private final AtomicBoolean drainScheduled = new AtomicBoolean();
        private volatile boolean closed;
        private volatile Listener listener;

        // The event loop's only.
        private Socket request;
        private Socket publish;
        private String subscribedId;
        private int subscribedPort;

        Link(String host, int requestPort, boolean salt) {
            this.host = Objects.requireNonNull(host, "host");
            this.requestPort = requestPort;
            this.salt = salt;
        }

        @Override
        public void start(Listener listener) {
            this.listener = new GuardedListener(listener, "Swarm transport");
            execute(() -> {
                if (!closed && request == null) {
                    // A stock Salt minion's request socket is a REQ (its master reads the delimiter by that type).
                    request = new Socket(this, salt ? SocketType.REQ : SocketType.DEALER, requestPort, List.of());
                    request.connect();
                }
            });
        }

        /** Queues {@code frame} for the master, also while disconnected; false once the high-water mark is hit. */
        @Override
        public boolean send(byte[] frame) {
            Objects.requireNonNull(frame, "frame");
            if (closed || frame.length > OPTIONS.maxFrameSize()) {
                return false;
            }
            if (queued.incrementAndGet() > OPTIONS.requestHighWaterMark()) {
                queued.decrementAndGet();
                LOG.debug("Swarm transport: frame refused, the queue to the master is full");
                return false;
            }
            outbox.add(frame);
            scheduleDrain();
            return true;
        }

        @Override
        public void subscribe(String minionId, int publishPort) {
            MinionIds.requireValid(minionId);
            execute(() -> {
                if (closed) {
                    return;
                }
                if (publish != null && publishPort == subscribedPort) {
                    if (!salt && !minionId.equals(subscribedId)) {
                        publish.resubscribe(Topics.minionBytes(subscribedId), Topics.minionBytes(minionId));
                        subscribedId = minionId;
                    }
                    return;
                }
                if (publish != null) {
                    publish.close();
                }
                List<byte[]> topics =
                        salt ? List.of(new byte[0]) : List.of(Topics.minionBytes(minionId), Topics.broadcastBytes());
                subscribedId = minionId;
                subscribedPort = publishPort;
                publish = new Socket(this, SocketType.SUB, publishPort, topics);
                publish.connect();
            });
        }

        @Override
        public void close() {
            closed = true;
            execute(() -> {
                if (request != null) {
                    request.close();
                }
                if (publish != null) {
                    publish.close();
                }
                outbox.clear();
                queued.set(0);
            });
        }

        private void execute(Runnable task) {
            try {
                loop.execute(task);
            } catch (RejectedExecutionException e) {
                LOG.debug("Swarm transport: the event loop is shut down");
            }
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

        /** Writes what is queued while the DEALER is handshaken and writable, then flushes once. */
        void drain() {
            drainScheduled.set(false);
            Channel channel = request == null ? null : request.ready();
            if (channel == null) {
                return;
            }
            int count = 0;
            byte[] frame;
            while (count < WRITES_PER_RUN && channel.isWritable() && (frame = outbox.poll()) != null) {
                count++;
                queued.decrementAndGet();
                // A stock Salt minion's request socket is a REQ: an empty delimiter frame, then the payload (a
                // salt-master's REP workers drop a request without it).
                channel.write(ZmtpEncoder.replyHeader(channel.alloc(), salt, frame.length), channel.voidPromise());
                channel.write(Unpooled.wrappedBuffer(frame), channel.voidPromise());
            }
            if (count > 0) {
                channel.flush();
            }
            if (!outbox.isEmpty() && channel.isWritable()) {
                scheduleDrain();
            }
        }

        void deliver(boolean fromPublish, List<byte[]> parts) {
            // A Salt SUB without zmq_filtering takes the envelope alone: one frame, read as a reply's.
            byte[] frame = fromPublish && !salt ? publication(parts) : reply(parts);
            if (frame == null) {
                return;
            }
            if (fromPublish) {
                listener.onPublication(frame);
            } else {
                listener.onReply(frame);
            }
        }
    }

    /** {@code [frame]} or {@code [empty][frame]}, as ZmqMessage.reply reads it; null for any other shape. */
    private static byte[] reply(List<byte[]> parts) {
        if (parts.size() == 1) {
            return parts.get(0);
        }
        return parts.size() == 2 && parts.get(0).length == 0 ? parts.get(1) : null;
    }

    /** {@code [topic][frame]}; null for any other shape. */
    private static byte[] publication(List<byte[]> parts) {
        return parts.size() == 2 ? parts.get(1) : null;
    }

    /** One ZeroMQ socket of a link: one connection at a time, reconnected after each loss until closed. */
    private final class Socket extends ChannelInboundHandlerAdapter {

        private final Link link;
        private final SocketType type;
        private final int port;
        private final List<byte[]> topics;
        private Channel channel;
        private boolean handshaken;
        private boolean closed;
        private final ReconnectBackoff backoff = new ReconnectBackoff(
                OPTIONS.reconnectInterval(),
                OPTIONS.reconnectIntervalMax(),
                () -> ThreadLocalRandom.current().nextDouble());
        private ScheduledFuture<?> reconnect;

        Socket(Link link, SocketType type, int port, List<byte[]> topics) {
            this.link = link;
            this.type = type;
            this.port = port;
            this.topics = new ArrayList<>(topics);
        }

        /** The channel when it is handshaken, else null. */
        Channel ready() {
            return handshaken ? channel : null;
        }

        void connect() {
            if (closed) {
                return;
            }
            ChannelFuture future = bootstrap
                    .clone(link.loop)
                    .handler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ZmtpClientPipeline.addTo(
                                    ch.pipeline(),
                                    type,
                                    LIMITS,
                                    type == SocketType.SUB ? PUBLISH_TIMERS : REQUEST_TIMERS);
                            ch.pipeline().addLast("socket", Socket.this);
                        }
                    })
                    .connect(link.host, port);
            Channel connecting = future.channel();
            channel = connecting;
            connecting.closeFuture().addListener(f -> onClosed(connecting));
            future.addListener(f -> {
                if (!f.isSuccess()) {
                    connecting.close();
                }
            });
        }

        void resubscribe(byte[] old, byte[] replacement) {
            topics.removeIf(topic -> Arrays.equals(topic, old));
            topics.add(replacement);
            if (handshaken) {
                channel.write(new ZmtpEvent.Cancel(old));
                channel.writeAndFlush(new ZmtpEvent.Subscribe(replacement));
            }
        }

        void close() {
            closed = true;
            if (reconnect != null) {
                reconnect.cancel(false);
            }
            if (channel != null) {
                channel.close();
            }
        }

        @Override
        public boolean isSharable() {
            return true; // one connection at a time, each added after the last one's pipeline is gone
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (ctx.channel() != channel) {
                return;
            }
            if (msg instanceof ZmtpEvent.Handshaken) {
                handshaken = true;
                backoff.reset();
                if (type == SocketType.SUB) {
                    for (byte[] topic : topics) {
                        ctx.write(new ZmtpEvent.Subscribe(topic));
                    }
                    ctx.flush();
                } else {
                    link.listener.onConnected();
                    link.drain();
                }
            } else if (msg instanceof ZmtpEvent.Message message) {
                link.deliver(type == SocketType.SUB, message.parts());
            } else if (msg instanceof ZmtpEvent.Refused refused) {
                LOG.debug(
                        "Swarm transport: {} connection to {}:{} closed: {}", type, link.host, port, refused.reason());
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (type == SocketType.DEALER && ctx.channel().isWritable()) {
                link.scheduleDrain();
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.debug("Swarm transport: {} connection to {}:{} failed: {}", type, link.host, port, cause.toString());
            ctx.close();
        }

        private void onClosed(Channel gone) {
            if (channel != gone) {
                return;
            }
            channel = null;
            boolean wasHandshaken = handshaken;
            handshaken = false;
            if (closed || link.closed) {
                return;
            }
            if (wasHandshaken && type == SocketType.DEALER) {
                link.listener.onDisconnected();
            }
            reconnect = link.loop.schedule(this::connect, backoff.nextMillis(), TimeUnit.MILLISECONDS);
        }
    }
}

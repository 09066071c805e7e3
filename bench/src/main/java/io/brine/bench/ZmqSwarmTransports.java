package io.brine.bench;

import io.brine.protocol.MinionIds;
import io.brine.transport.ClientTransport;
import io.brine.transport.GuardedListener;
import io.brine.transport.Topics;
import io.brine.transport.TransportMailbox;
import io.brine.transport.zmq.ZmqClientOptions;
import io.brine.transport.zmq.ZmqMessage;
import io.brine.transport.zmq.ZmqSockets;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Many minions' ZeroMQ sockets on one thread: per minion a DEALER to the request port and, once subscribed, a SUB to
 * the publish port with the topics {@code m/<id>/} and {@code b/}, configured like the real
 * {@code ZmqClientTransport} (same high-water marks, frame limit, ZMTP heartbeats, handshake and reconnect timers).
 * One ZeroMQ context with a few I/O threads carries all connections; one loop thread owns every socket.
 *
 * <p>The loop waits on a {@link Selector} over each socket's ZeroMQ file descriptor, so a round costs work only for
 * the sockets that are ready ({@code ZMQ.Poller} looks at every registered socket on every poll). ZeroMQ's
 * descriptor only says "look again": after it fires, and after every send (which may consume the signal of an
 * incoming message), the socket is read until it has nothing left. No socket monitors: they would cost two more
 * sockets per minion; {@link ClientTransport.Listener#onConnected()} is never called.
 */
final class ZmqSwarmTransports implements SwarmTransports {

    private static final Logger LOG = LoggerFactory.getLogger(ZmqSwarmTransports.class);

    private static final int MESSAGES_PER_READ = 64;
    private static final int MAX_SOCKETS = 65_536;
    private static final int COMMANDS_PER_ROUND = 4096;
    /** What a real minion runs with, but no linger: a swarm's sockets close with the benchmark. */
    private static final ZmqClientOptions OPTIONS = ZmqClientOptions.defaults().withLinger(Duration.ZERO);

    private final ZContext context;
    private final Selector selector;
    private final TransportMailbox<Runnable> mailbox = new TransportMailbox<>(1_000_000);
    /** Sockets to read before the next wait: their descriptor may have been consumed by a send. */
    private final ArrayDeque<Endpoint> toRead = new ArrayDeque<>();

    private final Thread loop;
    private volatile boolean running = true;

    ZmqSwarmTransports(int ioThreads) {
        this.context = new ZContext(ioThreads);
        context.setLinger(0);
        // jeromq refuses a context's 1,025th socket by default; two per minion here.
        context.getContext().setMaxSockets(MAX_SOCKETS);
        try {
            this.selector = Selector.open();
            mailbox.wakeupChannel().register(selector, SelectionKey.OP_READ);
        } catch (IOException e) {
            context.close();
            throw new UncheckedIOException("cannot open a selector", e);
        }
        this.loop = new Thread(this::run, "bench-zmq-loop");
        loop.setDaemon(true);
        loop.start();
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
        running = false;
        mailbox.wakeup();
        try {
            loop.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void execute(Runnable command) {
        if (Thread.currentThread() == loop) {
            command.run();
        } else if (!mailbox.offer(command)) {
            LOG.warn("Swarm transport: command dropped, the loop's mailbox is full");
        }
    }

    // ---- the loop thread ----

    private void run() {
        try {
            while (running) {
                selector.select(toRead.isEmpty() ? 1000 : 1);
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    if (key.attachment() instanceof Endpoint endpoint) {
                        read(endpoint);
                    }
                }
                boolean more = mailbox.drain(Runnable::run, COMMANDS_PER_ROUND);
                for (int i = toRead.size(); i > 0; i--) {
                    read(toRead.poll());
                }
                if (more) {
                    mailbox.wakeup();
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.error("Swarm transport: loop stopped", e);
        } finally {
            try {
                selector.close();
            } catch (IOException e) {
                LOG.debug("closing the selector", e);
            }
            context.close();
            mailbox.close();
        }
    }

    /** Reads what the socket holds (up to a fair share; the rest on the next round). */
    private void read(Endpoint endpoint) {
        if (endpoint.closed) {
            return;
        }
        ZMQ.Socket socket = endpoint.socket;
        for (int i = 0; i < MESSAGES_PER_READ; i++) {
            ZmqMessage message = ZmqMessage.receive(socket);
            if (message == null) {
                return;
            }
            endpoint.deliver(message);
        }
        toRead.add(endpoint);
    }

    private Endpoint register(Link link, ZMQ.Socket socket, boolean publish) {
        Endpoint endpoint = new Endpoint(link, socket, publish);
        SelectableChannel fd = socket.getFD();
        try {
            endpoint.key = fd.register(selector, SelectionKey.OP_READ, endpoint);
        } catch (ClosedChannelException e) {
            throw new IllegalStateException("socket closed while registering", e);
        }
        // Anything that arrived before registration would not wake the selector.
        toRead.add(endpoint);
        return endpoint;
    }

    /** One socket of one link, as registered with the selector. */
    private static final class Endpoint {
        final Link link;
        final ZMQ.Socket socket;
        final boolean publish;
        SelectionKey key;
        boolean closed;

        Endpoint(Link link, ZMQ.Socket socket, boolean publish) {
            this.link = link;
            this.socket = socket;
            this.publish = publish;
        }

        void deliver(ZmqMessage message) {
            // A Salt SUB without zmq_filtering takes the envelope alone: one frame, read as a reply's.
            byte[] frame = publish && !link.salt ? message.publication() : message.reply();
            if (frame == null) {
                return;
            }
            if (publish) {
                link.listener.onPublication(frame);
            } else {
                link.listener.onReply(frame);
            }
        }

        void close() {
            if (!closed) {
                closed = true;
                if (key != null) {
                    key.cancel();
                }
                socket.close();
            }
        }
    }

    /** One minion's transport: its DEALER and SUB, used only on the loop thread. */
    private final class Link implements ClientTransport {

        private final String host;
        private final int requestPort;
        private volatile Listener listener;
        private Endpoint request;
        private Endpoint publish;
        private String subscribedId;
        private int subscribedPort;
        private boolean closed;
        private final boolean salt;

        Link(String host, int requestPort, boolean salt) {
            this.host = Objects.requireNonNull(host, "host");
            this.requestPort = requestPort;
            this.salt = salt;
        }

        @Override
        public void start(Listener listener) {
            this.listener = new GuardedListener(listener, "Swarm transport");
            execute(() -> {
                if (closed || request != null) {
                    return;
                }
                // A stock Salt minion's request socket is a REQ, which sends the empty delimiter a salt-master's REP
                // workers need; relaxed, as the simulated minion sends its start-up requests without waiting.
                ZMQ.Socket dealer = context.createSocket(salt ? SocketType.REQ : SocketType.DEALER);
                if (salt) {
                    dealer.setReqRelaxed(true);
                    dealer.setReqCorrelate(false);
                }
                ZmqSockets.configureRequest(dealer, OPTIONS);
                dealer.setSndHWM(OPTIONS.requestHighWaterMark());
                dealer.setRcvHWM(OPTIONS.requestHighWaterMark());
                dealer.connect(ZmqSockets.endpoint(dealer, host, requestPort));
                request = register(this, dealer, false);
            });
        }

        @Override
        public boolean send(byte[] frame) {
            Objects.requireNonNull(frame, "frame");
            if (closed) {
                return false;
            }
            execute(() -> {
                if (request != null && !request.closed) {
                    if (!request.socket.send(frame, ZMQ.DONTWAIT)) {
                        LOG.debug("Swarm transport: frame dropped, the queue to the master is full");
                    }
                    toRead.add(request);
                }
            });
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
                        publish.socket.unsubscribe(Topics.minionBytes(subscribedId));
                        publish.socket.subscribe(Topics.minionBytes(minionId));
                        subscribedId = minionId;
                    }
                    return;
                }
                if (publish != null) {
                    publish.close();
                }
                ZMQ.Socket sub = context.createSocket(SocketType.SUB);
                ZmqSockets.configurePublish(sub, OPTIONS);
                sub.setRcvHWM(OPTIONS.publishHighWaterMark());
                if (salt) {
                    sub.subscribe(new byte[0]);
                } else {
                    sub.subscribe(Topics.minionBytes(minionId));
                    sub.subscribe(Topics.broadcastBytes());
                }
                sub.connect(ZmqSockets.endpoint(sub, host, publishPort));
                subscribedId = minionId;
                subscribedPort = publishPort;
                publish = register(this, sub, true);
            });
        }

        @Override
        public void close() {
            execute(() -> {
                closed = true;
                if (request != null) {
                    request.close();
                }
                if (publish != null) {
                    publish.close();
                }
            });
        }
    }
}

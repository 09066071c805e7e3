package io.brine.transport.zmq;

import io.brine.transport.TransportMailbox;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;
import zmq.ZError;

/**
 * The loop under the jeromq client transport (the master serves ZeroMQ on Netty, {@code zmtp/}), kept apart from
 * the client's protocol logic: a context whose sockets belong to one transport thread, a
 * {@link TransportMailbox} through which every other thread's calls reach it, and the life cycle
 * {@code NEW → STARTING → RUNNING → CLOSED}. The thread polls the mailbox's wake-up channel next to the sockets the
 * subclass {@link #register registers}, runs a {@link #round} after each poll, and polls again at once while a
 * round leaves work behind. Whatever ends the loop ({@link #close}, a failure) closes the sockets, the context and
 * the mailbox on that thread.
 *
 * @param <C> the commands other threads send to the transport thread
 */
abstract class ZmqLoop<C> {

    private static final Logger LOG = LoggerFactory.getLogger(ZmqLoop.class);

    /** The mailbox wakes the thread; this only bounds the wait should a wake-up ever be missed. */
    static final long IDLE_POLL_MILLIS = 1000;

    static final int COMMANDS_PER_ROUND = 256;
    static final int MESSAGES_PER_ROUND = 1024;

    private enum State {
        NEW,
        STARTING,
        RUNNING,
        CLOSED
    }

    private final String threadName;
    private final Duration linger;
    private final AtomicReference<State> state = new AtomicReference<>(State.NEW);
    private volatile Thread thread;
    final TransportMailbox<C> mailbox;

    // Owned by the transport thread once started (handed over by Thread.start()).
    ZContext context;
    ZMQ.Poller poller;

    ZmqLoop(String threadName, int mailboxCapacity, Duration linger) {
        this.threadName = threadName;
        this.linger = linger;
        this.mailbox = new TransportMailbox<>(mailboxCapacity);
    }

    /** Opens the sockets in a new context, on the caller's thread, before the transport thread takes them over. */
    @FunctionalInterface
    interface Opener {
        void open(ZContext context);
    }

    /**
     * Opens the sockets with {@code opener} and starts the transport thread.
     *
     * @param failure what an {@link IOException} says when the sockets cannot be opened, before ZeroMQ's reason
     * @throws IllegalStateException when started before, or closed
     */
    final void startLoop(int ioThreads, Opener opener, String failure) throws IOException {
        if (!state.compareAndSet(State.NEW, State.STARTING)) {
            throw new IllegalStateException("transport already started or closed");
        }
        ZContext ctx = new ZContext(ioThreads);
        ctx.setLinger((int) linger.toMillis());
        try {
            this.context = ctx;
            opener.open(ctx);
        } catch (ZMQException | IllegalArgumentException e) {
            ctx.close();
            state.set(State.NEW);
            throw new IOException(failure + ": " + e.getMessage(), e);
        }
        Thread ioThread = new Thread(this::run, threadName);
        ioThread.setDaemon(true);
        this.thread = ioThread;
        if (!state.compareAndSet(State.STARTING, State.RUNNING)) {
            ctx.close();
            mailbox.close();
            throw new IOException("transport closed while starting");
        }
        ioThread.start();
    }

    final boolean isRunning() {
        return state.get() == State.RUNNING;
    }

    final boolean isClosed() {
        return state.get() == State.CLOSED;
    }

    /** Stops the transport thread, which closes the sockets (after {@code linger}) and the context. Idempotent. */
    public void close() {
        State previous = state.getAndSet(State.CLOSED);
        if (previous == State.CLOSED) {
            return;
        }
        if (previous != State.RUNNING) {
            mailbox.close();
            return;
        }
        mailbox.wakeup();
        Thread ioThread = thread;
        if (ioThread != null && ioThread != Thread.currentThread()) {
            try {
                ioThread.join(linger.toMillis() + 10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (ioThread.isAlive()) {
                LOG.warn("ZeroMQ transport: transport thread {} still running after close", threadName);
            }
        }
    }

    // ---- transport thread ----

    /** Registers the sockets to poll (the mailbox's channel is registered already). */
    abstract void register(ZMQ.Poller poller);

    /** One round of work after a poll: true when work is left for another round at once. */
    abstract boolean round();

    /** How long the next poll may wait for the sockets or the mailbox. */
    long pollMillis() {
        return IDLE_POLL_MILLIS;
    }

    /** Releases what the subclass holds beside the sockets (monitors, routing state); the context closes after. */
    abstract void closing();

    private void run() {
        poller = context.createPoller(4);
        poller.register(mailbox.wakeupChannel(), ZMQ.Poller.POLLIN);
        register(poller);
        boolean backlog = false;
        try {
            while (state.get() == State.RUNNING) {
                poller.poll(backlog ? 0 : pollMillis());
                if (state.get() != State.RUNNING) {
                    break;
                }
                backlog = round();
            }
        } catch (ZMQException e) {
            if (e.getErrorCode() != ZError.ETERM) {
                LOG.error("ZeroMQ transport: transport thread stopped", e);
            }
        } catch (RuntimeException | Error e) {
            LOG.error("ZeroMQ transport: transport thread stopped", e);
        } finally {
            state.set(State.CLOSED);
            poller.close();
            closing();
            context.close();
            mailbox.close();
        }
    }
}

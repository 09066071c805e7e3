package io.brine.transport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Commands for a transport thread that owns its sockets: any thread {@link #offer offers}, the owner polls
 * {@link #wakeupChannel()} next to its sockets and {@link #drain drains} a batch per wake-up.
 *
 * <p>Offers are coalesced: only the first offer into an idle mailbox writes a wake-up byte, so a burst of sends
 * costs one system call and one wake-up. Both pipe ends are non-blocking, which also keeps an interrupted caller
 * from closing the pipe (the JDK closes an interruptible channel only on a blocking operation).
 *
 * @param <T> the command type
 */
public final class TransportMailbox<T> implements AutoCloseable {

    private final Queue<T> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    private final AtomicBoolean signalled = new AtomicBoolean();
    private final int capacity;
    private final Pipe pipe;
    private final ByteBuffer drainBuffer = ByteBuffer.allocate(64);

    /** @param capacity the most commands waiting at once; offers beyond it are refused */
    public TransportMailbox(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        this.capacity = capacity;
        try {
            this.pipe = Pipe.open();
            pipe.source().configureBlocking(false);
            pipe.sink().configureBlocking(false);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the transport's wake-up pipe", e);
        }
    }

    /**
     * Queues a command and wakes the owner. Thread-safe, never blocks.
     *
     * @return false when the mailbox is full or closed
     */
    public boolean offer(T command) {
        if (!pipe.sink().isOpen()) {
            return false;
        }
        if (size.incrementAndGet() > capacity) {
            size.decrementAndGet();
            return false;
        }
        queue.add(command);
        if (signalled.compareAndSet(false, true)) {
            wake();
        }
        return true;
    }

    /** Wakes the owner without a command (to make it look at a flag such as "closing"). */
    public void wakeup() {
        signalled.set(true);
        wake();
    }

    private void wake() {
        try {
            // 0 bytes written means the pipe is full of wake-ups already: the owner wakes anyway.
            pipe.sink().write(ByteBuffer.wrap(new byte[] {1}));
        } catch (ClosedChannelException e) {
            // closed: the owner has stopped, nothing to wake
        } catch (IOException e) {
            throw new UncheckedIOException("cannot wake the transport thread", e);
        }
    }

    /** The channel the owner polls for reading; readable when commands may be waiting. */
    public SelectableChannel wakeupChannel() {
        return pipe.source();
    }

    /**
     * Owner thread only: consumes the wake-up and hands up to {@code max} commands to {@code sink}, oldest first.
     *
     * @return true when commands are left over (the owner should come back without waiting)
     */
    public boolean drain(Consumer<? super T> sink, int max) {
        // Order matters: read the wake-up bytes, then clear the flag, then poll. An offer that lands after the
        // flag is cleared writes a new byte; one that lands before is seen by the poll below.
        try {
            while (pipe.source().read(drainBuffer.clear()) > 0) {
                // discard
            }
        } catch (ClosedChannelException e) {
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the transport's wake-up pipe", e);
        }
        signalled.set(false);
        for (int i = 0; i < max; i++) {
            T command = queue.poll();
            if (command == null) {
                return false;
            }
            size.decrementAndGet();
            sink.accept(command);
        }
        return !queue.isEmpty();
    }

    /** Commands waiting now (a snapshot). */
    public int size() {
        return size.get();
    }

    /** Closes the pipe; later offers are refused and waiting commands are dropped. Idempotent. */
    @Override
    public void close() {
        try {
            pipe.sink().close();
            pipe.source().close();
        } catch (IOException e) {
            // nothing useful to do on close
        }
        queue.clear();
        size.set(0);
    }
}

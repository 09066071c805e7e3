package io.brine.transport.server;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Writes for the connections of one event loop, from any thread: connections {@link ServerConnection#enqueue
 * enqueue} and the loop writes a whole batch, then flushes each connection it wrote to once. One task per loop per
 * batch, and one flush per connection per batch, whatever the number of frames: a publication to 1,000 connections
 * costs two tasks on two loops, not 2,000 (DESIGN §5: a flush per message caps fan-out near 120 k/s). Writes to one
 * connection keep their order.
 */
public final class Outbox implements Runnable {

    private static final int WRITES_PER_RUN = 8192;

    private final EventLoop loop;
    private final Queue<QueuedWrite> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    /** Event loop only. */
    private final List<ServerConnection> written = new ArrayList<>();

    private final LongAdder writes = new LongAdder();
    private final LongAdder flushes = new LongAdder();

    public Outbox(EventLoop loop) {
        this.loop = loop;
    }

    void add(QueuedWrite write) {
        queue.add(write);
        // Queue first, then schedule: a run that clears the flag after this add polls this write.
        schedule();
    }

    private void schedule() {
        if (scheduled.compareAndSet(false, true)) {
            try {
                loop.execute(this);
            } catch (RejectedExecutionException e) {
                // Shutting down: the transport discards what is left.
                scheduled.set(false);
            }
        }
    }

    @Override
    public void run() {
        scheduled.set(false);
        QueuedWrite write;
        int count = 0;
        while (count < WRITES_PER_RUN && (write = queue.poll()) != null) {
            count++;
            ServerConnection connection = write.connection;
            Channel channel = connection.channel();
            if (!channel.isActive()) {
                write.drop();
                continue;
            }
            write.write(channel);
            if (!connection.needsFlush) {
                connection.needsFlush = true;
                written.add(connection);
            }
        }
        for (ServerConnection connection : written) {
            connection.needsFlush = false;
            connection.channel().flush();
        }
        writes.add(count);
        flushes.add(written.size());
        written.clear();
        if (!queue.isEmpty()) {
            schedule();
        }
    }

    /** Frames handed to connections (written or dropped because closed) since start. */
    public long writes() {
        return writes.sum();
    }

    public long flushes() {
        return flushes.sum();
    }

    /** After the loop stopped: releases what was never written. */
    void discard() {
        QueuedWrite write;
        while ((write = queue.poll()) != null) {
            write.drop();
        }
    }
}

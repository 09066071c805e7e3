package io.brine.transport.server;

import io.brine.transport.ServerTransport;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The inbound bytes in flight of {@link ServerOptions}, shared by both Netty server transports: a frame counts from
 * the moment it is handed to the master until the master says it is {@link ServerTransport#handled handled}. A
 * connection over {@link ServerOptions#maxInflightPerConnection()}, or any connection that delivers while the total
 * is over {@link ServerOptions#maxInflightBytes()}, is not read until it is back under (back-pressure: the bytes wait
 * in the kernel and in the sender, not in the master's heap). Reading also stops while a connection is not writable
 * (its outbound queue over the high water mark). Thread-safe; {@link #received} and {@link #updateAutoRead} run on
 * the connection's event loop.
 */
public final class InflightBudget {

    private final long maxTotal;
    private final long maxPerConnection;
    private final AtomicLong total = new AtomicLong();
    private final AtomicLong peak = new AtomicLong();
    private final Set<ServerConnection> paused = ConcurrentHashMap.newKeySet();

    public InflightBudget(ServerOptions options) {
        this.maxTotal = options.maxInflightBytes();
        this.maxPerConnection = options.maxInflightPerConnection();
    }

    /**
     * A frame of {@code bytes} from {@code connection} is about to be handed to the master: counted, and the
     * connection paused when that puts it (or the total) over. Call before the handler sees the frame, whose
     * {@link #handled} then finds the connection to resume. The connection's event loop only.
     */
    public void received(ServerConnection connection, int bytes) {
        long mine = connection.inflightBytes.addAndGet(bytes);
        long all = total.addAndGet(bytes);
        peak.accumulateAndGet(all, Math::max);
        if (mine > maxPerConnection || all > maxTotal) {
            connection.inflightPaused = true;
            paused.add(connection);
            connection.channel().config().setAutoRead(false);
        }
    }

    /**
     * The master is done with {@code bytes} from {@code connection}; resumes the paused connections now under. At
     * most what the connection holds is counted out: releasing more (a frame handled twice) would leave credit that
     * lets it, and every connection through the total, past the bounds.
     */
    public void handled(ServerConnection connection, int bytes) {
        long held = connection.inflightBytes.getAndUpdate(mine -> Math.max(0, mine - bytes));
        long released = Math.min(held, bytes);
        if (total.addAndGet(-released) <= maxTotal && !paused.isEmpty()) {
            for (ServerConnection waiting : paused) {
                if (!over(waiting) && paused.remove(waiting)) {
                    waiting.channel().eventLoop().execute(() -> updateAutoRead(waiting));
                }
            }
        }
    }

    /** Reads {@code connection} when it is writable and not over its inbound bounds. Its event loop only. */
    public void updateAutoRead(ServerConnection connection) {
        if (connection.inflightPaused && over(connection)) {
            paused.add(connection);
            // Re-checked: the frames that held it may all have been handled before it was back in the set.
            if (over(connection) || !paused.remove(connection)) {
                return;
            }
        }
        connection.inflightPaused = false;
        connection.channel().config().setAutoRead(connection.channel().isWritable());
    }

    /** {@code connection} closed: nothing to resume (its frames still in flight are counted out as handled). */
    public void closed(ServerConnection connection) {
        paused.remove(connection);
    }

    /** Inbound bytes handed to the master and not yet handled, over all connections. */
    public long bytes() {
        return total.get();
    }

    /** The most inbound bytes that were ever in flight at once. */
    public long peakBytes() {
        return peak.get();
    }

    private boolean over(ServerConnection connection) {
        return connection.inflightBytes.get() > maxPerConnection || total.get() > maxTotal;
    }
}

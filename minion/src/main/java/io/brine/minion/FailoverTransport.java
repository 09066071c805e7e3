package io.brine.minion;

import io.brine.transport.ClientTransport;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Salt's {@code master_type: failover} for a cluster of masters: one transport, to one master, at a time. When the
 * master leaves a frame unanswered for {@code patience} ({@code auth_timeout} plus the acceptance back-off), this
 * closes that transport and connects to the next master of the list, and tells the minion it is connected again:
 * the minion's heartbeat then meets an unknown session there and it authenticates with the same key (the cluster
 * shares the key store, so no re-acceptance) against the same pinned master key (the cluster has one).
 */
final class FailoverTransport implements ClientTransport {

    private static final Logger LOG = LoggerFactory.getLogger(FailoverTransport.class);

    /** Makes the transport to one master. */
    @FunctionalInterface
    interface Connector {
        ClientTransport connect(String master) throws IOException;
    }

    private final List<String> masters;
    private final Connector connector;
    private final long patienceNanos;
    private final LongSupplier nanoTime;
    private final ScheduledExecutorService watchdog;
    private int index;
    private volatile ClientTransport active;
    private Listener listener;
    private String subscribedId;
    private int subscribedPort;
    /** When the oldest frame sent since the last one received went out; 0 when nothing waits for an answer. */
    private volatile long unansweredSince;
    private volatile boolean closed;

    FailoverTransport(List<String> masters, boolean randomStart, Connector connector, Duration patience,
            LongSupplier nanoTime) {
        this.masters = new ArrayList<>(masters);
        this.connector = connector;
        this.patienceNanos = patience.toNanos();
        this.nanoTime = nanoTime;
        this.index = randomStart ? new Random().nextInt(masters.size()) : 0;
        this.watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "brine-failover");
            t.setDaemon(true);
            return t;
        });
    }

    /** The master the minion talks to now, as written in {@code master}. */
    String currentMaster() {
        return masters.get(index);
    }

    @Override
    public synchronized void start(Listener minion) throws IOException {
        this.listener = minion;
        active = connector.connect(currentMaster());
        active.start(watched(minion));
        LOG.info("Failover: talking to master {} (of {})", currentMaster(), masters);
        long period = Math.max(50, TimeUnit.NANOSECONDS.toMillis(patienceNanos) / 10);
        watchdog.scheduleWithFixedDelay(this::check, period, period, TimeUnit.MILLISECONDS);
    }

    private Listener watched(Listener minion) {
        return new Listener() {
            @Override
            public void onReply(byte[] frame) {
                unansweredSince = 0;
                minion.onReply(frame);
            }

            @Override
            public void onPublication(byte[] frame) {
                minion.onPublication(frame);
            }

            @Override
            public void onDisconnected() {
                minion.onDisconnected();
            }

            @Override
            public void onConnected() {
                minion.onConnected();
            }
        };
    }

    @Override
    public boolean send(byte[] frame) {
        if (unansweredSince == 0) {
            unansweredSince = Math.max(1, nanoTime.getAsLong());
        }
        return active.send(frame);
    }

    @Override
    public synchronized void subscribe(String minionId, int publishPort) {
        subscribedId = minionId;
        subscribedPort = publishPort;
        active.subscribe(minionId, publishPort);
    }

    @Override
    public boolean reconnect() {
        return active.reconnect();
    }

    private void check() {
        long since = unansweredSince;
        if (closed || since == 0 || nanoTime.getAsLong() - since < patienceNanos) {
            return;
        }
        try {
            moveOn();
        } catch (IOException | RuntimeException e) {
            LOG.warn("Failover: cannot connect to master {}: {}", currentMaster(), e.getMessage());
        }
    }

    private synchronized void moveOn() throws IOException {
        String from = currentMaster();
        index = (index + 1) % masters.size();
        LOG.warn("Failover: master {} left a frame unanswered for {} ms; moving to {}", from,
                TimeUnit.NANOSECONDS.toMillis(patienceNanos), currentMaster());
        ClientTransport old = active;
        unansweredSince = 0;
        subscribedId = null;
        old.close();
        active = connector.connect(currentMaster());
        active.start(watched(listener));
        // Whether or not this transport can tell: the minion checks its session with the new master.
        listener.onConnected();
    }

    @Override
    public void close() {
        closed = true;
        watchdog.shutdownNow();
        ClientTransport current = active;
        if (current != null) {
            current.close();
        }
    }
}

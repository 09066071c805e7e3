package io.brine.minion;

import io.brine.transport.ClientTransport;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Salt's {@code master_type: failover} for a cluster of masters: one transport, to one master, at a time. When the
 * master leaves a request that it answers unanswered for {@code auth_timeout} (an auth request, or a heartbeat of the
 * session: the minion then asks for a {@link #reconnect()}), this closes that transport and connects to the next
 * master of the list; the new master's transport tells the minion when it is connected (once, as for any connection),
 * and the minion resumes its session there with its ticket (the masters share their ticket keys), or authenticates with
 * the same key (the cluster shares the key store, so no re-acceptance) against the same pinned master key (the cluster
 * has one).
 *
 * <p>Only the minion knows which frames expect an answer (grains, returns resent and key requests may go unanswered
 * by design, and session frames are sealed), so this transport does not time frames itself: it used to, and left a
 * healthy master whenever the grains sent after acceptance were not followed by a heartbeat's answer within
 * {@code auth_timeout} plus {@code acceptance_wait_time} (issue 24).
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
    private volatile int index;
    private volatile ClientTransport active;
    private Listener listener;
    private boolean closed;

    FailoverTransport(List<String> masters, boolean randomStart, Connector connector) {
        this.masters = new ArrayList<>(masters);
        this.connector = connector;
        this.index = randomStart ? new Random().nextInt(masters.size()) : 0;
    }

    /** The master the minion talks to now, as written in {@code master}. */
    String currentMaster() {
        return masters.get(index);
    }

    @Override
    public synchronized void start(Listener minion) throws IOException {
        this.listener = minion;
        active = connector.connect(currentMaster());
        active.start(minion);
        LOG.info("Failover: talking to master {} (of {})", currentMaster(), masters);
    }

    @Override
    public boolean send(byte[] frame) {
        return active.send(frame);
    }

    @Override
    public void subscribe(String minionId, int publishPort) {
        active.subscribe(minionId, publishPort);
    }

    /**
     * The minion's request (auth or heartbeat) went unanswered for {@code auth_timeout}: the next master of the list.
     *
     * @return true: {@link Listener#onConnected()} follows when the new master's connection is up, told by its
     *     transport and only then (a second, earlier event made the minion send its request twice: its resumption,
     *     then a full auth that overtook it); false when closed or the next master's transport could not be made
     *     (the next unanswered request tries the one after)
     */
    @Override
    public synchronized boolean reconnect() {
        if (closed) {
            return false;
        }
        String from = currentMaster();
        index = (index + 1) % masters.size();
        LOG.warn("Failover: master {} left a request unanswered; moving to {}", from, currentMaster());
        active.close();
        try {
            active = connector.connect(currentMaster());
            active.start(listener);
        } catch (IOException | RuntimeException e) {
            LOG.warn("Failover: cannot connect to master {}: {}", currentMaster(), e.getMessage());
            return false;
        }
        return true;
    }

    @Override
    public synchronized void close() {
        closed = true;
        ClientTransport current = active;
        if (current != null) {
            current.close();
        }
    }
}

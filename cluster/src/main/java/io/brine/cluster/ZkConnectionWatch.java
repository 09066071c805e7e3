package io.brine.cluster;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows one master's ZooKeeper connection as Curator reports it and answers {@link ClusterHealth}: whether a
 * change can be written now, and since when it could not.
 */
final class ZkConnectionWatch implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ZkConnectionWatch.class);

    private final CuratorFramework client;
    private final Clock clock;
    /** How long a write waits for a lost connection to come back before it is answered without the cluster. */
    private final Duration reconnectGrace;

    private final ConnectionStateListener listener = (c, state) -> changed(state);
    private volatile ClusterHealth health;

    private ZkConnectionWatch(CuratorFramework client, Clock clock, Duration reconnectGrace) {
        this.client = client;
        this.clock = clock;
        this.reconnectGrace = reconnectGrace;
        this.health = new ClusterHealth(
                client.getZookeeperClient().isConnected()
                        ? ClusterHealth.State.CONNECTED
                        : ClusterHealth.State.DISCONNECTED,
                clock.instant());
    }

    static ZkConnectionWatch start(CuratorFramework client, Clock clock, Duration reconnectGrace) {
        ZkConnectionWatch watch = new ZkConnectionWatch(client, clock, reconnectGrace);
        client.getConnectionStateListenable().addListener(watch.listener);
        return watch;
    }

    ClusterHealth health() {
        return health;
    }

    private void changed(ConnectionState state) {
        ClusterHealth.State next = switch (state) {
            case CONNECTED, RECONNECTED -> ClusterHealth.State.CONNECTED;
            case SUSPENDED, READ_ONLY -> ClusterHealth.State.DISCONNECTED;
            case LOST -> ClusterHealth.State.SESSION_EXPIRED;
        };
        synchronized (this) {
            // Curator may say "suspended" again while it makes a new session after the old one expired.
            if (health.state() != next
                    && !(health.state() == ClusterHealth.State.SESSION_EXPIRED
                            && next == ClusterHealth.State.DISCONNECTED)) {
                health = new ClusterHealth(next, clock.instant());
            }
        }
        log.debug("Cluster: ZooKeeper connection {}; {}", state, health.describe());
    }

    /**
     * The health a write goes on: a connection lost less than the reconnect grace ago is waited for (one server
     * of three stopping costs a reconnect to another, which nobody should see); after that, or with the session
     * expired, the answer is at once.
     */
    ClusterHealth awaitWritable() {
        ClusterHealth now = health;
        if (now.state() != ClusterHealth.State.DISCONNECTED) {
            return now;
        }
        long left = Duration.between(clock.instant(), now.since().plus(reconnectGrace))
                .toMillis();
        if (left > 0) {
            try {
                client.blockUntilConnected((int) Math.min(left, Integer.MAX_VALUE), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        ClusterHealth after = health;
        // The listener hears of a reconnection a moment after the client has it.
        return !after.writable() && client.getZookeeperClient().isConnected()
                ? new ClusterHealth(ClusterHealth.State.CONNECTED, clock.instant())
                : after;
    }

    @Override
    public void close() {
        client.getConnectionStateListenable().removeListener(listener);
    }
}

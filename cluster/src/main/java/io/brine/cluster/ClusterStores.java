package io.brine.cluster;

import io.brine.daemon.config.ClusterConfig;
import io.brine.daemon.config.MasterConfig;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.MasterKeys;
import io.brine.store.policy.SpentRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a master in cluster mode shares through ZooKeeper, opened from {@code master.yaml}'s {@code cluster:}: the
 * connection, the key store and the spent grants and tokens. The master key pair is read from {@code pki_dir}
 * and never generated (every master has the cluster's one pair). Closing closes all of it.
 */
public final class ClusterStores implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ClusterStores.class);

    private final ClusterConfig config;
    private final CuratorFramework client;
    private final ZkKeyStore keyStore;
    private final Clock clock;

    private ClusterStores(ClusterConfig config, CuratorFramework client, ZkKeyStore keyStore, Clock clock) {
        this.config = config;
        this.client = client;
        this.keyStore = keyStore;
        this.clock = clock;
    }

    /**
     * Connects and reads the cluster's keys.
     *
     * @param masterKey whether to load the installed master key pair (the daemon); false for brine-key
     */
    public static ClusterStores open(MasterConfig master, AuditLog audit, Clock clock, boolean masterKey)
            throws IOException, KeyStoreException {
        Duration within = master.cluster()
                .map(ClusterConfig::connectTimeout)
                .orElseThrow(() -> new IllegalArgumentException("no cluster"));
        Checked checked = connectChecked(master, masterKey, within);
        ClusterConfig config = checked.config();
        CuratorFramework client = checked.client();
        KeyPair pair = checked.pair();
        try {
            client.getConnectionStateListenable().addListener((c, state) -> {
                if (state == ConnectionState.LOST) {
                    log.warn(
                            "Cluster {}{}: ZooKeeper session lost; admin changes are refused until it is back",
                            config.connect(),
                            config.root());
                } else if (state == ConnectionState.SUSPENDED) {
                    log.warn(
                            "Cluster {}{}: disconnected from ZooKeeper; serving from the last view",
                            config.connect(),
                            config.root());
                } else if (state == ConnectionState.RECONNECTED) {
                    log.info("Cluster {}{}: reconnected to ZooKeeper", config.connect(), config.root());
                }
            });
            ZkKeyStore store = ZkKeyStore.open(
                    client,
                    new ZkKeyStoreOptions(
                            master.pkiDir(),
                            pair,
                            audit,
                            clock,
                            master.maxPending(),
                            master.maxMinions(),
                            1000,
                            ZkKeyStoreOptions.RECONNECT_GRACE),
                    Duration.ofSeconds(30));
            log.info(
                    "Cluster {}{}: {} accepted keys",
                    config.connect(),
                    config.root(),
                    store.acceptedIds().size());
            return new ClusterStores(config, client, store, clock);
        } catch (IOException | RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * What the master checks of its {@code cluster:} section when it starts, made for {@code brine-master
     * --check-config} by the same code: auth or the open-ACL consent, the installed master key pair, the password
     * file (trusted, mode, not empty), the ensemble reached within {@code within}, the root's ACL and the layout's
     * {@code /format}. It writes nothing of its own (Curator makes a missing root, with this master's ACL, as a
     * start would).
     *
     * @throws IOException or KeyStoreException with the message the master would stop with
     */
    public static void check(MasterConfig master, Duration within) throws IOException, KeyStoreException {
        try (CuratorFramework client = connectChecked(master, true, within).client()) {
            ZkKeyStore.requireFormat(client, false);
        }
    }

    private record Checked(ClusterConfig config, KeyPair pair, CuratorFramework client) {}

    /** Everything the master requires of its cluster before it reads the keys; the client connected. */
    private static Checked connectChecked(MasterConfig master, boolean masterKey, Duration within)
            throws IOException, KeyStoreException {
        ClusterConfig config = master.cluster().orElseThrow(() -> new IllegalArgumentException("no cluster"));
        ClusterAcl.requireAuthOrConsent(config);
        KeyPair pair = masterKey ? MasterKeys.loadInstalled(master.pkiDir()) : null;
        CuratorFramework client = ClusterConnection.open(config, within);
        try {
            if (config.auth().isPresent()) {
                ClusterAcl.requireCreatorOnly(client, config);
            } else {
                log.warn(
                        "Cluster {}{}: no auth (insecure_open_acl: true): anyone who reaches the ensemble can"
                                + " change the cluster's keys",
                        config.connect(),
                        config.root());
            }
            return new Checked(config, pair, client);
        } catch (IOException | RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * The cluster's key store alone, for brine-key on a master host: no master key pair, and closing the store
     * closes its connection.
     */
    public static ZkKeyStore openKeyStore(MasterConfig master, AuditLog audit, Clock clock)
            throws IOException, KeyStoreException {
        ClusterStores stores = open(master, audit, clock, false);
        stores.keyStore.closeWith(stores.client);
        return stores.keyStore;
    }

    /** Whether this master can change the cluster's state now (logged as it changes). */
    public ClusterHealth health() {
        return keyStore.health();
    }

    /**
     * As {@link #health()}, after waiting for a connection lost less than 5 s ago ({@link
     * ZkKeyStoreOptions#RECONNECT_GRACE}) to come back (one server of three
     * stopping costs a reconnect to another): what a write made now would meet.
     */
    public ClusterHealth awaitWritable() {
        return keyStore.awaitWritable();
    }

    public KeyStore keyStore() {
        return keyStore;
    }

    public CuratorFramework client() {
        return client;
    }

    public ClusterConfig config() {
        return config;
    }

    /** The shared record {@code name} ({@code spent_grants}, {@code spent_tokens}). */
    public SpentRecord spent(String name) {
        try {
            return ZkSpentRecord.open(client, name, clock);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        keyStore.close();
        client.close();
    }
}

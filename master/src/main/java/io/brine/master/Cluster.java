package io.brine.master;

import io.brine.cluster.ClusterHealth;
import io.brine.cluster.ClusterStores;
import io.brine.cluster.ZkJobIndex;
import io.brine.cluster.ZkMasterKeys;
import io.brine.cluster.ZkPublications;
import io.brine.cluster.ZkPublishGeneration;
import io.brine.cluster.ZkTicketKeys;
import io.brine.daemon.config.MasterConfig;
import io.brine.master.auth.MasterKeyring;
import io.brine.master.jobs.ClusterJobs;
import io.brine.master.jobs.SharedJobs;
import io.brine.master.metrics.MasterMetrics;
import io.brine.master.publish.ClusterPublications;
import io.brine.master.publish.SharedPublications;
import io.brine.master.resume.TicketKeys;
import io.brine.master.session.ClusterPublishKey;
import io.brine.master.session.SharedPublishKey;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.policy.AcceptancePolicies;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a master shares with the other masters of its cluster ({@code cluster:} in master.yaml: the key store and spent
 * records in ZooKeeper, the publish key generation, jobs and publications), or keeps to itself when it is alone (the
 * key store in {@code pki_dir}, spent records in {@code cachedir}, and nothing shared). {@link MasterDaemon} wires the
 * same parts either way.
 */
sealed interface Cluster extends AutoCloseable permits Cluster.Alone, Cluster.Joined {

    /** Opens the key store, and for a cluster the connection to ZooKeeper. */
    static Cluster open(MasterConfig config, AuditLog audit, Clock clock) throws IOException, KeyStoreException {
        if (config.cluster().isPresent()) {
            return new Joined(ClusterStores.open(config, audit, clock, true), config, clock);
        }
        return new Alone(
                FileKeyStore.open(KeyStoreOptions.builder(config.pkiDir())
                        .auditLog(audit)
                        .keysize(config.keysize())
                        .maxPending(config.maxPending())
                        .maxMinions(config.maxMinions())
                        .build()),
                config,
                clock);
    }

    KeyStore keyStore();

    /** The configured acceptance policies, with their spent grants and tokens kept where the cluster keeps them. */
    AcceptancePolicies policies(AuditLog audit);

    /** Job records and returns shared with the other masters: a new one per call (the daemon asks once). */
    SharedJobs jobs();

    /** Jobs forwarded between the masters; the daemon starts and closes them. */
    SharedPublications publications(SharedJobs jobs, KeyPair masterKeys);

    /** The publish key generation the masters agree on; the master closes it. */
    SharedPublishKey publishKey(KeyPair masterKeys);

    /**
     * The keys that seal resumption tickets: {@code pki_dir/ticket_keys} for a master alone, the cluster's (in
     * ZooKeeper, wrapped and signed with the master key) for a master of a cluster; the daemon closes them.
     */
    TicketKeys ticketKeys(KeyPair masterKeys) throws IOException;

    /**
     * The master key in force and its rotations, from {@code installed} (this master's {@code master.pem}): {@code
     * pki_dir}'s for a master alone, the cluster's {@code /master_key} for a master of a cluster; {@code signPub}:
     * {@code master_sign.pub} when Salt minions are to be sent {@code pub_sig} (only a master alone keeps one).
     */
    MasterKeyring masterKeys(KeyPair installed, Optional<Path> signPub) throws IOException, KeyStoreException;

    /** The cluster's gauges. */
    void watch(MasterMetrics metrics);

    /** What keeps the master from being ready, as far as its stores go. */
    Optional<String> problem();

    /** Closes the key store (and the connection to ZooKeeper). */
    @Override
    void close();

    /** A master alone: the key store on disk, nothing shared. */
    record Alone(KeyStore keyStore, MasterConfig config, Clock clock) implements Cluster {

        @Override
        public AcceptancePolicies policies(AuditLog audit) {
            return AcceptancePolicies.fromConfig(config, keyStore, clock, audit);
        }

        @Override
        public SharedJobs jobs() {
            return SharedJobs.alone();
        }

        @Override
        public SharedPublications publications(SharedJobs jobs, KeyPair masterKeys) {
            return SharedPublications.alone();
        }

        @Override
        public SharedPublishKey publishKey(KeyPair masterKeys) {
            return SharedPublishKey.alone();
        }

        @Override
        public TicketKeys ticketKeys(KeyPair masterKeys) throws IOException {
            return TicketKeys.open(config.pkiDir().resolve(TicketKeys.FILE), clock);
        }

        @Override
        public MasterKeyring masterKeys(KeyPair installed, Optional<Path> signPub)
                throws IOException, KeyStoreException {
            return MasterKeyring.open(config.pkiDir(), installed, clock, signPub);
        }

        @Override
        public void watch(MasterMetrics metrics) {}

        @Override
        public Optional<String> problem() {
            return Files.isReadable(config.pkiDir().resolve(KeyState.ACCEPTED.dirName()))
                    ? Optional.empty()
                    : Optional.of("key store not readable: " + config.pkiDir());
        }

        @Override
        public void close() {
            keyStore.close();
        }
    }

    /** A master of a cluster: the stores in ZooKeeper, shared with the other masters. */
    record Joined(ClusterStores stores, MasterConfig config, Clock clock) implements Cluster {

        @Override
        public KeyStore keyStore() {
            return stores.keyStore();
        }

        @Override
        public AcceptancePolicies policies(AuditLog audit) {
            return AcceptancePolicies.fromConfig(config, keyStore(), clock, audit, stores::spent);
        }

        @Override
        public SharedJobs jobs() {
            return new ClusterJobs(new ZkJobIndex(stores.client(), clock), masterName());
        }

        @Override
        public SharedPublications publications(SharedJobs jobs, KeyPair masterKeys) {
            return new ClusterPublications(
                    new ZkPublications(stores.client(), clock, masterName()),
                    jobs,
                    masterKeys,
                    clock,
                    masterName(),
                    stores::awaitWritable);
        }

        @Override
        public SharedPublishKey publishKey(KeyPair masterKeys) {
            return new ClusterPublishKey(new ZkPublishGeneration(stores.client(), masterKeys));
        }

        @Override
        public TicketKeys ticketKeys(KeyPair masterKeys) throws IOException {
            return TicketKeys.shared(new ZkTicketKeys(stores.client(), masterKeys), clock);
        }

        /** Its watch goes with the connection to ZooKeeper. */
        @Override
        public MasterKeyring masterKeys(KeyPair installed, Optional<Path> signPub)
                throws IOException, KeyStoreException {
            return MasterKeyring.cluster(new ZkMasterKeys(stores.client()), installed, clock, signPub);
        }

        /**
         * Whether it can write to ZooKeeper, whether its session is lost, and the key transitions it hears through
         * ZooKeeper.
         */
        @Override
        public void watch(MasterMetrics metrics) {
            metrics.gauge(
                    "brine.cluster.writable",
                    "1 while this master can write to the cluster's ZooKeeper;"
                            + " 0 while it serves from its last view (no quorum, session expired)",
                    stores,
                    cluster -> cluster.health().writable() ? 1 : 0);
            metrics.gauge(
                    "brine.cluster.session.expired",
                    "1 while this master's ZooKeeper session is lost (not" + " ready)",
                    stores,
                    cluster -> cluster.health().state() == ClusterHealth.State.SESSION_EXPIRED ? 1 : 0);
            AtomicLong transitions = new AtomicLong();
            keyStore().addListener(change -> transitions.incrementAndGet()); // closed with the key store
            metrics.counter(
                    "brine.cluster.key.transitions",
                    "Key state changes heard through ZooKeeper (made through" + " any master or brine-key)",
                    transitions,
                    AtomicLong::get);
        }

        /** Disconnected for less than session_timeout (a server restarting) keeps it ready; a lost session not. */
        @Override
        public Optional<String> problem() {
            return stores.health().state() == ClusterHealth.State.SESSION_EXPIRED
                    ? Optional.of(stores.health().describe())
                    : Optional.empty();
        }

        /** How this master is named in the cluster's stubs of returns it keeps: its host and cache directory. */
        private String masterName() {
            String host;
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (IOException e) {
                host = config.interfaceAddress();
            }
            return host + ":" + config.cachedir();
        }

        @Override
        public void close() {
            stores.close();
        }
    }
}

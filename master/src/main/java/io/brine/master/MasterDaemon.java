package io.brine.master;

import io.brine.cluster.ClusterHealth;
import io.brine.cluster.ClusterStores;
import io.brine.cluster.ZkJobIndex;
import io.brine.cluster.ZkPublications;
import io.brine.cluster.ZkPublishGeneration;
import io.brine.daemon.DaemonLogging;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.daemon.files.AtomicFiles;
import io.brine.daemon.http.MetricsServer;
import io.brine.master.auth.AuditedAuth;
import io.brine.master.auth.AuthService;
import io.brine.master.auth.AuthWorkBudget;
import io.brine.master.auth.SeenAuthRequests;
import io.brine.master.auth.SourceRateLimiter;
import io.brine.master.auth.StoreWrites;
import io.brine.master.events.EventStream;
import io.brine.master.jobs.ActiveJobs;
import io.brine.master.jobs.ClusterJobs;
import io.brine.master.jobs.JobCache;
import io.brine.master.metrics.MasterMetrics;
import io.brine.master.metrics.MeteredAuthAudit;
import io.brine.master.publish.ClusterPublications;
import io.brine.master.publish.GrainsStore;
import io.brine.master.publish.JobPublisher;
import io.brine.master.publish.PublisherService;
import io.brine.master.salt.SaltKeys;
import io.brine.master.salt.SaltPublisher;
import io.brine.master.salt.SaltService;
import io.brine.master.session.ClusterPublishKey;
import io.brine.master.session.PublishKeyring;
import io.brine.master.session.SessionService;
import io.brine.master.session.SessionTable;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.target.Nodegroups;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.transport.CompositeServerTransport;
import io.brine.transport.ServerTransport;
import io.brine.transport.UndeliveredListener;
import io.brine.transport.tcp.TcpServerOptions;
import io.brine.transport.tcp.TcpServerTransport;
import io.brine.transport.tcp.TcpTls;
import io.brine.transport.zmtp.ZmtpServerOptions;
import io.brine.transport.zmtp.ZmtpServerTransport;
import java.io.IOException;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wires a {@link Master} from {@code master.yaml}, by constructor and in dependency order: audit log, key store, job
 * cache and policies; the sessions, publish key and grains; the jobs in flight, which the transport reports
 * undelivered publications to; the transport; the job publisher and the handlers; the inbound dispatcher over them;
 * the master.
 */
public final class MasterDaemon implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MasterDaemon.class);
    private static final int PENDING_RETRY_SECONDS = 0;
    /** Source addresses the auth rate limiter remembers at most. */
    private static final int MAX_RATED_SOURCES = 100_000;

    private final AuditLog audit;
    private final KeyStore keyStore;
    /** The cluster's connection and shared stores; null for a master alone. */
    private final ClusterStores cluster;
    /** Publications forwarded between the cluster's masters; null for a master alone. */
    private final ClusterPublications clusterPublications;
    private final JobCache jobCache;
    private final AcceptancePolicies policies;
    private final Master master;
    private final MasterMetrics metrics;
    private final MetricsServer http;
    private final SeenAuthRequests seen;

    private MasterDaemon(AuditLog audit, KeyStore keyStore, ClusterStores cluster,
            ClusterPublications clusterPublications, JobCache jobCache, AcceptancePolicies policies, Master master,
            MasterMetrics metrics, MetricsServer http, SeenAuthRequests seen) {
        this.seen = seen;
        this.clusterPublications = clusterPublications;
        this.audit = audit;
        this.keyStore = keyStore;
        this.cluster = cluster;
        this.jobCache = jobCache;
        this.policies = policies;
        this.master = master;
        this.metrics = metrics;
        this.http = http;
    }

    /** Opens everything and starts serving; closes what it opened if a step fails. */
    public static MasterDaemon start(MasterConfig config, Clock clock)
            throws IOException, KeyStoreException, KeyFormatException {
        return start(config, clock, undelivered -> transport(config, undelivered));
    }

    /** Opens the transport(s) the master serves; they report publications they could not deliver to the listener. */
    @FunctionalInterface
    interface Transports {
        ServerTransport open(UndeliveredListener undelivered) throws IOException;
    }

    /**
     * Wires the master by constructor, in dependency order, and starts it: the stores, the domain, the transport,
     * the handlers and the dispatcher over them, the master. Tests give their own {@code transports}.
     */
    static MasterDaemon start(MasterConfig config, Clock clock, Transports transports)
            throws IOException, KeyStoreException, KeyFormatException {
        List<AutoCloseable> opened = new ArrayList<>();
        try {
            AtomicFiles.ensureDirectory(config.cachedir());
            AuditLog audit = AuditLog.openFile(config.auditLog(), clock);
            opened.add(audit);
            ClusterStores cluster = null;
            KeyStore keyStore;
            if (config.cluster().isPresent()) {
                cluster = ClusterStores.open(config, audit, clock, true);
                opened.add(cluster);
                keyStore = cluster.keyStore();
            } else {
                keyStore = FileKeyStore.open(KeyStoreOptions.builder(config.pkiDir()).auditLog(audit)
                        .keysize(config.keysize()).maxPending(config.maxPending()).maxMinions(config.maxMinions())
                        .build());
                opened.add(keyStore);
            }
            KeyPair masterKeys = keyStore.masterKeyPair();
            RSAPublicKey rootKey = (RSAPublicKey) PublisherService.loadOrCreateRootKey(config.cachedir(),
                    config.keysize()).getPublic();
            ClusterJobs clusterJobs = cluster == null ? null
                    : new ClusterJobs(new ZkJobIndex(cluster.client(), clock), masterName(config));
            JobCache jobCache = new JobCache(config.cachedir().resolve("jobs"), config.keepJobs(),
                    config.jobCacheMaxMib() * 1024L * 1024L, clock, clusterJobs);
            opened.add(jobCache);
            ClusterPublications clusterPublications = cluster == null ? null
                    : new ClusterPublications(new ZkPublications(cluster.client(), clock, masterName(config)),
                            clusterJobs, masterKeys, clock, masterName(config));
            if (clusterPublications != null) {
                opened.add(clusterPublications);
            }
            AcceptancePolicies policies = cluster == null ? AcceptancePolicies.fromConfig(config, keyStore, clock, audit)
                    : AcceptancePolicies.fromConfig(config, keyStore, clock, audit, cluster::spent);
            opened.add(policies);

            MasterMetrics metrics = new MasterMetrics(new EventStream(clock)).withJvm();
            StoreWrites writes = new StoreWrites(clock);
            metrics.counter("brine.audit.failed", "Audit lines that could not be written (a full disk): an answer "
                    + "that grants nothing went out without its line, a session or a publish was refused", writes,
                    StoreWrites::auditFailures);
            SessionTable sessions = new SessionTable();
            PublishKeyring keyring = new PublishKeyring(clock);
            GrainsStore grains = new GrainsStore(policies::classification, clock);
            ActiveJobs active = new ActiveJobs(jobCache, audit, clock, metrics);
            ServerTransport transport = transports.open(active);
            opened.add(transport);
            SaltKeys saltKeys = null;
            if (config.saltMinions()) {
                saltKeys = new SaltKeys(masterKeys, () -> transport.addresses().publish().getPort(), keyStore);
                keyring.onRotate(saltKeys::rotate); // Salt's aes rotates with brine's publish key
                opened.add(keyStore.addListener(saltKeys::onKeyChange));
            }
            JobPublisher jobs = new JobPublisher(keyStore, grains, keyring, transport, masterKeys.getPrivate(),
                    jobCache, active, audit, clock,
                    saltKeys == null ? null : new SaltPublisher(saltKeys, masterKeys.getPrivate()),
                    clusterPublications, writes);
            SeenAuthRequests seen = SeenAuthRequests.open(config.cachedir().resolve(SeenAuthRequests.FILE), clock);
            opened.add(seen);
            AuthWorkBudget budget = new AuthWorkBudget(config.authWorkBudget(), clock);
            metrics.authWorkBudget(budget);
            AuthService auth = new AuthService(keyStore, policies, sessions, keyring,
                    new MeteredAuthAudit(new AuditedAuth(audit), metrics), clock, transport::publishPort,
                    PENDING_RETRY_SECONDS, seen, budget, writes);
            SessionService sessionService = new SessionService(sessions, keyring, masterKeys.getPrivate(), clock);
            PublisherService publishers = new PublisherService(config.pkiDir(), rootKey, config.publisherAcl(),
                    Nodegroups.of(config.nodegroups()), sessions, jobs, masterKeys, audit, clock, budget, writes);
            SourceRateLimiter authRate = new SourceRateLimiter(config.authRatePerSource(), config.authBurst(),
                    MAX_RATED_SOURCES, System::nanoTime);
            SaltService salt = saltKeys == null ? null
                    : new SaltService(keyStore, policies, saltKeys,
                            new MeteredAuthAudit(new AuditedAuth(audit), metrics), grains, active,
                            config.maxReturnBytes(), clock, budget, writes);
            InboundDispatcher dispatcher = new InboundDispatcher(transport, authRate, budget, auth, sessionService,
                    publishers, active, grains, salt, config.workerThreads(), config.maxReturnBytes(), clock,
                    metrics);
            Master master = new Master(keyStore, transport, new Master.Parts(sessions, keyring, grains, jobs,
                    dispatcher, metrics), audit, config.publishSession(), clock,
                    cluster == null ? null : new ClusterPublishKey(new ZkPublishGeneration(cluster.client(),
                            masterKeys)));
            opened.remove(transport); // the master closes it
            opened.add(master);
            master.start();
            if (clusterPublications != null) {
                // After the transport is up: the other masters wait for this one's delivery reports from now on.
                clusterPublications.start(jobs::deliverForwarded);
            }
            watch(metrics, config, keyStore, sessions, keyring, jobCache, dispatcher, policies);
            if (cluster != null) {
                watchCluster(metrics, keyStore, cluster);
            }
            MetricsServer http = null;
            if (config.httpPort().isPresent()) {
                ClusterStores clusterStores = cluster;
                http = MetricsServer.start(config.httpInterface(), config.httpPort().getAsInt(), "brine-master",
                        metrics::scrape, () -> readiness(config, master, clusterStores, writes));
            }
            return new MasterDaemon(audit, keyStore, cluster, clusterPublications, jobCache, policies, master,
                    metrics, http, seen);
        } catch (IOException | KeyStoreException | KeyFormatException | RuntimeException e) {
            for (int i = opened.size() - 1; i >= 0; i--) {
                try {
                    opened.get(i).close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    /** The gauges, read at scrape time from the parts that hold the state. */
    private static void watch(MasterMetrics metrics, MasterConfig config, KeyStore keyStore, SessionTable sessions,
            PublishKeyring keyring, JobCache jobCache, InboundDispatcher dispatcher, AcceptancePolicies policies) {
        metrics.keys(keyStore);
        keyStore.addListener(metrics::keyChanged); // closed with the key store
        metrics.gauge("brine.event.subscribers", "Publisher sessions subscribed to events", metrics.events(),
                EventStream::subscribers);
        metrics.sessions(config.transports().stream().map(kind -> kind.name().toLowerCase(java.util.Locale.ROOT))
                .toList(), () -> sessions.all().stream().map(session -> session.peer().transportName()).toList());
        metrics.rotations(keyring, ring -> ring.current().number());
        metrics.gauge("brine.job.cache.bytes", "Bytes the job cache holds on disk", jobCache, JobCache::sizeBytes);
        metrics.gauge("brine.queue.auth", "Auth requests of accepted keys and loopback publishers waiting for a "
                + "worker", dispatcher, InboundDispatcher::authQueueDepth);
        metrics.gauge("brine.queue.auth.strangers", "Other unauthenticated requests waiting for a worker (new and "
                + "unknown keys, Salt's _auth, remote publishers)", dispatcher, InboundDispatcher::strangerQueueDepth);
        metrics.gauge("brine.queue.session", "Session frames waiting for a worker", dispatcher,
                InboundDispatcher::sessionQueueDepth);
        metrics.counter("brine.frames.dropped", "Frames dropped before a handler saw them (malformed, over a "
                + "limit or a rate, queue full)", dispatcher, InboundDispatcher::droppedFrames);
        metrics.policies(policies);
    }

    /**
     * A cluster master's gauges: whether it can write to ZooKeeper, whether its session is lost, and the key
     * transitions it hears through ZooKeeper.
     */
    private static void watchCluster(MasterMetrics metrics, KeyStore keyStore, ClusterStores cluster) {
        metrics.gauge("brine.cluster.writable", "1 while this master can write to the cluster's ZooKeeper;"
                + " 0 while it serves from its last view (no quorum, session expired)", cluster,
                stores -> stores.health().writable() ? 1 : 0);
        metrics.gauge("brine.cluster.session.expired", "1 while this master's ZooKeeper session is lost (not ready)",
                cluster, stores -> stores.health().state() == ClusterHealth.State.SESSION_EXPIRED ? 1 : 0);
        java.util.concurrent.atomic.AtomicLong transitions = new java.util.concurrent.atomic.AtomicLong();
        keyStore.addListener(change -> transitions.incrementAndGet()); // closed with the key store
        metrics.counter("brine.cluster.key.transitions", "Key state changes heard through ZooKeeper (made through"
                + " any master or brine-key)", transitions, java.util.concurrent.atomic.AtomicLong::get);
    }

    /**
     * What keeps the master from being ready: a write failed within {@link StoreWrites#NOT_READY_FOR} and none
     * succeeded since, the key store unreadable (a master alone) or the ZooKeeper session
     * lost (a cluster's), the transports not serving, no session keys.
     */
    private static List<String> readiness(MasterConfig config, Master master, ClusterStores cluster,
            StoreWrites writes) {
        List<String> problems = new ArrayList<>();
        // A full disk: auth and publish answer "try later" until a write succeeds (or a minute passes without one).
        writes.problem().ifPresent(problems::add);
        if (cluster != null && cluster.health().state() == ClusterHealth.State.SESSION_EXPIRED) {
            // Disconnected for less than session_timeout (a server restarting) keeps it ready; a lost session not.
            problems.add(cluster.health().describe());
        }
        if (config.cluster().isEmpty()
                && !java.nio.file.Files.isReadable(config.pkiDir().resolve(KeyState.ACCEPTED.dirName()))) {
            problems.add("key store not readable: " + config.pkiDir());
        }
        if (!master.serving()) {
            problems.add("transports not serving");
        }
        if (master.keyring().current() == null) {
            problems.add("no publish session key");
        }
        return problems;
    }

    /** How this master is named in the cluster's stubs of returns it keeps: its host and cache directory. */
    private static String masterName(MasterConfig config) {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = config.interfaceAddress();
        }
        return host + ":" + config.cachedir();
    }

    /**
     * The transport(s) {@code transport} names; several are served at once by a {@link CompositeServerTransport}.
     * Each reports to {@code undelivered} the publications it took but then could not queue. Their connection caps
     * are fitted to the process's file limit ({@link ConnectionCaps}); caps set in master.yaml that do not fit are
     * an IOException (brine-master refuses them before, with exit 2).
     */
    static ServerTransport transport(MasterConfig config, UndeliveredListener undelivered) throws IOException {
        ConnectionCaps.Fit fit = ConnectionCaps.fit(config);
        if (fit instanceof ConnectionCaps.Refused refused) {
            throw new IOException(refused.message());
        }
        List<ServerTransport> members = new ArrayList<>();
        for (TransportKind kind : config.transports()) {
            ConnectionCaps.Caps caps = ConnectionCaps.of(fit, config, kind);
            members.add(switch (kind) {
                case ZEROMQ -> new ZmtpServerTransport(config.interfaceAddress(), config.retPort(),
                        config.publishPort(), ZmtpServerOptions.defaults().withConnectionLimits(caps.max(),
                                caps.unauthenticated(), caps.perSource()), null, undelivered,
                        config.saltMinions()); // Salt's TCP transport shares the ZeroMQ ports
                case TCP -> new TcpServerTransport(config.interfaceAddress(), config.tcpPort(),
                        TcpServerOptions.defaults().withConnectionLimits(caps.max(), caps.unauthenticated(),
                                caps.perSource()), config.tls().isPresent()
                                ? TcpTls.server(config.tls().get().cert(), config.tls().get().key()) : null,
                        null, undelivered);
            });
        }
        return members.size() == 1 ? members.get(0) : new CompositeServerTransport(members);
    }

    public Master master() {
        return master;
    }

    public KeyStore keyStore() {
        return keyStore;
    }

    /**
     * Reopens the audit log and the operational log file at their paths (SIGHUP, after logrotate moved them). A
     * failure is logged and the old files stay in use.
     */
    public void reopenLogs() {
        DaemonLogging.reopen();
        try {
            audit.reopen();
            LOG.info("Logs reopened: audit log {}", audit.file());
        } catch (IOException e) {
            LOG.error("Audit log {} not reopened, still writing to the old file: {}", audit.file(), e.getMessage());
        }
    }

    public MasterMetrics metrics() {
        return metrics;
    }

    /** The port of {@code /metrics}, {@code /healthz} and {@code /readyz}; 0 when {@code http_port} is unset. */
    public int httpPort() {
        return http == null ? 0 : http.port();
    }

    @Override
    public void close() {
        if (http != null) {
            http.close();
        }
        master.close();
        seen.close(); // after the auth workers, which the master stopped
        if (clusterPublications != null) {
            clusterPublications.close();
        }
        policies.close();
        jobCache.close();
        if (cluster != null) {
            cluster.close();
        } else {
            keyStore.close();
        }
        audit.close();
        LOG.info("Master stopped");
    }
}

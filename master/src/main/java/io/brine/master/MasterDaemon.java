package io.brine.master;

import com.github.benmanes.caffeine.cache.Ticker;
import io.brine.daemon.DaemonLogging;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.daemon.files.AtomicFiles;
import io.brine.daemon.http.MetricsServer;
import io.brine.master.api.ApiServer;
import io.brine.master.auth.AuditedAuth;
import io.brine.master.auth.AuthService;
import io.brine.master.auth.AuthWorkBudget;
import io.brine.master.auth.KeyRotationService;
import io.brine.master.auth.MasterKeyring;
import io.brine.master.auth.SeenAuthRequests;
import io.brine.master.auth.SourceRateLimiter;
import io.brine.master.auth.StoreWrites;
import io.brine.master.events.EventStream;
import io.brine.master.jobs.ActiveJobs;
import io.brine.master.jobs.JobCache;
import io.brine.master.jobs.SharedJobs;
import io.brine.master.metrics.MasterMetrics;
import io.brine.master.metrics.MeteredAuthAudit;
import io.brine.master.publish.GrainsStore;
import io.brine.master.publish.JobPublisher;
import io.brine.master.publish.PublisherService;
import io.brine.master.publish.SaltEnvelopes;
import io.brine.master.publish.SharedPublications;
import io.brine.master.resume.ResumeService;
import io.brine.master.resume.TicketKeys;
import io.brine.master.salt.FileRoots;
import io.brine.master.salt.SaltFileServer;
import io.brine.master.salt.SaltFrames;
import io.brine.master.salt.SaltInbound;
import io.brine.master.salt.SaltKeys;
import io.brine.master.salt.SaltPublisher;
import io.brine.master.salt.SaltService;
import io.brine.master.session.PublishKeyring;
import io.brine.master.session.SessionService;
import io.brine.master.session.SessionTable;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.targeting.Nodegroups;
import io.brine.store.audit.AuditLog;
import io.brine.store.audit.FileAuditLog;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
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
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;
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

    private final FileAuditLog audit;
    /** The key store and what this master shares with the others of its cluster, or keeps alone. */
    private final Cluster cluster;
    /** Publications forwarded between the cluster's masters. */
    private final SharedPublications publications;

    private final JobCache jobCache;
    private final AcceptancePolicies policies;
    private final Master master;
    private final MasterMetrics metrics;
    /** {@code brine events} and the API's event stream. */
    private final EventStream events;
    /** {@code /metrics}, {@code /healthz} and {@code /readyz}, when {@code http_port} is set. */
    private final Optional<MetricsServer> http;

    private final SeenAuthRequests seen;
    /** The keys that seal resumption tickets (in a cluster: its watch of the cluster's). */
    private final TicketKeys ticketKeys;
    /** The HTTP API, when {@code api:} is configured. */
    private final Optional<ApiServer> api;

    private MasterDaemon(
            FileAuditLog audit,
            Cluster cluster,
            SharedPublications publications,
            JobCache jobCache,
            AcceptancePolicies policies,
            Master master,
            MasterMetrics metrics,
            EventStream events,
            Optional<MetricsServer> http,
            Optional<ApiServer> api,
            SeenAuthRequests seen,
            TicketKeys ticketKeys) {
        this.api = api;
        this.ticketKeys = ticketKeys;
        this.seen = seen;
        this.publications = publications;
        this.audit = audit;
        this.cluster = cluster;
        this.jobCache = jobCache;
        this.policies = policies;
        this.master = master;
        this.metrics = metrics;
        this.events = events;
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
            FileAuditLog audit = AuditLog.openFile(config.auditLog(), clock);
            opened.add(audit);
            Cluster cluster = Cluster.open(config, audit, clock);
            opened.add(cluster);
            KeyStore keyStore = cluster.keyStore();
            KeyPair masterKeys = keyStore.masterKeyPair();
            // brine-key --rotate-master-key: in pki_dir for a master alone, in ZooKeeper for a cluster's masters.
            MasterKeyring masterKeyring =
                    cluster.masterKeys(masterKeys, config.saltMinions() ? config.masterSignPub() : Optional.empty());
            RSAPublicKey rootKey =
                    (RSAPublicKey) PublisherService.loadOrCreateRootKey(config.cachedir(), config.keysize())
                            .getPublic();
            SharedJobs sharedJobs = cluster.jobs();
            JobCache jobCache = new JobCache(
                    config.cachedir().resolve("jobs"),
                    config.keepJobs(),
                    config.jobCacheMaxMib() * 1024L * 1024L,
                    clock,
                    sharedJobs);
            opened.add(jobCache);
            SharedPublications publications = cluster.publications(sharedJobs, masterKeys);
            opened.add(publications);
            AcceptancePolicies policies = cluster.policies(audit);
            opened.add(policies);

            MasterMetrics metrics = new MasterMetrics().withJvm();
            EventStream events = new EventStream(clock);
            StoreWrites writes = new StoreWrites(clock);
            metrics.counter(
                    "brine.audit.failed",
                    "Audit lines that could not be written (a full disk): an answer "
                            + "that grants nothing went out without its line, a session or a publish was refused",
                    writes,
                    StoreWrites::auditFailures);
            SessionTable sessions = new SessionTable();
            PublishKeyring keyring = new PublishKeyring(clock);
            GrainsStore grains = new GrainsStore(policies::classification, clock);
            ActiveJobs active = new ActiveJobs(jobCache, audit, clock, metrics, events);
            ServerTransport transport = transports.open(active);
            opened.add(transport);
            Optional<SaltKeys> saltKeys = config.saltMinions()
                    ? Optional.of(new SaltKeys(
                            masterKeyring::current,
                            masterKeyring::saltSignature,
                            () -> transport.addresses().publish().getPort(),
                            keyStore))
                    : Optional.empty();
            if (saltKeys.isPresent()) {
                // A new master key: a new aes too, so that Salt minions sign in again and are shown the key.
                masterKeyring.onRotated(saltKeys.get()::rotate);
                masterKeyring.onSaltSignatureChanged(saltKeys.get()::pubSigChanged);
                keyring.onRotate(saltKeys.get()::rotate); // Salt's aes rotates with brine's publish key
                opened.add(keyStore.addListener(saltKeys.get()::onKeyChange));
            }
            JobPublisher jobs = new JobPublisher(
                    keyStore,
                    grains,
                    keyring,
                    transport,
                    masterKeyring::publicationKey,
                    jobCache,
                    active,
                    audit,
                    clock,
                    saltKeys.<SaltEnvelopes>map(SaltPublisher::new).orElseGet(SaltEnvelopes::none),
                    publications,
                    writes);
            SeenAuthRequests seen = SeenAuthRequests.open(config.cachedir().resolve(SeenAuthRequests.FILE), clock);
            opened.add(seen);
            AuthWorkBudget budget = new AuthWorkBudget(config.authWorkBudget(), clock);
            metrics.authWorkBudget(budget);
            AuthService auth = new AuthService(
                    keyStore,
                    policies,
                    sessions,
                    keyring,
                    new MeteredAuthAudit(new AuditedAuth(audit), metrics, events),
                    clock,
                    transport::publishPort,
                    PENDING_RETRY_SECONDS,
                    seen,
                    budget,
                    writes,
                    masterKeyring);
            SessionService sessionService = new SessionService(sessions, keyring, masterKeyring::publicationKey, clock);
            PublisherService publishers = new PublisherService(
                    config.pkiDir(),
                    rootKey,
                    config.publisherAcl(),
                    Nodegroups.of(config.nodegroups()),
                    sessions,
                    jobs,
                    masterKeyring::current,
                    audit,
                    clock,
                    budget,
                    writes);
            SourceRateLimiter authRate = new SourceRateLimiter(
                    config.authRatePerSource(), config.authBurst(), MAX_RATED_SOURCES, System::nanoTime);
            SaltInbound salt = saltKeys.<SaltInbound>map(keys -> new SaltFrames(
                            new SaltService(
                                    keyStore,
                                    policies,
                                    keys,
                                    new MeteredAuthAudit(new AuditedAuth(audit), metrics, events),
                                    grains,
                                    active,
                                    config.maxReturnBytes(),
                                    clock,
                                    budget,
                                    writes,
                                    fileServer(config, clock)),
                            transport))
                    .orElseGet(() -> SaltInbound.off(transport));
            KeyRotationService rotations = new KeyRotationService(
                    keyStore,
                    masterKeyring::publicationKey,
                    config.keyRotation(),
                    Ticker.systemTicker(),
                    (id, result, newFingerprint, reason) -> {
                        metrics.minionKeyRotation(result);
                        events.minionKeyRotation(id, result, newFingerprint, reason);
                    });
            TicketKeys ticketKeys = cluster.ticketKeys(masterKeys);
            opened.add(ticketKeys);
            ResumeService resume = new ResumeService(
                    ticketKeys,
                    keyStore,
                    sessions,
                    keyring,
                    seen,
                    audit,
                    writes,
                    clock,
                    transport::publishPort,
                    Resumptions.MAX_LIFETIME_MS);
            metrics.counter(
                    "brine.resumptions",
                    "Sessions resumed with a ticket, without an RSA operation",
                    resume,
                    ResumeService::resumed);
            metrics.counter(
                    "brine.resumption.tickets",
                    "Resumption tickets given after full auths and key rotations",
                    resume,
                    ResumeService::tickets);
            metrics.counter(
                    "brine.resumptions.refused",
                    "Resumptions refused (the minion then authenticates in "
                            + "full): ticket expired, its key retired, the minion's key removed or changed, a bad proof, a "
                            + "replay",
                    resume,
                    ResumeService::refused);
            InboundDispatcher dispatcher = new InboundDispatcher(
                    transport,
                    authRate,
                    budget,
                    auth,
                    resume,
                    sessionService,
                    rotations,
                    publishers,
                    active,
                    grains,
                    salt,
                    config.workerThreads(),
                    config.maxReturnBytes(),
                    clock,
                    metrics,
                    events,
                    masterKeyring::chain);
            metrics.counter(
                    "brine.sessions.unknown.spared",
                    "Frames of unknown sessions left without a signed "
                            + "SessionUnknown because their connection resumed or authenticated within 2 s (a restart's "
                            + "queued heartbeats and returns)",
                    dispatcher,
                    InboundDispatcher::unknownSessionsSpared);
            Master master = new Master(
                    keyStore,
                    transport,
                    new Master.Parts(sessions, keyring, grains, jobs, dispatcher, metrics, events, masterKeyring),
                    audit,
                    config.publishSession(),
                    clock,
                    cluster.publishKey(masterKeys));
            opened.remove(transport); // the master closes it
            opened.add(master);
            master.start();
            // After the transport is up: the other masters wait for this one's delivery reports from now on.
            publications.start(jobs::deliverForwarded);
            keyStore.addListener(events::keyChanged); // closed with the key store
            watch(metrics, events, config, keyStore, sessions, transport, keyring, jobCache, dispatcher, policies);
            cluster.watch(metrics);
            metrics.masterKeys(masterKeyring);
            Optional<ApiServer> api = config.api().isEmpty()
                    ? Optional.empty()
                    : Optional.of(ApiServer.start(
                            config.api().get(),
                            keyStore,
                            publishers,
                            sessions,
                            events,
                            active,
                            policies::reservedIds,
                            config.cachedir(),
                            clock));
            api.ifPresent(opened::add);
            Optional<MetricsServer> http = Optional.empty();
            if (config.httpPort().isPresent()) {
                http = Optional.of(MetricsServer.start(
                        config.httpInterface(),
                        config.httpPort().getAsInt(),
                        "brine-master",
                        metrics::scrape,
                        () -> readiness(master, cluster, writes)));
            }
            return new MasterDaemon(
                    audit,
                    cluster,
                    publications,
                    jobCache,
                    policies,
                    master,
                    metrics,
                    events,
                    http,
                    api,
                    seen,
                    ticketKeys);
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

    /** Salt's roots file server from {@code file_roots} (nothing served without it). */
    private static SaltFileServer fileServer(MasterConfig config, Clock clock) {
        MasterConfig.FileServer files = config.fileServer();
        FileRoots roots = new FileRoots(
                new FileRoots.Options(
                        files.fileRoots(),
                        files.fileIgnoreRegex().stream().map(Pattern::compile).toList(),
                        files.fileIgnoreGlob(),
                        files.hashType(),
                        files.fileserverListCacheTime(),
                        FileRoots.MAX_ENTRIES),
                clock);
        if (!files.fileRoots().isEmpty()) {
            LOG.info("Salt file server: serving {} from file_roots, read-only", files.fileRoots());
        }
        return new SaltFileServer(
                roots,
                new SaltFileServer.Limits(
                        files.fileBufferSize(),
                        files.fileserverRequestsPerSecond(),
                        files.fileserverBurst(),
                        (long) files.fileserverMaxMibInFlight() << 20),
                clock,
                Ticker.systemTicker());
    }

    /** The gauges, read at scrape time from the parts that hold the state. */
    private static void watch(
            MasterMetrics metrics,
            EventStream events,
            MasterConfig config,
            KeyStore keyStore,
            SessionTable sessions,
            ServerTransport transport,
            PublishKeyring keyring,
            JobCache jobCache,
            InboundDispatcher dispatcher,
            AcceptancePolicies policies) {
        metrics.keys(keyStore);
        metrics.gauge(
                "brine.event.subscribers", "Publisher sessions subscribed to events", events, EventStream::subscribers);
        metrics.sessions(
                config.transports().stream()
                        .map(kind -> kind.name().toLowerCase(Locale.ROOT))
                        .toList(),
                () -> sessions.all().stream()
                        .map(session -> session.peer().transportName())
                        .toList());
        metrics.gauge(
                "brine.minions.reachable",
                "Minions a publication reaches now: a live session and, on ZeroMQ,"
                        + " its subscription honoured on the publish port (it follows the session by a connection)",
                transport,
                t -> t.reachableMinions().size());
        metrics.rotations(keyring, ring -> ring.current().number());
        metrics.gauge("brine.job.cache.bytes", "Bytes the job cache holds on disk", jobCache, JobCache::sizeBytes);
        metrics.gauge(
                "brine.queue.auth",
                "Auth requests of accepted keys and loopback publishers waiting for a " + "worker",
                dispatcher,
                InboundDispatcher::authQueueDepth);
        metrics.gauge(
                "brine.queue.auth.strangers",
                "Other unauthenticated requests waiting for a worker (new and "
                        + "unknown keys, Salt's _auth, remote publishers)",
                dispatcher,
                InboundDispatcher::strangerQueueDepth);
        metrics.gauge(
                "brine.queue.session",
                "Session frames waiting for a worker",
                dispatcher,
                InboundDispatcher::sessionQueueDepth);
        metrics.counter(
                "brine.frames.dropped",
                "Frames dropped before a handler saw them (malformed, over a " + "limit or a rate, queue full)",
                dispatcher,
                InboundDispatcher::droppedFrames);
        metrics.policies(policies);
    }

    /**
     * What keeps the master from being ready: a write failed within {@link StoreWrites#NOT_READY_FOR} and none
     * succeeded since, the key store unreadable (a master alone) or the ZooKeeper session
     * lost (a cluster's), the transports not serving, no session keys.
     */
    private static List<String> readiness(Master master, Cluster cluster, StoreWrites writes) {
        List<String> problems = new ArrayList<>();
        // A full disk: auth and publish answer "try later" until a write succeeds (or a minute passes without one).
        writes.problem().ifPresent(problems::add);
        cluster.problem().ifPresent(problems::add);
        if (!master.serving()) {
            problems.add("transports not serving");
        }
        if (master.keyring().current() == null) {
            problems.add("no publish session key");
        }
        return problems;
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
            members.add(
                    switch (kind) {
                        case ZEROMQ ->
                            new ZmtpServerTransport(
                                    config.interfaceAddress(),
                                    config.retPort(),
                                    config.publishPort(),
                                    ZmtpServerOptions.defaults()
                                            .withConnectionLimits(caps.max(), caps.unauthenticated(), caps.perSource()),
                                    null,
                                    undelivered,
                                    config.saltMinions()); // Salt's TCP transport shares the ZeroMQ ports
                        case TCP ->
                            new TcpServerTransport(
                                    config.interfaceAddress(),
                                    config.tcpPort(),
                                    TcpServerOptions.defaults()
                                            .withConnectionLimits(caps.max(), caps.unauthenticated(), caps.perSource()),
                                    config.tls().isPresent()
                                            ? TcpTls.server(
                                                    config.tls().get().cert(),
                                                    config.tls().get().key())
                                            : null,
                                    null,
                                    undelivered);
                    });
        }
        return members.size() == 1 ? members.get(0) : new CompositeServerTransport(members);
    }

    public Master master() {
        return master;
    }

    public KeyStore keyStore() {
        return cluster.keyStore();
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

    /** The event stream {@code brine events} and the API's subscribers read. */
    public EventStream events() {
        return events;
    }

    /** The port of {@code /metrics}, {@code /healthz} and {@code /readyz}; 0 when {@code http_port} is unset. */
    public int httpPort() {
        return http.map(MetricsServer::port).orElse(0);
    }

    /** The port of the HTTP API; 0 when {@code api:} is unset. */
    public int apiPort() {
        return api.map(ApiServer::port).orElse(0);
    }

    @Override
    public void close() {
        api.ifPresent(ApiServer::close);
        http.ifPresent(MetricsServer::close);
        master.close();
        seen.close(); // after the auth workers, which the master stopped
        ticketKeys.close();
        publications.close();
        policies.close();
        jobCache.close();
        cluster.close();
        audit.close();
        LOG.info("Master stopped");
    }
}

package io.brine.master;

import io.brine.store.audit.AuditLog;
import io.brine.daemon.config.MasterConfig;
import io.brine.master.jobs.JobCache;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.master.publish.PublisherService;
import io.brine.transport.CompositeServerTransport;
import io.brine.transport.tcp.TcpServerOptions;
import io.brine.transport.tcp.TcpServerTransport;
import io.brine.transport.tcp.TcpTls;
import io.brine.transport.zmtp.ZmtpServerTransport;
import io.brine.daemon.config.TransportKind;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.daemon.files.AtomicFiles;
import io.brine.transport.ServerTransport;
import java.io.IOException;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Wires a {@link Master} from {@code master.yaml}: key store, audit log, job cache, policies, transport. */
public final class MasterDaemon implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MasterDaemon.class);
    private static final int PENDING_RETRY_SECONDS = 0;

    private final AuditLog audit;
    private final KeyStore keyStore;
    private final JobCache jobCache;
    private final AcceptancePolicies policies;
    private final Master master;

    private MasterDaemon(AuditLog audit, KeyStore keyStore, JobCache jobCache, AcceptancePolicies policies,
            Master master) {
        this.audit = audit;
        this.keyStore = keyStore;
        this.jobCache = jobCache;
        this.policies = policies;
        this.master = master;
    }

    /** Opens everything and starts serving; closes what it opened if a step fails. */
    public static MasterDaemon start(MasterConfig config, Clock clock)
            throws IOException, KeyStoreException, KeyFormatException {
        List<AutoCloseable> opened = new ArrayList<>();
        try {
            AtomicFiles.ensureDirectory(config.cachedir());
            AuditLog audit = AuditLog.openFile(config.auditLog(), clock);
            opened.add(audit);
            KeyStore keyStore = FileKeyStore.open(KeyStoreOptions.builder(config.pkiDir()).auditLog(audit)
                    .keysize(config.keysize()).maxPending(config.maxPending()).maxMinions(config.maxMinions()).build());
            opened.add(keyStore);
            RSAPublicKey rootKey = (RSAPublicKey) PublisherService.loadOrCreateRootKey(config.cachedir(),
                    config.keysize()).getPublic();
            JobCache jobCache = new JobCache(config.cachedir().resolve("jobs"), config.keepJobs(),
                    config.jobCacheMaxMib() * 1024L * 1024L, clock);
            opened.add(jobCache);
            AcceptancePolicies policies = AcceptancePolicies.fromConfig(config, keyStore, clock, audit);
            opened.add(policies);
            ServerTransport transport = transport(config);
            Master master = new Master(keyStore, transport, new Master.Settings(config.publishSession(),
                    config.authRatePerSource(), config.authBurst(), config.workerThreads(), PENDING_RETRY_SECONDS,
                    policies, config.publisherAcl(), rootKey), audit, jobCache, clock);
            opened.add(master);
            master.start();
            return new MasterDaemon(audit, keyStore, jobCache, policies, master);
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

    /** The transport(s) {@code transport} names; several are served at once by a {@link CompositeServerTransport}. */
    static ServerTransport transport(MasterConfig config) throws IOException {
        List<ServerTransport> members = new ArrayList<>();
        for (TransportKind kind : config.transports()) {
            members.add(switch (kind) {
                case ZEROMQ -> new ZmtpServerTransport(config.interfaceAddress(), config.retPort(),
                        config.publishPort());
                case TCP -> new TcpServerTransport(config.interfaceAddress(), config.tcpPort(),
                        TcpServerOptions.defaults(), config.tls().isPresent()
                                ? TcpTls.server(config.tls().get().cert(), config.tls().get().key()) : null,
                        null, null);
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

    @Override
    public void close() {
        master.close();
        policies.close();
        jobCache.close();
        keyStore.close();
        audit.close();
        LOG.info("Master stopped");
    }
}

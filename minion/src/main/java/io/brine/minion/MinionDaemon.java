package io.brine.minion;

import io.brine.daemon.config.MinionConfig;
import io.brine.daemon.config.Secret;
import io.brine.daemon.config.TransportKind;
import io.brine.daemon.files.AtomicFiles;
import io.brine.daemon.http.MetricsServer;
import io.brine.minion.auth.MasterPin;
import io.brine.minion.auth.MinionKeyring;
import io.brine.minion.functions.FunctionAccess;
import io.brine.minion.functions.FunctionRegistry;
import io.brine.minion.functions.builtin.BuiltinFunctions;
import io.brine.minion.grains.Grains;
import io.brine.minion.jobs.JobRunner;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.grant.GrantException;
import io.brine.protocol.grant.Grants;
import io.brine.transport.ClientTransport;
import io.brine.transport.tcp.TcpClientOptions;
import io.brine.transport.tcp.TcpClientTls;
import io.brine.transport.tcp.TcpClientTransport;
import io.brine.transport.zmq.ZmqClientOptions;
import io.brine.transport.zmq.ZmqClientTransport;
import java.io.IOException;
import java.nio.file.Path;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wires a {@link Minion} from {@code minion.yaml}, by constructor and in dependency order: keys and master pin,
 * grains, functions, transport, the event thread, the minion's parts (whose session channel is where returns go),
 * the job runner, and the minion that routes jobs to it.
 */
public final class MinionDaemon implements AutoCloseable {

    static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(30);
    static final int RETURN_QUEUE_CAPACITY = 1000;
    static final int MAX_GRANT_BYTES = Grants.MAX_BYTES;
    /** The grain a provisioning grant's classification appears under. */
    static final String CLASS_GRAIN = "class";
    /** Salt's id grain: the minion's id, never what minion.yaml's grains say. */
    static final String ID_GRAIN = "id";

    private static final Logger LOG = LoggerFactory.getLogger(MinionDaemon.class);

    private final Minion minion;
    private final JobRunner jobs;
    private final FunctionRegistry registry;
    private final MetricsServer http;

    private MinionDaemon(Minion minion, JobRunner jobs, FunctionRegistry registry, MetricsServer http) {
        this.minion = minion;
        this.jobs = jobs;
        this.registry = registry;
        this.http = http;
    }

    public static MinionDaemon start(MinionConfig config, Clock clock) throws IOException, KeyFormatException {
        return start(config, clock, HEARTBEAT_INTERVAL);
    }

    /** With another heartbeat interval than the daemon's 30 s: tests that wait for a minion to notice something. */
    public static MinionDaemon start(MinionConfig config, Clock clock, Duration heartbeatInterval)
            throws IOException, KeyFormatException {
        MinionKeyring keys = MinionKeyring.load(config.pkiDir(), config.keysize());
        Optional<PublicKey> signingKey = config.masterSignPub().isPresent()
                ? Optional.of(MasterPin.readSigningKey(config.masterSignPub().get()))
                : Optional.empty();
        MasterPin pin = new MasterPin(config.pkiDir(), config.masterFinger().orElse(null), signingKey);
        byte[] grant = config.autosignGrant().isPresent()
                ? AtomicFiles.readSmall(config.autosignGrant().get(), MAX_GRANT_BYTES)
                : null;
        Map<String, Object> staticGrains = staticGrains(config.grains());
        Object configuredId = staticGrains.put(ID_GRAIN, config.id());
        if (configuredId != null && !config.id().equals(configuredId)) {
            LOG.warn(
                    "Minion {}: the static grain id ({}) is not this minion's id; the id grain is the minion's id, "
                            + "as the master sets it whatever a minion reports",
                    config.id(),
                    MinionIds.printable(String.valueOf(configuredId)));
        }
        classification(grant).ifPresent(classes -> staticGrains.put(CLASS_GRAIN, classes));
        Grains grains = new Grains(staticGrains);
        var builtIns = BuiltinFunctions.create(BuiltinFunctions.Settings.defaults());
        FunctionAccess access =
                FunctionAccess.of(config.functions().allow(), config.functions().deny());
        FunctionRegistry registry = config.pluginsDir().isPresent()
                ? FunctionRegistry.load(builtIns, config.pluginsDir().get(), access)
                : new FunctionRegistry(builtIns, access);
        Minion.Settings settings = new Minion.Settings(
                config.id(),
                config.auth().acceptanceWaitTime(),
                config.auth().acceptanceWaitTimeMax(),
                config.auth().rejectedRetry(),
                config.auth().authTimeout(),
                heartbeatInterval,
                config.statusFile(),
                grains.get(),
                grant,
                config.autosignToken().map(Secret::reveal).orElse(null),
                RETURN_QUEUE_CAPACITY,
                config.returnRetryMax(),
                config.publishMaxAge());
        ClientTransport transport = transport(config);
        Scheduler loop = new EventThread("brine-minion-" + config.id());
        Minion.Parts parts =
                Minion.Parts.wire(settings, keys, pin, transport, loop, clock, config.keysize(), config.keyMaxAge());
        JobRunner runner = new JobRunner(
                config.id(),
                registry,
                grains::get,
                config.workerThreads(),
                config.jobTimeout(),
                parts.channel()::submitReturn,
                clock);
        Minion minion = new Minion(settings, transport, loop, parts, runner::submit);
        MetricsServer http = null;
        try {
            minion.start();
            if (config.httpPort().isPresent()) {
                http = new MinionMetrics(minion::status, runner, parts.channel().returns())
                        .serve(config.httpInterface(), config.httpPort().getAsInt());
            }
        } catch (IOException | RuntimeException e) {
            runner.close();
            registry.close();
            minion.close();
            throw e;
        }
        return new MinionDaemon(minion, runner, registry, http);
    }

    static ClientTransport transport(MinionConfig config) throws IOException {
        if (!config.masters().isEmpty()) {
            return new FailoverTransport(config.masters(), config.randomMaster(), master -> transport(config, master));
        }
        return transport(config, config.master());
    }

    /** The transport to {@code master}: a host, or {@code host:port} naming the request port. */
    private static ClientTransport transport(MinionConfig config, String master) throws IOException {
        String host = master;
        int port = config.transport() == TransportKind.TCP ? config.tcpPort() : config.retPort();
        int colon = master.lastIndexOf(':');
        if (colon > 0 && (master.startsWith("[") ? master.charAt(colon - 1) == ']' : master.indexOf(':') == colon)) {
            host = master.substring(0, colon).replace("[", "").replace("]", "");
            port = Integer.parseInt(master.substring(colon + 1));
        }
        return switch (config.transport()) {
            case ZEROMQ ->
                new ZmqClientTransport(
                        host,
                        port,
                        ZmqClientOptions.defaults().withReconnect(config.reconDefault(), config.reconMax()));
            case TCP ->
                new TcpClientTransport(
                        host,
                        port,
                        TcpClientOptions.defaults().withReconnect(config.reconDefault(), config.reconMax()),
                        config.tls().isPresent()
                                ? TcpClientTls.client(
                                        config.tls().get().ca(),
                                        config.tls().get().verifyHostname())
                                : null,
                        null);
        };
    }

    /**
     * The classification in this minion's provisioning grant. The master targets grain {@value #CLASS_GRAIN} from
     * its own verified copy (a minion cannot set it there); this copy lets the minion's own target check agree.
     */
    static Optional<Map<String, String>> classification(byte[] grant) {
        if (grant == null) {
            return Optional.empty();
        }
        try {
            Map<String, String> classes = Grants.parse(grant).grant().classification();
            return classes.isEmpty() ? Optional.empty() : Optional.of(classes);
        } catch (GrantException e) {
            LOG.warn("autosign_grant: the grant is malformed ({}); the master will not accept it", e.getMessage());
            return Optional.empty();
        }
    }

    /** Static grains from minion.yaml: a one-element list is a single value, as the admin most likely meant. */
    static Map<String, Object> staticGrains(Map<String, List<String>> configured) {
        Map<String, Object> grains = new LinkedHashMap<>();
        configured.forEach((key, values) -> grains.put(key, values.size() == 1 ? values.get(0) : values));
        return grains;
    }

    public Minion minion() {
        return minion;
    }

    public CompletableFuture<MinionState> terminated() {
        return minion.terminated();
    }

    /** Asks the master to rotate this minion's key; completes with its signed answer (PROTOCOL.md 6.3). */
    public CompletableFuture<KeyRotation.Result> rotateKey() {
        return minion.rotateKey();
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
        jobs.close();
        minion.close();
        registry.close();
    }

    /** For tests: where the minion keeps its keys. */
    static Path pkiDir(MinionConfig config) {
        return config.pkiDir();
    }
}

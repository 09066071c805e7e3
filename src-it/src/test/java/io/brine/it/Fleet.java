package io.brine.it;

import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.daemon.config.LogLevel;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.MinionConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.daemon.files.AtomicFiles;
import io.brine.master.MasterDaemon;
import io.brine.master.jobs.StoredReturn;
import io.brine.master.publish.JobPublisher;
import io.brine.master.session.MinionSession;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.minion.auth.MinionKeys;
import io.brine.protocol.RootPublisher;
import io.brine.protocol.testing.TestKeys;
import io.brine.transport.CompositeServerTransport;
import io.brine.transport.ServerTransport;
import io.brine.transport.tcp.TcpServerTransport;
import io.brine.transport.zmtp.ZmtpServerTransport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * An embedded master and minions on loopback with ports chosen by the system, each with its own directories under
 * one temp dir. Every key comes from {@link TestKeys} (minions' from the first, or from {@link #keysFrom}; a
 * master's and its root key from the last unless {@link #seedMasterKeys} chose) so nothing waits for key
 * generation. The master may be restarted on the ports it first bound. {@link #transport} chooses what the master
 * serves and the minions speak (ZeroMQ unless told); a suite parametrized over {@link TransportKind} runs the same
 * flows on each.
 */
final class Fleet implements AutoCloseable {

    /**
     * The ITs' minion reconnect back-off ({@code recon_default}, {@code recon_max}): 100 ms doubling to 500 ms, not
     * the daemon's 1 s to 5 s, so that minions are back soon after a master restarts or dies instead of the suite
     * waiting out the back-off (issue 23 item 6). A test about the back-off itself sets the defaults.
     */
    static final Duration RECON_DEFAULT = Duration.ofMillis(100);

    static final Duration RECON_MAX = Duration.ofMillis(500);
    /** {@link #RECON_DEFAULT} and {@link #RECON_MAX} as minion.yaml keys, for the ITs that launch minion processes. */
    static final Map<String, String> RECON_YAML = Map.of(
            "recon_default",
            String.valueOf(RECON_DEFAULT.toMillis()),
            "recon_max",
            String.valueOf(RECON_MAX.toMillis()));

    final Path dir;
    /** The master's clock. */
    final Clock clock;

    final Clock minionClock;
    MasterDaemon master;
    MasterConfig masterConfig;
    /** The running minions; minions may be started from several threads at once. */
    final List<MinionDaemon> minions = new CopyOnWriteArrayList<>();

    private final Map<MinionDaemon, MinionConfig> minionConfigs = Collections.synchronizedMap(new IdentityHashMap<>());
    private TransportKind transport = TransportKind.ZEROMQ;
    private UnaryOperator<MasterConfig.Builder> masterCustomization = b -> b;
    /** The ports the master bound: a restarted master binds them again. */
    private int retPort;

    private int publishPort;
    private int tcpPort;
    /** The heartbeat interval of minions started from now on; null for the daemon's own (30 s). */
    Duration minionHeartbeat;

    private int nextKey;
    /** Between minions and a master started after them; see {@link #relayForLateMaster}. */
    private CuttableProxy relay;
    /** The port the relay passes connections to: the running master's, 0 while there is none. */
    private volatile int relayTarget;
    /** Masters' and root keys come from the top of the test keys, minions' from the bottom. */
    private int nextMasterKey = TestKeys.COUNT - 1;

    Fleet(Path dir) {
        this(dir, Clock.systemUTC());
    }

    Fleet(Path dir, Clock clock) {
        this(dir, clock, clock);
    }

    /** A master and minions on different clocks: a test can move the master's time without the minions'. */
    Fleet(Path dir, Clock masterClock, Clock minionClock) {
        this.dir = dir;
        this.clock = masterClock;
        this.minionClock = minionClock;
    }

    /** The transport the master serves and the minions speak; call before starting anything. */
    Fleet transport(TransportKind kind) {
        this.transport = kind;
        return this;
    }

    TransportKind transport() {
        return transport;
    }

    // ---------------------------------------------------------------- master

    MasterConfig.Builder masterConfig() {
        return MasterConfig.builder(dir.resolve("master"))
                .interfaceAddress("127.0.0.1")
                .publishPort(publishPort)
                .retPort(retPort)
                .tcpPort(tcpPort)
                .transport(transport)
                .logLevel(LogLevel.WARN);
    }

    MasterDaemon startMaster(UnaryOperator<MasterConfig.Builder> customize) throws Exception {
        masterCustomization = customize;
        masterConfig = customize.apply(masterConfig()).build();
        // A master key of its own for each pki dir, as if generated; the root key likewise.
        if (!Files.exists(masterConfig.pkiDir().resolve("master.pem"))) {
            seedMasterKey(masterConfig.pkiDir(), nextMasterKey--);
        }
        if (!Files.exists(masterConfig.cachedir().resolve(RootPublisher.KEY_FILE))) {
            seedRootKey(masterConfig.cachedir(), nextMasterKey--);
        }
        master = MasterDaemon.start(masterConfig, clock);
        Optional<ServerTransport> zmq = member(ZmtpServerTransport.class).map(ServerTransport.class::cast);
        retPort = zmq.map(t -> t.addresses().request().getPort()).orElse(0);
        publishPort = zmq.map(t -> t.addresses().publish().getPort()).orElse(0);
        tcpPort = member(TcpServerTransport.class)
                .map(t -> t.addresses().request().getPort())
                .orElse(0);
        relayTarget = transport == TransportKind.TCP ? tcpPort : retPort;
        return master;
    }

    private <T extends ServerTransport> Optional<T> member(Class<T> type) {
        ServerTransport served = master.master().transport();
        if (type.isInstance(served)) {
            return Optional.of(type.cast(served));
        }
        return served instanceof CompositeServerTransport several ? several.member(type) : Optional.empty();
    }

    /**
     * Writes test keys as the master's key pair ({@code pki_dir/master.pem}) and the local publisher key
     * ({@code cachedir/root.pem}) of the default layout, so the master generates none.
     */
    Fleet seedMasterKeys(int masterIndex, int rootIndex) throws Exception {
        MasterConfig config = masterConfig().build();
        seedMasterKey(config.pkiDir(), masterIndex);
        seedRootKey(config.cachedir(), rootIndex);
        return this;
    }

    /** Writes test key {@code index} as the master's key pair, as if it had generated it. */
    static void seedMasterKey(Path pkiDir, int index) throws Exception {
        AtomicFiles.ensureDirectory(pkiDir);
        writeKeyFile(pkiDir.resolve("master.pem"), TestKeys.privatePem(index), "r--------");
        writeKeyFile(pkiDir.resolve("master.pub"), TestKeys.publicPem(index), "rw-r--r--");
    }

    /** Writes test key {@code index} as the local publisher key ({@code cachedir/root.pem}), as if made there. */
    static void seedRootKey(Path cachedir, int index) throws Exception {
        AtomicFiles.ensureDirectory(cachedir);
        writeKeyFile(cachedir.resolve(RootPublisher.KEY_FILE), TestKeys.privatePem(index), "r--------");
    }

    /** Stops the master; minions keep running and keep trying. */
    void stopMaster() {
        relayTarget = 0;
        if (master != null) {
            master.close();
            master = null;
        }
    }

    /**
     * Starts a new master as configured before, on the ports the old one had bound and with the same pki dir and
     * cachedir: a short master restart, as the minions see it. Stops the old one first if it still runs.
     */
    MasterDaemon restartMaster() throws Exception {
        return restartMaster(masterCustomization);
    }

    /** Stops the master and starts it again on the same ports, configured by {@code customize}. */
    MasterDaemon restartMaster(UnaryOperator<MasterConfig.Builder> customize) throws Exception {
        stopMaster();
        return startMaster(customize);
    }

    /**
     * Minions started from now on reach the master through a relay on a port of its own, so they can be started
     * before the master: until it is up, the relay refuses their connections; then it relays them to the port the
     * master bound. (Reserving a free port for the master to bind later would race with every other process.)
     */
    void relayForLateMaster() throws IOException {
        relay = new CuttableProxy(() -> relayTarget);
    }

    /** The master's ZeroMQ request port (0 when it serves TCP only). */
    int retPort() {
        return retPort;
    }

    /** The master's TCP port, when it serves TCP. */
    int tcpPort() {
        if (tcpPort == 0) {
            throw new IllegalStateException("the master does not serve TCP");
        }
        return tcpPort;
    }

    TcpServerTransport tcpTransport() {
        return member(TcpServerTransport.class).orElseThrow();
    }

    ZmtpServerTransport zmqTransport() {
        return member(ZmtpServerTransport.class).orElseThrow();
    }

    /** Waits until the master's ZeroMQ publish channel sees each minion's subscription. */
    void awaitSubscribed(String... ids) {
        await().until(() -> zmqTransport().subscribedMinions().containsAll(List.of(ids)));
    }

    /** Publishes {@code fun} to exactly {@code ids} as the master's own publisher would. */
    JobPublisher.Published publish(String fun, List<String> ids) throws Exception {
        return master.master()
                .jobs()
                .publish("it", "list", String.join(",", ids), ids, fun, List.of(), Map.of(), 10, null);
    }

    /** Waits for every one of {@code ids} to return {@code jid} into the job cache. */
    List<StoredReturn> awaitReturns(String jid, List<String> ids) {
        return await().until(
                        () -> master.master().jobs().cache().returns(jid),
                        returns ->
                                returns.stream().map(StoredReturn::id).toList().containsAll(ids));
    }

    /** Writes {@code name} in the master's directory with {@code mode} (as {@code rw-------}), for policy files. */
    Path masterFile(String name, String content, String mode) throws Exception {
        Path file = dir.resolve("master").resolve(name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    /** A publisher session as the local administrator (the master's root key), on the port actually bound. */
    BrineClient rootClient() throws ClientException {
        KeyPair root = BrineClient.readPrivate(masterConfig.cachedir().resolve(RootPublisher.KEY_FILE), "root key");
        return BrineClient.connect(
                TransportKind.ZEROMQ,
                "127.0.0.1",
                retPort(),
                RootPublisher.NAME,
                root,
                (RSAPublicKey) master.keyStore().masterKeyPair().getPublic(),
                Duration.ofSeconds(10));
    }

    /** Acceptance with {@code auto_accept: true}. */
    static MasterConfig.Acceptance autoAccept() {
        return MasterConfig.Acceptance.builder().autoAccept(true).build();
    }

    /** Each minion's session id on the master now. */
    Map<String, Object> sessionIds() {
        Map<String, Object> ids = new TreeMap<>();
        for (MinionSession session : master.master().sessions().all()) {
            ids.put(session.minionId(), session.sessionId());
        }
        return ids;
    }

    Set<String> acceptedIds() {
        return master.keyStore().acceptedIds();
    }

    // ---------------------------------------------------------------- minions

    /** Minion keys come from {@link TestKeys} from index {@code first} on. */
    Fleet keysFrom(int first) {
        nextKey = first;
        return this;
    }

    MinionConfig.Builder minionConfig(String id) {
        return minionConfig(id, transport);
    }

    /**
     * A minion speaking {@code kind}, whatever the fleet's transport (for a master serving both). One-second
     * acceptance wait growing to two, five-second auth timeout, {@link #RECON_DEFAULT} back-off: quick, and still
     * Salt's semantics.
     */
    MinionConfig.Builder minionConfig(String id, TransportKind kind) {
        MinionConfig.Builder builder = MinionConfig.builder(
                        dir.resolve("minions").resolve(id), id)
                .master("127.0.0.1")
                .transport(kind)
                .auth(new MinionConfig.Auth(Duration.ofSeconds(1), Duration.ofSeconds(2), false, Duration.ofSeconds(5)))
                .reconnect(RECON_DEFAULT, RECON_MAX);
        if (relay != null) {
            return kind == TransportKind.TCP ? builder.tcpPort(relay.port()) : builder.retPort(relay.port());
        }
        return kind == TransportKind.TCP ? builder.tcpPort(tcpPort()) : builder.retPort(retPort());
    }

    /** Writes test key {@code index} as the minion's key pair, as if it had generated it. */
    static void seedKey(Path pkiDir, int index) throws Exception {
        AtomicFiles.ensureDirectory(pkiDir);
        writeKeyFile(pkiDir.resolve(MinionKeys.PRIVATE_FILE), TestKeys.privatePem(index), "r--------");
        writeKeyFile(pkiDir.resolve(MinionKeys.PUBLIC_FILE), TestKeys.publicPem(index), "rw-r--r--");
    }

    /** A key file with its final mode, not forced to disk: test data, and fsync is most of a swarm's start. */
    static void writeKeyFile(Path file, String pem, String mode) throws Exception {
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(file, pem, StandardCharsets.US_ASCII);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
    }

    /** Starts minion {@code id} with test key {@code keyIndex} (use 100 and up: lower ones are handed out in turn). */
    MinionDaemon startMinion(String id, int keyIndex, UnaryOperator<MinionConfig.Builder> customize) throws Exception {
        seedKey(minionConfig(id).build().pkiDir(), keyIndex);
        return startMinion(id, customize);
    }

    MinionDaemon startMinion(String id) throws Exception {
        return startMinion(id, b -> b);
    }

    MinionDaemon startMinion(String id, UnaryOperator<MinionConfig.Builder> customize) throws Exception {
        return startMinion(minionConfig(id), customize);
    }

    MinionDaemon startMinion(String id, TransportKind kind) throws Exception {
        return startMinion(minionConfig(id, kind), b -> b);
    }

    private MinionDaemon startMinion(MinionConfig.Builder builder, UnaryOperator<MinionConfig.Builder> customize)
            throws Exception {
        MinionConfig config = customize.apply(builder).build();
        if (!config.pkiDir().resolve(MinionKeys.PRIVATE_FILE).toFile().exists()) {
            seedKey(config.pkiDir(), nextMinionKey());
        }
        return start(config);
    }

    private synchronized int nextMinionKey() {
        return nextKey++;
    }

    /** Starts (or starts again) a minion from a config, with whatever key its pki dir holds. */
    MinionDaemon start(MinionConfig config) throws Exception {
        MinionDaemon minion = minionHeartbeat == null
                ? MinionDaemon.start(config, minionClock)
                : MinionDaemon.start(config, minionClock, minionHeartbeat);
        minions.add(minion);
        minionConfigs.put(minion, config);
        return minion;
    }

    /** The config a minion was started with. */
    MinionConfig configOf(MinionDaemon minion) {
        return minionConfigs.get(minion);
    }

    void stopMinion(MinionDaemon minion) {
        minion.close();
        minions.remove(minion);
        minionConfigs.remove(minion);
    }

    static void awaitState(MinionDaemon minion, MinionState state) {
        await().until(() -> minion.minion().state(), s -> s == state);
    }

    void awaitAll(MinionState state) {
        await().until(() -> minions.stream().allMatch(m -> m.minion().state() == state));
    }

    @Override
    public void close() {
        // A minion's close waits for its threads; many are closed side by side.
        ExecutorService closers = Executors.newFixedThreadPool(Math.max(1, Math.min(16, minions.size())));
        try {
            for (MinionDaemon minion : minions) {
                closers.execute(minion::close);
            }
        } finally {
            closers.shutdown();
            try {
                closers.awaitTermination(1, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        minions.clear();
        minionConfigs.clear();
        stopMaster();
        if (relay != null) {
            try {
                relay.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}

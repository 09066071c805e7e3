package io.brine.it;

import io.brine.master.MasterDaemon;
import io.brine.master.client.BrineClient;
import io.brine.master.client.ClientException;
import io.brine.master.publish.PublisherService;
import io.brine.protocol.config.TransportKind;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import io.brine.master.config.MasterConfig;
import io.brine.master.transport.CompositeServerTransport;
import io.brine.master.transport.tcp.TcpServerTransport;
import io.brine.minion.MinionDaemon;
import io.brine.minion.auth.MinionKeys;
import io.brine.minion.config.MinionConfig;
import io.brine.protocol.config.LogLevel;
import io.brine.protocol.config.TransportKind;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.io.AtomicFiles;
import io.brine.protocol.testing.TestKeys;
import io.brine.protocol.transport.ServerTransport;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * An embedded master and minions on loopback with ports chosen by the system, each with its own directories under
 * one temp dir. Minion keys come from {@link TestKeys} so nothing waits for key generation. {@link #transport}
 * chooses what the master serves and the minions speak (ZeroMQ unless told); a suite parametrized over
 * {@link TransportKind} runs the same flows on each.
 */
final class Fleet implements AutoCloseable {

    final Path dir;
    final Clock clock;
    MasterDaemon master;
    MasterConfig masterConfig;
    final List<MinionDaemon> minions = new ArrayList<>();
    private TransportKind transport = TransportKind.ZEROMQ;
    private int nextKey;
    private UnaryOperator<MasterConfig.Builder> masterCustomization = b -> b;
    private int stoppedRetPort;
    private int stoppedPublishPort;

    Fleet(Path dir) {
        this(dir, Clock.systemUTC());
    }

    Fleet(Path dir, Clock clock) {
        this.dir = dir;
        this.clock = clock;
    }

    /** The transport the master serves and the minions speak; call before starting anything. */
    Fleet transport(TransportKind kind) {
        this.transport = kind;
        return this;
    }

    TransportKind transport() {
        return transport;
    }

    MasterConfig.Builder masterConfig() {
        return MasterConfig.builder(dir.resolve("master")).interfaceAddress("127.0.0.1").publishPort(0).retPort(0)
                .tcpPort(0).transport(transport).logLevel(LogLevel.WARN);
    }

    MasterDaemon startMaster(UnaryOperator<MasterConfig.Builder> customize) throws Exception {
        masterCustomization = customize;
        masterConfig = customize.apply(masterConfig()).build();
        master = MasterDaemon.start(masterConfig, clock);
        return master;
    }

    /**
     * Starts a new master as configured before, on the ports the old one had bound and with the same pki dir and
     * cachedir: a short master restart, as the minions see it. Stops the old one first if it still runs.
     */
    MasterDaemon restartMaster() throws Exception {
        if (master != null) {
            stopMaster();
        }
        UnaryOperator<MasterConfig.Builder> customize = masterCustomization;
        int retPort = stoppedRetPort;
        int publishPort = stoppedPublishPort;
        return startMaster(b -> customize.apply(b).retPort(retPort).publishPort(publishPort));
    }

    void stopMaster() {
        stoppedRetPort = master.master().addresses().request().getPort();
        stoppedPublishPort = master.master().addresses().publish().getPort();
        master.close();
        master = null;
    }

    /**
     * Writes test keys as the master's key pair ({@code pki_dir/master.pem}) and the local publisher key
     * ({@code cachedir/root.pem}) of the default layout, so the master generates none.
     */
    Fleet seedMasterKeys(int masterIndex, int rootIndex) throws Exception {
        MasterConfig config = masterConfig().build();
        AtomicFiles.ensureDirectory(config.pkiDir());
        AtomicFiles.write(config.pkiDir().resolve("master.pem"), Pem.bytes(TestKeys.privatePem(masterIndex)),
                AtomicFiles.OWNER_READ);
        AtomicFiles.write(config.pkiDir().resolve("master.pub"), Pem.bytes(TestKeys.publicPem(masterIndex)),
                AtomicFiles.PUBLIC_READ);
        AtomicFiles.ensureDirectory(config.cachedir());
        AtomicFiles.write(config.cachedir().resolve(PublisherService.ROOT_KEY_FILE),
                Pem.bytes(TestKeys.privatePem(rootIndex)), AtomicFiles.OWNER_READ);
        return this;
    }

    /** Minion keys come from {@link TestKeys} from index {@code first} on. */
    Fleet keysFrom(int first) {
        nextKey = first;
        return this;
    }

    /** The master's ZeroMQ request port. */
    int retPort() {
        return master.master().transport() instanceof TcpServerTransport
                ? 0 : master.master().addresses().request().getPort();
    }

    /** The master's TCP port, when it serves TCP. */
    int tcpPort() {
        ServerTransport served = master.master().transport();
        TcpServerTransport tcp = served instanceof TcpServerTransport only ? only
                : served instanceof CompositeServerTransport several
                        ? several.member(TcpServerTransport.class).orElse(null) : null;
        if (tcp == null) {
            throw new IllegalStateException("the master does not serve TCP");
        }
        return tcp.addresses().request().getPort();
    }

    MinionConfig.Builder minionConfig(String id) {
        return minionConfig(id, transport);
    }

    /** A minion speaking {@code kind}, whatever the fleet's transport (for a master serving both). */
    MinionConfig.Builder minionConfig(String id, TransportKind kind) {
        MinionConfig.Builder builder = MinionConfig.builder(dir.resolve("minions").resolve(id), id)
                .master("127.0.0.1").transport(kind)
                .auth(new MinionConfig.Auth(Duration.ofSeconds(1), Duration.ofSeconds(2), false,
                        Duration.ofSeconds(5)));
        return kind == TransportKind.TCP ? builder.tcpPort(tcpPort()) : builder.retPort(retPort());
    }

    /** Writes test key {@code index} as the minion's key pair, as if it had generated it. */
    static void seedKey(Path pkiDir, int index) throws Exception {
        AtomicFiles.ensureDirectory(pkiDir);
        AtomicFiles.write(pkiDir.resolve(MinionKeys.PRIVATE_FILE), Pem.bytes(TestKeys.privatePem(index)),
                AtomicFiles.OWNER_READ);
        AtomicFiles.write(pkiDir.resolve(MinionKeys.PUBLIC_FILE), Pem.bytes(TestKeys.publicPem(index)),
                AtomicFiles.PUBLIC_READ);
    }

    /** Writes {@code name} in the master's directory with {@code mode} (as {@code rw-------}), for policy files. */
    Path masterFile(String name, String content, String mode) throws Exception {
        Path file = dir.resolve("master").resolve(name);
        java.nio.file.Files.createDirectories(file.getParent());
        java.nio.file.Files.writeString(file, content);
        java.nio.file.Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString(
                mode));
        return file;
    }

    /** Starts minion {@code id} with test key {@code keyIndex} (use 100 and up: lower ones are handed out in turn). */
    MinionDaemon startMinion(String id, int keyIndex, UnaryOperator<MinionConfig.Builder> customize)
            throws Exception {
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
            seedKey(config.pkiDir(), nextKey++);
        }
        MinionDaemon minion = MinionDaemon.start(config, clock);
        minions.add(minion);
        return minion;
    }

    /** A publisher session as the local administrator (the master's root key), on the port actually bound. */
    BrineClient rootClient() throws ClientException {
        KeyPair root = BrineClient.readPrivate(masterConfig.cachedir().resolve(PublisherService.ROOT_KEY_FILE),
                "root key");
        return BrineClient.connect(TransportKind.ZEROMQ, "127.0.0.1", retPort(), PublisherService.ROOT, root,
                (RSAPublicKey) master.keyStore().masterKeyPair().getPublic(), Duration.ofSeconds(10));
    }

    @Override
    public void close() {
        for (MinionDaemon minion : minions) {
            minion.close();
        }
        if (master != null) {
            master.close();
        }
    }
}

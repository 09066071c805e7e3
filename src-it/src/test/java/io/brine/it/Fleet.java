package io.brine.it;

import io.brine.master.MasterDaemon;
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
        masterConfig = customize.apply(masterConfig()).build();
        master = MasterDaemon.start(masterConfig, clock);
        return master;
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

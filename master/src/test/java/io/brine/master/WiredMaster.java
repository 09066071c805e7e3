package io.brine.master;

import io.brine.client.BrineClient;
import io.brine.client.channel.TcpClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.daemon.files.AtomicFiles;
import io.brine.master.events.EventStream;
import io.brine.master.metrics.MasterMetrics;
import io.brine.protocol.RootPublisher;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.KeyStore;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * A master wired as the daemon wires it ({@link MasterDaemon}): a real key store, job cache and audit log under a
 * test's {@code @TempDir}, test key {@value #MASTER_KEY} as the master's key and {@value #ROOT_KEY} as the local
 * publisher's, serving TCP on a port of loopback the system chose ({@link #port}), unless the test gives a
 * transport of its own.
 */
public final class WiredMaster implements AutoCloseable {

    public static final int MASTER_KEY = 140;
    public static final int ROOT_KEY = 141;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final MasterConfig config;
    private final MasterDaemon daemon;

    private WiredMaster(MasterConfig config, MasterDaemon daemon) {
        this.config = config;
        this.daemon = daemon;
    }

    /** With {@code master.yaml}'s defaults but for the paths, TCP on port 0 and the test keys. */
    public static WiredMaster start(Path dir) throws Exception {
        return start(dir, UnaryOperator.identity());
    }

    /** As {@link #start(Path)}, with the configuration changed by {@code customize}. */
    public static WiredMaster start(Path dir, UnaryOperator<MasterConfig.Builder> customize) throws Exception {
        MasterConfig config = config(dir, customize);
        return start(config, undelivered -> MasterDaemon.transport(config, undelivered));
    }

    /** As {@link #start(Path, UnaryOperator)}, on {@code clock}. */
    static WiredMaster start(Path dir, UnaryOperator<MasterConfig.Builder> customize, Clock clock) throws Exception {
        MasterConfig config = config(dir, customize);
        return start(config, undelivered -> MasterDaemon.transport(config, undelivered), clock);
    }

    /** As {@link #start(Path, UnaryOperator)}, serving the transport {@code transports} makes. */
    static WiredMaster start(
            Path dir, UnaryOperator<MasterConfig.Builder> customize, MasterDaemon.Transports transports)
            throws Exception {
        return start(config(dir, customize), transports);
    }

    /** As {@link #start(Path, UnaryOperator, MasterDaemon.Transports)}, on {@code clock}. */
    static WiredMaster start(
            Path dir, UnaryOperator<MasterConfig.Builder> customize, MasterDaemon.Transports transports, Clock clock)
            throws Exception {
        return start(config(dir, customize), transports, clock);
    }

    private static WiredMaster start(MasterConfig config, MasterDaemon.Transports transports) throws Exception {
        return start(config, transports, Clock.systemUTC());
    }

    private static WiredMaster start(MasterConfig config, MasterDaemon.Transports transports, Clock clock)
            throws Exception {
        AtomicFiles.ensureDirectory(config.pkiDir());
        AtomicFiles.ensureDirectory(config.cachedir());
        AtomicFiles.write(
                config.pkiDir().resolve("master.pem"),
                Pem.bytes(TestKeys.privatePem(MASTER_KEY)),
                AtomicFiles.OWNER_READ);
        AtomicFiles.write(
                config.cachedir().resolve(RootPublisher.KEY_FILE),
                Pem.bytes(TestKeys.privatePem(ROOT_KEY)),
                AtomicFiles.OWNER_READ);
        return new WiredMaster(config, MasterDaemon.start(config, clock, transports));
    }

    private static MasterConfig config(Path dir, UnaryOperator<MasterConfig.Builder> customize) {
        return customize
                .apply(MasterConfig.builder(dir)
                        .interfaceAddress("127.0.0.1")
                        .transport(TransportKind.TCP)
                        .tcpPort(0)
                        .workerThreads(2))
                .build();
    }

    public Master master() {
        return daemon.master();
    }

    public KeyStore keyStore() {
        return daemon.keyStore();
    }

    public MasterConfig config() {
        return config;
    }

    /** The port of {@code /metrics}, {@code /healthz}, {@code /readyz}; 0 when {@code http_port} is unset. */
    public int httpPort() {
        return daemon.httpPort();
    }

    /** The port of the HTTP API; 0 when {@code api:} is unset. */
    public int apiPort() {
        return daemon.apiPort();
    }

    /** The master's metrics, as {@code /metrics} shows them. */
    public MasterMetrics metrics() {
        return daemon.metrics();
    }

    /** The master's event stream, as {@code brine events} and the API read it. */
    public EventStream events() {
        return daemon.events();
    }

    /** Publisher sessions subscribed to the event stream. */
    public int eventSubscribers() {
        return daemon.events().subscribers();
    }

    /** The master's public key, which signs everything it sends. */
    public static PublicKey masterKey() {
        return TestKeys.pair(MASTER_KEY).getPublic();
    }

    /** The port the master's request channel is bound to. */
    public int port() {
        return master().addresses().request().getPort();
    }

    /** A new connection to the master's request channel, as a minion or a publisher opens it over TCP. */
    public TcpClientChannel connect() throws Exception {
        return new TcpClientChannel("127.0.0.1", port(), Duration.ofSeconds(10));
    }

    /** The local administrator ({@code root}, test key {@value #ROOT_KEY}) connected as a publisher. */
    public BrineClient root() throws Exception {
        return BrineClient.connect(
                TransportKind.TCP,
                "127.0.0.1",
                port(),
                RootPublisher.NAME,
                TestKeys.pair(ROOT_KEY),
                (RSAPublicKey) masterKey(),
                Duration.ofSeconds(10));
    }

    /** A fresh 32-byte nonce. */
    public static byte[] nonce() {
        byte[] nonce = new byte[32];
        RANDOM.nextBytes(nonce);
        return nonce;
    }

    /** An auth request of minion {@code id} offering test key {@code key}, signed by it, made now. */
    public static byte[] authRequest(String id, int key, byte[] nonce) {
        return authRequest(id, key, nonce, System.currentTimeMillis());
    }

    public static byte[] authRequest(String id, int key, byte[] nonce, long timestampMs) {
        KeyPair pair = TestKeys.pair(key);
        return Codec.encodeSigned(
                new AuthRequest(
                        Suite.RSA_OAEP_PSS_AES256GCM,
                        id,
                        pair.getPublic().getEncoded(),
                        nonce,
                        timestampMs,
                        Map.of(),
                        null,
                        null),
                pair.getPrivate());
    }

    @Override
    public void close() {
        daemon.close();
    }
}

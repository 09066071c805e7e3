package io.brine.daemon.config;

import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

// Over 400 lines: the schema of minion.yaml is one record with its nested sections and defaults, so every key,
// its default and its check are read in one place (the reading itself is MinionConfigFile).
/**
 * Everything the minion daemon is configured with, validated once and then immutable. {@code conf/minion.yaml}
 * documents every key; the record's components carry Salt's key names in camel case. Its {@code toString()} is
 * safe to log: the autosign token is a {@link Secret}.
 *
 * <p>Load it with {@link #load(Path)}; in tests build it with {@link #builder(Path, String)} so that every path
 * lands in a temporary directory.
 *
 * @param id {@code id}: valid by {@link MinionIds}, the one id validator
 * @param master {@code master}: the master's host name or address
 * @param tls {@code tls}: TLS for the TCP transport, trusting the master's certificate by this CA file; empty means
 *     plain TCP
 * @param masterFinger {@code master_finger}: the master key's fingerprint in normalized form; when empty the first
 *     key seen is pinned (trust on first use)
 * @param grains {@code grains}: static grains, each a list of values (a single value is a one-element list). They
 *     are claims the minion makes, never authority
 * @param pluginsDir {@code plugins_dir}: where extra function plugins are loaded from; empty means none
 * @param returnRetryMax {@code return_retry_max}: how long a return the master has not acknowledged is retried
 * @param jobTimeout {@code job_timeout}: a job's time limit when its publication sets none
 * @param publishMaxAge {@code publish_max_age}: a publication signed longer ago than this (by the master's clock,
 *     read with the minion's) is refused, so that one withheld on the way cannot be delivered later
 * @param autosignGrant {@code autosign_grant}: a provisioner-signed grant presented with the key
 * @param autosignToken {@code autosign_token}: a pre-shared token presented with the key
 * @param logFile {@code log_file}: empty means standard error
 * @param statusFile {@code status_file}: where the minion writes its connection state for monitoring
 * @param masters {@code master} written as a list, with {@code master_type: failover}: the masters of a cluster,
 *     each {@code host} or {@code host:port} (the port of the request channel of the minion's transport); the
 *     minion holds one session at a time and moves on when its master stops answering. Empty for one master
 * @param randomMaster {@code random_master}: start from a random master of {@code masters} rather than the first,
 *     so a fleet spreads over the cluster
 * @param logFormat {@code log_format}: text (the default) or json, one object a line
 * @param httpInterface {@code http_interface}: the address {@code /metrics}, {@code /healthz} and {@code /readyz}
 *     listen on; loopback by default
 * @param httpPort {@code http_port}: the port of those three; empty (the default) serves none
 * @param keyMaxAge {@code key_max_age}: the minion asks its master to rotate its key when the key is older than
 *     this; empty (the default) never
 * @param masterSignPub {@code verify_master_pubkey_sign: true}: the master signing key's public half, {@code
 *     pki_dir/}{@code master_sign_key_name}{@code .pub} ({@code master_sign.pub} by default); every new master key
 *     must then be signed by it (PROTOCOL.md 6.4). Empty (the default): a new master key is signed by the one before
 */
public record MinionConfig(
        String id,
        String master,
        int retPort,
        int publishPort,
        TransportKind transport,
        int tcpPort,
        Optional<Tls> tls,
        Path pkiDir,
        Path cachedir,
        int keysize,
        Optional<String> masterFinger,
        Auth auth,
        Map<String, List<String>> grains,
        Functions functions,
        Optional<Path> pluginsDir,
        Duration returnRetryMax,
        Duration jobTimeout,
        Duration publishMaxAge,
        int workerThreads,
        Optional<Path> autosignGrant,
        Optional<Secret> autosignToken,
        LogLevel logLevel,
        Optional<Path> logFile,
        Path statusFile,
        List<String> masters,
        boolean randomMaster,
        String httpInterface,
        OptionalInt httpPort,
        LogFormat logFormat,
        Optional<Duration> keyMaxAge,
        Optional<Path> masterSignPub,
        Duration reconDefault,
        Duration reconMax) {

    /** The file {@link #load(Path)} reads in the config directory. */
    public static final String FILE_NAME = "minion.yaml";

    public static final int MIN_KEYSIZE = 2048;
    /** {@code publish_max_age}'s default: a few minutes, well above the skew of NTP-synchronised clocks. */
    public static final Duration DEFAULT_PUBLISH_MAX_AGE = Duration.ofSeconds(300);

    public static final int MAX_KEYSIZE = 8192;
    /** {@code key_max_age}'s bounds: an hour (the minion asks at most once an hour) to ten years. */
    public static final Duration MIN_KEY_MAX_AGE = Duration.ofHours(1);

    public static final Duration MAX_KEY_MAX_AGE = Duration.ofDays(3650);

    /** Salt's {@code master_sign_key_name} default: {@code pki_dir/master_sign.pub}. */
    public static final String DEFAULT_MASTER_SIGN_KEY_NAME = "master_sign";

    /**
     * {@code recon_default} and {@code recon_max}: 1 s doubling to 5 s, the transports' defaults (BENCHMARKS.md, the
     * restart at 10,000: every minion back within 6 s of the master listening, 12 attempts a minute while it is down).
     */
    public static final Duration DEFAULT_RECON_DEFAULT = Duration.ofSeconds(1);

    public static final Duration DEFAULT_RECON_MAX = Duration.ofSeconds(5);
    /** {@code recon_default}'s bounds: 100 ms (no tighter loop against a master that is down) to a minute. */
    public static final Duration MIN_RECON_DEFAULT = Duration.ofMillis(100);

    public static final Duration MAX_RECON_DEFAULT = Duration.ofMinutes(1);
    /** {@code recon_max}'s upper bound: an hour. */
    public static final Duration MAX_RECON_MAX = Duration.ofHours(1);

    static final int DEFAULT_PUBLISH_PORT = 4505;
    static final int DEFAULT_RET_PORT = 4506;
    static final int DEFAULT_TCP_PORT = 4507;

    public MinionConfig {
        MinionIds.requireValid(id);
        Objects.requireNonNull(master, "master");
        masters = List.copyOf(masters);
        require(masters.isEmpty() || masters.size() >= 2, "masters lists two masters or more, or none");
        require(!randomMaster || !masters.isEmpty(), "randomMaster needs masters");
        requirePort(retPort, "retPort");
        requirePort(publishPort, "publishPort");
        Objects.requireNonNull(transport, "transport");
        requirePort(tcpPort, "tcpPort");
        Objects.requireNonNull(tls, "tls");
        require(tls.isEmpty() || transport == TransportKind.TCP, "tls applies to the tcp transport only");
        Objects.requireNonNull(pkiDir, "pkiDir");
        Objects.requireNonNull(cachedir, "cachedir");
        require(
                keysize >= MIN_KEYSIZE && keysize <= MAX_KEYSIZE && keysize % 8 == 0,
                "keysize must be a multiple of 8 from 2048 to 8192");
        Objects.requireNonNull(masterFinger, "masterFinger");
        masterFinger.ifPresent(
                f -> require(f.equals(Fingerprints.normalize(f)), "masterFinger must be a normalized fingerprint"));
        Objects.requireNonNull(auth, "auth");
        Map<String, List<String>> copy = new LinkedHashMap<>();
        grains.forEach((name, values) -> copy.put(name, List.copyOf(values)));
        grains = Collections.unmodifiableMap(copy);
        Objects.requireNonNull(functions, "functions");
        Objects.requireNonNull(pluginsDir, "pluginsDir");
        requirePositive(returnRetryMax, "returnRetryMax");
        requirePositive(publishMaxAge, "publishMaxAge");
        requirePositive(jobTimeout, "jobTimeout");
        require(workerThreads >= 1, "workerThreads must be at least 1");
        Objects.requireNonNull(autosignGrant, "autosignGrant");
        Objects.requireNonNull(autosignToken, "autosignToken");
        Objects.requireNonNull(logLevel, "logLevel");
        Objects.requireNonNull(logFile, "logFile");
        Objects.requireNonNull(statusFile, "statusFile");
        Objects.requireNonNull(httpInterface, "httpInterface");
        Objects.requireNonNull(logFormat, "logFormat");
        httpPort.ifPresent(port -> requirePort(port, "httpPort"));
        Objects.requireNonNull(keyMaxAge, "keyMaxAge");
        keyMaxAge.ifPresent(age -> require(
                age.compareTo(MIN_KEY_MAX_AGE) >= 0 && age.compareTo(MAX_KEY_MAX_AGE) <= 0,
                "keyMaxAge must be from an hour to ten years"));
        Objects.requireNonNull(masterSignPub, "masterSignPub");
        Objects.requireNonNull(reconDefault, "reconDefault");
        Objects.requireNonNull(reconMax, "reconMax");
        require(
                reconDefault.compareTo(MIN_RECON_DEFAULT) >= 0 && reconDefault.compareTo(MAX_RECON_DEFAULT) <= 0,
                "reconDefault must be from 100 ms to a minute");
        require(
                reconMax.compareTo(reconDefault) >= 0 && reconMax.compareTo(MAX_RECON_MAX) <= 0,
                "reconMax must be from reconDefault to an hour");
    }

    /** Reads {@code configDir/minion.yaml}. */
    public static MinionConfig load(Path configDir) throws ConfigException {
        return loadFile(configDir.resolve(FILE_NAME));
    }

    /** Reads one config file, for a daemon started with an explicit file rather than a directory. */
    public static MinionConfig loadFile(Path file) throws ConfigException {
        return MinionConfigFile.read(file, MinionConfigFile::localFqdn);
    }

    /**
     * The production defaults ({@code /etc/brine/pki/minion}, {@code /var/cache/brine/minion}); the id has no
     * default here and must be set.
     */
    public static Builder builder() {
        return new Builder(Path.of("/etc/brine/pki/minion"), Path.of("/var/cache/brine/minion"));
    }

    /** Defaults with {@code pki_dir} at {@code base/pki} and {@code cachedir} at {@code base/cache}: for tests. */
    public static Builder builder(Path base, String id) {
        return new Builder(base.resolve("pki"), base.resolve("cache")).id(id);
    }

    /** {@link #builder(Path, String)} with nothing else changed. */
    public static MinionConfig defaults(Path base, String id) {
        return builder(base, id).build();
    }

    /**
     * TLS for the TCP transport, under brine's own message crypto.
     *
     * @param ca {@code tls.ca}: PEM certificates to trust for the master's TLS certificate (its CA, or the
     *     certificate itself when self-signed); no other is accepted
     * @param verifyHostname {@code tls.verify_hostname}: also require the certificate to name {@code master}
     */
    public record Tls(Path ca, boolean verifyHostname) {
        public Tls {
            Objects.requireNonNull(ca, "ca");
        }
    }

    /**
     * How the minion retries authentication, with Salt's semantics.
     *
     * @param acceptanceWaitTime {@code acceptance_wait_time}: the wait between tries while the key is pending
     * @param acceptanceWaitTimeMax {@code acceptance_wait_time_max}: when longer than {@code acceptanceWaitTime},
     *     the wait doubles after each try up to this; zero means it never grows
     * @param rejectedRetry {@code rejected_retry}: keep trying after a rejection instead of stopping, so that an
     *     admin's later accept is picked up
     * @param authTimeout {@code auth_timeout}: how long one auth request waits for the master's answer
     */
    public record Auth(
            Duration acceptanceWaitTime, Duration acceptanceWaitTimeMax, boolean rejectedRetry, Duration authTimeout) {

        public Auth {
            requirePositive(acceptanceWaitTime, "acceptanceWaitTime");
            Objects.requireNonNull(acceptanceWaitTimeMax, "acceptanceWaitTimeMax");
            require(!acceptanceWaitTimeMax.isNegative(), "acceptanceWaitTimeMax must not be negative");
            requirePositive(authTimeout, "authTimeout");
        }

        public static Auth defaults() {
            return new Auth(Duration.ofSeconds(30), Duration.ZERO, false, Duration.ofSeconds(60));
        }

        /** The wait after a try that followed a wait of {@code previous}. */
        public Duration nextWait(Duration previous) {
            if (acceptanceWaitTimeMax.compareTo(acceptanceWaitTime) <= 0) {
                return acceptanceWaitTime;
            }
            Duration doubled = previous.multipliedBy(2);
            return doubled.compareTo(acceptanceWaitTimeMax) > 0
                    ? acceptanceWaitTimeMax
                    : doubled.compareTo(acceptanceWaitTime) < 0 ? acceptanceWaitTime : doubled;
        }
    }

    /**
     * Which functions the master may call here: one matching a glob in {@code allow} and none in {@code deny}.
     * Deny wins, so a minion owner can fence off functions whatever the master publishes.
     */
    public record Functions(List<String> allow, List<String> deny) {

        public Functions {
            allow = List.copyOf(allow);
            deny = List.copyOf(deny);
        }

        /** Everything allowed, nothing denied: the master is trusted, as in Salt. */
        public static Functions defaults() {
            return new Functions(List.of("*"), List.of());
        }
    }

    /**
     * Starts from the defaults; {@link #build()} validates. Setting a path-like option to null means "none" (or,
     * for {@code statusFile}, the default under {@code cachedir}).
     */
    public static final class Builder {
        private String id;
        private String master = "localhost";
        private int retPort = DEFAULT_RET_PORT;
        private int publishPort = DEFAULT_PUBLISH_PORT;
        private TransportKind transport = TransportKind.ZEROMQ;
        private int tcpPort = DEFAULT_TCP_PORT;
        private Tls tls;
        private Path pkiDir;
        private Path cachedir;
        private int keysize = 2048;
        private String masterFinger;
        private Auth auth = Auth.defaults();
        private Map<String, List<String>> grains = Map.of();
        private Functions functions = Functions.defaults();
        private Path pluginsDir;
        private Duration returnRetryMax = Duration.ofSeconds(300);
        private Duration jobTimeout = Duration.ofSeconds(60);
        private Duration publishMaxAge = DEFAULT_PUBLISH_MAX_AGE;
        private int workerThreads = 4;
        private Path autosignGrant;
        private Secret autosignToken;
        private LogLevel logLevel = LogLevel.INFO;
        private Path logFile;
        private Path statusFile;
        private List<String> masters = List.of();
        private boolean randomMaster;
        private String httpInterface = "127.0.0.1";
        private Integer httpPort;
        private LogFormat logFormat = LogFormat.TEXT;
        private Duration keyMaxAge;
        private String masterSignKeyName;
        private Duration reconDefault = DEFAULT_RECON_DEFAULT;
        private Duration reconMax = DEFAULT_RECON_MAX;

        private Builder(Path pkiDir, Path cachedir) {
            this.pkiDir = pkiDir;
            this.cachedir = cachedir;
        }

        public Builder id(String id) {
            this.id = id;
            return this;
        }

        public Builder master(String master) {
            this.master = master;
            return this;
        }

        /**
         * The masters of a cluster ({@code master} as a list with {@code master_type: failover}); the first is also
         * {@link MinionConfig#master()}. Each is {@code host} or {@code host:port}.
         */
        public Builder failoverMasters(List<String> masters) {
            this.masters = masters;
            if (!masters.isEmpty()) {
                String first = masters.get(0);
                this.master = first.startsWith("[")
                        ? first.substring(1, first.indexOf(']'))
                        : first.indexOf(':') == first.lastIndexOf(':') && first.contains(":")
                                ? first.substring(0, first.indexOf(':'))
                                : first;
            }
            return this;
        }

        public Builder randomMaster(boolean randomMaster) {
            this.randomMaster = randomMaster;
            return this;
        }

        public Builder retPort(int retPort) {
            this.retPort = retPort;
            return this;
        }

        public Builder publishPort(int publishPort) {
            this.publishPort = publishPort;
            return this;
        }

        public Builder transport(TransportKind transport) {
            this.transport = transport;
            return this;
        }

        public Builder tcpPort(int tcpPort) {
            this.tcpPort = tcpPort;
            return this;
        }

        public Builder tls(Tls tls) {
            this.tls = tls;
            return this;
        }

        public Builder pkiDir(Path pkiDir) {
            this.pkiDir = pkiDir;
            return this;
        }

        public Builder cachedir(Path cachedir) {
            this.cachedir = cachedir;
            return this;
        }

        public Builder keysize(int keysize) {
            this.keysize = keysize;
            return this;
        }

        /** Takes any form {@link Fingerprints#normalize} accepts; null means trust on first use. */
        public Builder masterFinger(String masterFinger) {
            this.masterFinger = masterFinger;
            return this;
        }

        public Builder auth(Auth auth) {
            this.auth = auth;
            return this;
        }

        public Builder grains(Map<String, List<String>> grains) {
            this.grains = grains;
            return this;
        }

        public Builder functions(Functions functions) {
            this.functions = functions;
            return this;
        }

        public Builder pluginsDir(Path pluginsDir) {
            this.pluginsDir = pluginsDir;
            return this;
        }

        public Builder returnRetryMax(Duration returnRetryMax) {
            this.returnRetryMax = returnRetryMax;
            return this;
        }

        public Builder jobTimeout(Duration jobTimeout) {
            this.jobTimeout = jobTimeout;
            return this;
        }

        public Builder publishMaxAge(Duration publishMaxAge) {
            this.publishMaxAge = publishMaxAge;
            return this;
        }

        public Builder workerThreads(int workerThreads) {
            this.workerThreads = workerThreads;
            return this;
        }

        public Builder autosignGrant(Path autosignGrant) {
            this.autosignGrant = autosignGrant;
            return this;
        }

        public Builder autosignToken(Secret autosignToken) {
            this.autosignToken = autosignToken;
            return this;
        }

        public Builder logLevel(LogLevel logLevel) {
            this.logLevel = logLevel;
            return this;
        }

        public Builder logFile(Path logFile) {
            this.logFile = logFile;
            return this;
        }

        public Builder logFormat(LogFormat logFormat) {
            this.logFormat = logFormat;
            return this;
        }

        public Builder httpInterface(String httpInterface) {
            this.httpInterface = httpInterface;
            return this;
        }

        /** Serves {@code /metrics}, {@code /healthz}, {@code /readyz} on this port (0: one the system chooses). */
        public Builder httpPort(Integer httpPort) {
            this.httpPort = httpPort;
            return this;
        }

        /**
         * {@code verify_master_pubkey_sign: true} with {@code master_sign_key_name: name}: the signing key's public
         * half is {@code pki_dir/name.pub}. null: a new master key need not be signed by it (the default).
         */
        public Builder masterSignKeyName(String name) {
            this.masterSignKeyName = name;
            return this;
        }

        /** null: the minion never asks for a rotation by itself (the default). */
        public Builder keyMaxAge(Duration keyMaxAge) {
            this.keyMaxAge = keyMaxAge;
            return this;
        }

        /** {@code recon_default} and {@code recon_max}: the transport's reconnection back-off. */
        public Builder reconnect(Duration reconDefault, Duration reconMax) {
            this.reconDefault = reconDefault;
            this.reconMax = reconMax;
            return this;
        }

        public Builder statusFile(Path statusFile) {
            this.statusFile = statusFile;
            return this;
        }

        /** @throws IllegalArgumentException for a value no config file could have produced, or no id */
        public MinionConfig build() {
            String finger = masterFinger == null ? null : Fingerprints.normalize(masterFinger);
            require(masterFinger == null || finger != null, "masterFinger is not a fingerprint");
            return new MinionConfig(
                    id,
                    master,
                    retPort,
                    publishPort,
                    transport,
                    tcpPort,
                    Optional.ofNullable(tls),
                    pkiDir,
                    cachedir,
                    keysize,
                    Optional.ofNullable(finger),
                    auth,
                    grains,
                    functions,
                    Optional.ofNullable(pluginsDir),
                    returnRetryMax,
                    jobTimeout,
                    publishMaxAge,
                    workerThreads,
                    Optional.ofNullable(autosignGrant),
                    Optional.ofNullable(autosignToken),
                    logLevel,
                    Optional.ofNullable(logFile),
                    statusFile != null ? statusFile : cachedir == null ? null : cachedir.resolve("status.json"),
                    masters,
                    randomMaster,
                    httpInterface,
                    httpPort == null ? OptionalInt.empty() : OptionalInt.of(httpPort),
                    logFormat,
                    Optional.ofNullable(keyMaxAge),
                    Optional.ofNullable(masterSignKeyName).map(name -> pkiDir.resolve(name + ".pub")),
                    reconDefault,
                    reconMax);
        }
    }

    private static void requirePort(int port, String name) {
        require(port >= 0 && port <= 65535, name + " must be from 0 to 65535");
    }

    private static void requirePositive(Duration duration, String name) {
        Objects.requireNonNull(duration, name);
        require(!duration.isNegative() && !duration.isZero(), name + " must be positive");
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }
}

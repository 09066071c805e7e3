package io.brine.daemon.config;

import io.brine.protocol.ReservedIds;
import io.brine.protocol.targeting.Nodegroups;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

// Over 400 lines: the schema of master.yaml is one record with its nested sections and defaults, so every key,
// its default and its check are read in one place (the reading itself is MasterConfigFile).
/**
 * Everything the master daemon is configured with, validated once and then immutable, so that no component has to
 * re-check a value or cope with a half-read file. {@code conf/master.yaml} documents every key; the record's
 * components carry Salt's key names in camel case.
 *
 * <p>Load it with {@link #load(Path)}; in tests build it with {@link #builder(Path)} so that every path lands in a
 * temporary directory. Ports may be 0 (an ephemeral port) only when built in code.
 *
 * @param interfaceAddress {@code interface}: the address both channels listen on
 * @param transports {@code transport}: the transports served, one or both (during a migration), in the order
 *     written; the first one's ports are the ones logged
 * @param tls {@code tls}: certificate and key for the TCP transport; empty means plain TCP
 * @param maxMinions {@code max_minions}: accepted minions at most; 0 means no limit
 * @param maxPending {@code max_pending}: keys waiting in {@code minions_pre/} at most, a bound on what the
 *     unauthenticated can make the master store
 * @param authRatePerSource {@code auth_rate_per_source}: auth requests a second from one source address
 * @param authWorkBudget {@code auth_work_budget}: private-key operations a second, over all sources, for answers to
 *     peers that hold no accepted key (refusals, pending and unknown keys, Salt's {@code _auth}, SessionUnknown)
 * @param connectionLimits {@code max_connections}, {@code max_unauthenticated_connections},
 *     {@code max_unauthenticated_per_source}: each transport's defaults where unset
 * @param maxReturnBytes {@code max_return_bytes}: a job return whose session frame is larger is refused (stored as
 *     a refusal with its reason, acknowledged so that the minion does not resend it)
 * @param keepJobs {@code keep_jobs_seconds}: how long finished jobs stay in the job cache
 * @param logFile {@code log_file}: empty means standard error
 * @param cluster {@code cluster}: the ZooKeeper ensemble shared with other masters; empty means one master on the
 *     filesystem store (the default)
 * @param saltMinions {@code salt_minions}: also serve stock Salt minions on {@code ret_port} (off by default: Salt's
 *     suite is older than brine's; protocol/SALT.md)
 * @param logFormat {@code log_format}: text (the default) or json, one object a line
 * @param keyRotation {@code key_rotation}: whether a minion may replace its accepted key by rotating (allow, the
 *     default) or not (deny)
 * @param masterKeyGrace {@code master_key_grace}: after {@code brine-key --rotate-master-key}, how long the previous
 *     master key still signs publications (7 days by default; PROTOCOL.md 6.4)
 * @param masterKeyChain {@code master_key_chain}: how many succession records the master keeps and shows (5 by
 *     default, at most 16): a minion offline across more rotations than that is refused as a stranger
 * @param masterSignPub {@code master_sign_pubkey: true}: the offline master signing key's public half, {@code
 *     pki_dir/}{@code master_sign_key_name}{@code .pub} ({@code master_sign.pub} by default); {@code brine-key
 *     --rotate-master-key} then refuses a rotation not signed by its private half (minions with {@code
 *     verify_master_pubkey_sign} would refuse it). Empty (the default): a rotation is signed by the previous key
 * @param httpInterface {@code http_interface}: the address {@code /metrics}, {@code /healthz} and {@code /readyz}
 *     listen on; loopback by default, since metrics describe the fleet
 * @param httpPort {@code http_port}: the port of those three; empty (the default) serves none
 * @param api {@code api}: the HTTP API (JSON under {@code /api/}); empty (the default) serves none
 * @param fileServer {@code file_roots} and the keys of Salt's file server for stock Salt minions' states
 * @param nodegroups {@code nodegroups}: Salt's nodegroups, each name to a compound target (a list of ids already
 *     written as {@code L@...}), checked together at load ({@code io.brine.protocol.targeting.Nodegroups})
 */
public record MasterConfig(
        String interfaceAddress,
        int publishPort,
        int retPort,
        Set<TransportKind> transports,
        int tcpPort,
        Optional<Tls> tls,
        Path pkiDir,
        Path cachedir,
        int keysize,
        Duration publishSession,
        int maxMinions,
        int maxPending,
        int authRatePerSource,
        int authBurst,
        int authWorkBudget,
        int workerThreads,
        ConnectionLimits connectionLimits,
        int maxReturnBytes,
        Duration keepJobs,
        int jobCacheMaxMib,
        Acceptance acceptance,
        Map<String, PublisherAcl> publisherAcl,
        Map<String, String> nodegroups,
        LogLevel logLevel,
        Optional<Path> logFile,
        Path auditLog,
        Optional<ClusterConfig> cluster,
        boolean saltMinions,
        String httpInterface,
        OptionalInt httpPort,
        LogFormat logFormat,
        KeyRotationPolicy keyRotation,
        Duration masterKeyGrace,
        int masterKeyChain,
        Optional<Path> masterSignPub,
        Optional<Api> api,
        FileServer fileServer) {

    /** The file {@link #load(Path)} reads in the config directory. */
    public static final String FILE_NAME = "master.yaml";

    /** The most succession records a chain may hold (PROTOCOL.md 10). */
    public static final int MAX_MASTER_KEY_CHAIN = 16;

    public static final int MIN_KEYSIZE = 2048;
    public static final int MAX_KEYSIZE = 8192;
    public static final int MIN_RETURN_BYTES = 1024;
    /** A frame's limit (PROTOCOL.md 3.3): no return can be larger. */
    public static final int MAX_RETURN_BYTES = 8 * 1024 * 1024;

    public MasterConfig {
        Objects.requireNonNull(interfaceAddress, "interfaceAddress");
        requirePort(publishPort, "publishPort");
        requirePort(retPort, "retPort");
        require(transports != null && !transports.isEmpty(), "transports must name at least one transport");
        transports = Collections.unmodifiableSet(new LinkedHashSet<>(transports));
        requirePort(tcpPort, "tcpPort");
        Objects.requireNonNull(tls, "tls");
        require(tls.isEmpty() || transports.contains(TransportKind.TCP), "tls applies to the tcp transport only");
        Objects.requireNonNull(pkiDir, "pkiDir");
        Objects.requireNonNull(cachedir, "cachedir");
        require(
                keysize >= MIN_KEYSIZE && keysize <= MAX_KEYSIZE && keysize % 8 == 0,
                "keysize must be a multiple of 8 from 2048 to 8192");
        requirePositive(publishSession, "publishSession");
        require(maxMinions >= 0, "maxMinions must be 0 (no limit) or more");
        require(maxPending >= 1, "maxPending must be at least 1");
        require(authRatePerSource >= 1, "authRatePerSource must be at least 1");
        require(authBurst >= 1, "authBurst must be at least 1");
        require(authWorkBudget >= 1, "authWorkBudget must be at least 1");
        require(workerThreads >= 1, "workerThreads must be at least 1");
        Objects.requireNonNull(connectionLimits, "connectionLimits");
        require(
                maxReturnBytes >= MIN_RETURN_BYTES && maxReturnBytes <= MAX_RETURN_BYTES,
                "maxReturnBytes must be from 1024 to 8388608");
        requirePositive(keepJobs, "keepJobs");
        require(jobCacheMaxMib >= 1, "jobCacheMaxMib must be at least 1");
        Objects.requireNonNull(acceptance, "acceptance");
        publisherAcl = Collections.unmodifiableMap(new LinkedHashMap<>(publisherAcl));
        nodegroups = Collections.unmodifiableMap(new LinkedHashMap<>(nodegroups));
        Map<String, String> nodegroupProblems = Nodegroups.problems(nodegroups);
        require(nodegroupProblems.isEmpty(), "nodegroups: " + nodegroupProblems);
        Objects.requireNonNull(logLevel, "logLevel");
        Objects.requireNonNull(logFile, "logFile");
        Objects.requireNonNull(auditLog, "auditLog");
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(httpInterface, "httpInterface");
        Objects.requireNonNull(logFormat, "logFormat");
        Objects.requireNonNull(keyRotation, "keyRotation");
        requirePositive(masterKeyGrace, "masterKeyGrace");
        require(
                masterKeyChain >= 1 && masterKeyChain <= MAX_MASTER_KEY_CHAIN,
                "masterKeyChain must be from 1 to " + MAX_MASTER_KEY_CHAIN);
        httpPort.ifPresent(port -> requirePort(port, "httpPort"));
        Objects.requireNonNull(masterSignPub, "masterSignPub");
        Objects.requireNonNull(api, "api");
        Objects.requireNonNull(fileServer, "fileServer");
    }

    /** Reads {@code configDir/master.yaml}. */
    public static MasterConfig load(Path configDir) throws ConfigException {
        return loadFile(configDir.resolve(FILE_NAME));
    }

    /** Reads one config file, for a daemon started with an explicit file rather than a directory. */
    public static MasterConfig loadFile(Path file) throws ConfigException {
        return MasterConfigFile.read(file, false);
    }

    /**
     * As {@link #load}, and checks the files it names as the master will use them (exist, readable, permissions),
     * each problem at its file:line: for the master's --check-config and start, not for the CLIs (other users).
     */
    public static MasterConfig loadChecked(Path configDir) throws ConfigException {
        return MasterConfigFile.read(configDir.resolve(FILE_NAME), true);
    }

    /** The production defaults: {@code /etc/brine/pki/master}, {@code /var/cache/brine/master}. */
    public static Builder builder() {
        return new Builder(Path.of("/etc/brine/pki/master"), Path.of("/var/cache/brine/master"));
    }

    /** Defaults with {@code pki_dir} at {@code base/pki} and {@code cachedir} at {@code base/cache}: for tests. */
    public static Builder builder(Path base) {
        return new Builder(base.resolve("pki"), base.resolve("cache"));
    }

    /** {@link #builder(Path)} with nothing changed. */
    public static MasterConfig defaults(Path base) {
        return builder(base).build();
    }

    /**
     * Salt's {@code roots} file server, read-only, for stock Salt minions' states and {@code cp.*} (SALT.md §9).
     *
     * @param fileRoots {@code file_roots}: each environment's directories, absolute, searched in order; none by default
     *     (nothing is served until an admin names a directory)
     * @param fileIgnoreRegex {@code file_ignore_regex}: a relative path one of them finds is not served
     * @param fileIgnoreGlob {@code file_ignore_glob}: nor one that matches one of these (fnmatch)
     * @param hashType {@code hash_type}: md5, sha1, sha224, sha256 (the default), sha384, sha512
     * @param fileBufferSize {@code file_buffer_size}: the largest chunk of a file in one answer (1 MiB, as Salt's)
     * @param fileserverListCacheTime {@code fileserver_list_cache_time}: how long a listing is reused (20 s, as Salt's)
     * @param fileserverRequestsPerSecond {@code fileserver_requests_per_second}: each minion's request rate
     * @param fileserverBurst {@code fileserver_burst}: requests a minion may make at once before the rate applies
     * @param fileserverMaxMibInFlight {@code fileserver_max_mib_in_flight}: MiB of file server answers (chunks, listings)
     *     being built and sealed at once
     */
    public record FileServer(
            Map<String, List<Path>> fileRoots,
            List<String> fileIgnoreRegex,
            List<String> fileIgnoreGlob,
            String hashType,
            int fileBufferSize,
            Duration fileserverListCacheTime,
            int fileserverRequestsPerSecond,
            int fileserverBurst,
            int fileserverMaxMibInFlight) {
        public static final List<String> HASH_TYPES = List.of("md5", "sha1", "sha224", "sha256", "sha384", "sha512");
        public static final int MIN_BUFFER_SIZE = 4096;
        public static final int MAX_BUFFER_SIZE = 4 * 1024 * 1024;

        public FileServer {
            Map<String, List<Path>> copy = new LinkedHashMap<>();
            fileRoots.forEach((env, dirs) -> copy.put(env, List.copyOf(dirs)));
            fileRoots = Collections.unmodifiableMap(copy);
            fileRoots
                    .values()
                    .forEach(dirs ->
                            dirs.forEach(dir -> require(dir.isAbsolute(), "file_roots must be absolute: " + dir)));
            fileIgnoreRegex = List.copyOf(fileIgnoreRegex);
            fileIgnoreGlob = List.copyOf(fileIgnoreGlob);
            require(HASH_TYPES.contains(hashType), "hash_type must be one of " + HASH_TYPES);
            require(
                    fileBufferSize >= MIN_BUFFER_SIZE && fileBufferSize <= MAX_BUFFER_SIZE,
                    "file_buffer_size must be from 4096 to 4194304");
            requirePositive(fileserverListCacheTime, "fileserver_list_cache_time");
            require(
                    fileserverRequestsPerSecond >= 1 && fileserverBurst >= 1,
                    "fileserver rate and burst must be at least 1");
            require(fileserverMaxMibInFlight >= 8, "fileserver_max_mib_in_flight must be at least 8");
        }

        /** No roots, Salt's defaults for the rest. */
        public static FileServer defaults() {
            return new FileServer(
                    Map.of(), List.of(), List.of(), "sha256", 1024 * 1024, Duration.ofSeconds(20), 500, 2_000, 64);
        }

        public FileServer withRoots(Map<String, List<Path>> roots) {
            return new FileServer(
                    roots,
                    fileIgnoreRegex,
                    fileIgnoreGlob,
                    hashType,
                    fileBufferSize,
                    fileserverListCacheTime,
                    fileserverRequestsPerSecond,
                    fileserverBurst,
                    fileserverMaxMibInFlight);
        }
    }

    /** TLS material for the TCP transport: a PEM certificate chain and its PEM private key. */
    public record Tls(Path cert, Path key) {
        public Tls {
            Objects.requireNonNull(cert, "cert");
            Objects.requireNonNull(key, "key");
        }
    }

    /**
     * The HTTP API ({@code api:}): JSON under {@code /api/} on Netty, for pipelines and the console. Served over HTTPS
     * with {@code tls}; plain HTTP only on a loopback {@code interfaceAddress} (the master refuses to start otherwise).
     *
     * @param interfaceAddress {@code interface}: loopback by default
     * @param port {@code port} (0: one the system chooses, in code only)
     * @param tls {@code tls}: certificate chain and key (PEM), required unless bound to loopback
     * @param maxBodyBytes {@code max_body_bytes}: a request body over it is refused (413) as it arrives
     * @param maxConnections {@code max_connections}: open connections at most; one more is closed at once
     * @param requestsPerSecond {@code requests_per_second}: per token (its burst is twice as many); past it, 429
     * @param requestTimeout {@code request_timeout}: a request (headers and body) must arrive within it; else 408
     * @param clientCerts {@code client_ca}, {@code client_auth}, {@code client_revoked}: client certificates that
     *     stand for the API token their subject's CN names; empty (the default) asks for none
     */
    public record Api(
            String interfaceAddress,
            int port,
            Optional<Tls> tls,
            int maxBodyBytes,
            int maxConnections,
            int requestsPerSecond,
            Duration requestTimeout,
            Optional<ClientCerts> clientCerts) {
        public static final String DEFAULT_INTERFACE = "127.0.0.1";
        public static final int DEFAULT_MAX_BODY_BYTES = 64 * 1024;
        public static final int DEFAULT_MAX_CONNECTIONS = 256;
        public static final int DEFAULT_REQUESTS_PER_SECOND = 20;
        public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

        public Api {
            Objects.requireNonNull(interfaceAddress, "interfaceAddress");
            requirePort(port, "api port");
            Objects.requireNonNull(tls, "tls");
            require(maxBodyBytes >= 1024 && maxBodyBytes <= 16 * 1024 * 1024, "api maxBodyBytes from 1024 to 16 MiB");
            require(maxConnections >= 1, "api maxConnections must be at least 1");
            require(requestsPerSecond >= 1, "api requestsPerSecond must be at least 1");
            requirePositive(requestTimeout, "api requestTimeout");
            Objects.requireNonNull(clientCerts, "clientCerts");
            require(clientCerts.isEmpty() || tls.isPresent(), "api client certificates need tls");
        }

        /** Without client certificates. */
        public Api(
                String interfaceAddress,
                int port,
                Optional<Tls> tls,
                int maxBodyBytes,
                int maxConnections,
                int requestsPerSecond,
                Duration requestTimeout) {
            this(
                    interfaceAddress,
                    port,
                    tls,
                    maxBodyBytes,
                    maxConnections,
                    requestsPerSecond,
                    requestTimeout,
                    Optional.empty());
        }

        /** On {@code port} of loopback, plain HTTP, the default limits. */
        public static Api loopback(int port) {
            return new Api(
                    DEFAULT_INTERFACE,
                    port,
                    Optional.empty(),
                    DEFAULT_MAX_BODY_BYTES,
                    DEFAULT_MAX_CONNECTIONS,
                    DEFAULT_REQUESTS_PER_SECOND,
                    DEFAULT_REQUEST_TIMEOUT);
        }

        public Api withLimits(int maxBodyBytes, int maxConnections, int requestsPerSecond, Duration requestTimeout) {
            return new Api(
                    interfaceAddress,
                    port,
                    tls,
                    maxBodyBytes,
                    maxConnections,
                    requestsPerSecond,
                    requestTimeout,
                    clientCerts);
        }

        /** Over HTTPS with {@code tls}, verifying client certificates as {@code clientCerts} says (or none). */
        public Api withTls(Tls tls, Optional<ClientCerts> clientCerts) {
            return new Api(
                    interfaceAddress,
                    port,
                    Optional.of(tls),
                    maxBodyBytes,
                    maxConnections,
                    requestsPerSecond,
                    requestTimeout,
                    clientCerts);
        }
    }

    /** {@code api.client_auth}: whether the API asks a client for a certificate, and whether it must send one. */
    public enum ClientAuth {
        /** Asks for none (the default). */
        NONE,
        /** Asks; a client may send a certificate or a bearer token. */
        OPTIONAL,
        /** A connection without a certificate the CA verifies is refused at the TLS handshake. */
        REQUIRED
    }

    /**
     * The API's client certificates: the CAs in {@code ca} sign them (checked at the TLS handshake: one they do not
     * verify, or expired, is refused there), and a verified certificate stands for the API token its subject's CN
     * names (its ACL, key-admin permission and expiry; revoking the token refuses the certificate too).
     *
     * @param clientCa {@code client_ca}: PEM certificates of the CAs that sign client certificates
     * @param clientAuth {@code client_auth}: {@link ClientAuth#OPTIONAL} or {@link ClientAuth#REQUIRED}
     * @param clientRevoked {@code client_revoked}: SHA-256 fingerprints (lower-case hex, no colons) of certificates refused
     *     although the CA verifies them (401), at most {@value #MAX_REVOKED}
     */
    public record ClientCerts(Path clientCa, ClientAuth clientAuth, Set<String> clientRevoked) {
        public static final int MAX_REVOKED = 1000;

        public ClientCerts {
            Objects.requireNonNull(clientCa, "clientCa");
            require(
                    clientAuth == ClientAuth.OPTIONAL || clientAuth == ClientAuth.REQUIRED,
                    "client certificates are" + " optional or required");
            clientRevoked = Set.copyOf(clientRevoked);
            require(clientRevoked.size() <= MAX_REVOKED, "at most " + MAX_REVOKED + " revoked client certificates");
            require(
                    clientRevoked.stream().allMatch(f -> f.matches("[0-9a-f]{64}")),
                    "revoked fingerprints are 64" + " lower-case hex digits");
        }
    }

    /**
     * What one publisher may do ({@code publisher_acl}): publish to the minions whose ids match one of
     * {@code targets} a function matching one of {@code functions}. Empty lists allow nothing.
     */
    public record PublisherAcl(List<String> targets, List<String> functions) {
        public PublisherAcl {
            targets = List.copyOf(targets);
            functions = List.copyOf(functions);
        }
    }

    /**
     * A pre-shared autosign token: a minion whose id matches {@code match} and that presents a token {@code t} with
     * {@code SHA-256(salt || t) == sha256} is accepted. Only the salt and the salted hash are configured, so the
     * master's config holds no secret; {@code brine-key token-hash} makes the entry.
     *
     * <p>Why a salted SHA-256 and not a slow KDF: tokens are random secrets of at least 16 characters
     * ({@code brine-key token-hash} refuses shorter ones and can generate them), so brute force is hopeless either
     * way, while a deliberately slow hash on the unauthenticated path would hand anyone who can send auth requests a
     * lever on the master's two cores. The random per-entry salt keeps equal tokens from having equal entries and
     * rules out precomputed tables.
     *
     * @param match a glob on minion ids
     * @param salt 16 to 64 random bytes, as lower-case hex
     * @param sha256 64 lower-case hex digits: SHA-256 over the salt's bytes followed by the token's UTF-8 bytes
     * @param singleUse whether the token is spent by its first use (recorded under {@code cachedir})
     */
    public record AutosignToken(String match, String salt, String sha256, boolean singleUse) {
        public AutosignToken {
            Objects.requireNonNull(match, "match");
            require(
                    salt != null && salt.matches("([0-9a-f]{2}){16,64}"),
                    "salt must be 16 to 64 bytes as lower-case hex");
            require(sha256 != null && sha256.matches("[0-9a-f]{64}"), "sha256 must be 64 lower-case hex digits");
        }

        @Override
        public String toString() {
            return "AutosignToken[match=" + match + ", singleUse=" + singleUse + "]";
        }
    }

    /**
     * How unknown keys get accepted without an admin (the acceptance policies); all off by default, so that a new
     * key waits in {@code minions_pre/}.
     *
     * @param autoAccept {@code auto_accept}: accept every new key (for labs only)
     * @param autosignFile {@code autosign_file}: ids or globs, one a line, that are accepted
     * @param autorejectFile {@code autoreject_file}: ids or globs, one a line, that are rejected; wins over the rest
     * @param autosignPolicy {@code autosign_policy}: an executable asked about each new key
     * @param autosignClaims {@code autosign_claims}: claim name to globs; a minion whose claims all match is
     *     accepted. Claims are unsigned: this is only as strong as the network (DESIGN.md §4.8)
     * @param inventoryFile {@code inventory_file}: expected minions (id, created_at, addresses), accepted when they
     *     ask within {@code inventoryWindow} of created_at from one of their addresses
     * @param autosignTokens {@code autosign_tokens}: salted hashes of pre-shared tokens
     * @param reservedIds {@code reserved_ids}: ids no minion may use, refused at auth whatever the policies say
     *     ({@link io.brine.protocol.ReservedIds}: {@code NAME} or {@code NAME.*})
     */
    public record Acceptance(
            boolean autoAccept,
            Optional<Path> autosignFile,
            Optional<Path> autorejectFile,
            Optional<Path> autosignPolicy,
            Duration autosignPolicyTimeout,
            int autosignPolicyMaxConcurrent,
            Map<String, List<String>> autosignClaims,
            Optional<Path> inventoryFile,
            Duration inventoryWindow,
            List<AutosignToken> autosignTokens,
            List<String> reservedIds) {

        public Acceptance {
            Objects.requireNonNull(autosignFile, "autosignFile");
            Objects.requireNonNull(autorejectFile, "autorejectFile");
            Objects.requireNonNull(autosignPolicy, "autosignPolicy");
            requirePositive(autosignPolicyTimeout, "autosignPolicyTimeout");
            require(autosignPolicyMaxConcurrent >= 1, "autosignPolicyMaxConcurrent must be at least 1");
            Map<String, List<String>> claims = new LinkedHashMap<>();
            autosignClaims.forEach((name, globs) -> claims.put(name, List.copyOf(globs)));
            autosignClaims = Collections.unmodifiableMap(claims);
            Objects.requireNonNull(inventoryFile, "inventoryFile");
            requirePositive(inventoryWindow, "inventoryWindow");
            autosignTokens = List.copyOf(autosignTokens);
            reservedIds = ReservedIds.of(reservedIds).entries();
        }

        /** {@link #reservedIds()} as the matcher the auth paths and brine-key ask. */
        public ReservedIds reserved() {
            return ReservedIds.of(reservedIds);
        }

        public static Builder builder() {
            return new Builder();
        }

        /** Nothing is accepted without an admin. */
        public static Acceptance defaults() {
            return builder().build();
        }

        /** Starts from the defaults. */
        public static final class Builder {
            private boolean autoAccept;
            private Path autosignFile;
            private Path autorejectFile;
            private Path autosignPolicy;
            private Duration autosignPolicyTimeout = Duration.ofSeconds(10);
            private int autosignPolicyMaxConcurrent = 4;
            private Map<String, List<String>> autosignClaims = Map.of();
            private Path inventoryFile;
            private Duration inventoryWindow = Duration.ofSeconds(7200);
            private List<AutosignToken> autosignTokens = List.of();
            private List<String> reservedIds = ReservedIds.DEFAULT_ENTRIES;

            private Builder() {}

            public Builder autoAccept(boolean autoAccept) {
                this.autoAccept = autoAccept;
                return this;
            }

            public Builder autosignFile(Path autosignFile) {
                this.autosignFile = autosignFile;
                return this;
            }

            public Builder autorejectFile(Path autorejectFile) {
                this.autorejectFile = autorejectFile;
                return this;
            }

            public Builder autosignPolicy(Path autosignPolicy) {
                this.autosignPolicy = autosignPolicy;
                return this;
            }

            public Builder autosignPolicyTimeout(Duration autosignPolicyTimeout) {
                this.autosignPolicyTimeout = autosignPolicyTimeout;
                return this;
            }

            public Builder autosignPolicyMaxConcurrent(int autosignPolicyMaxConcurrent) {
                this.autosignPolicyMaxConcurrent = autosignPolicyMaxConcurrent;
                return this;
            }

            public Builder autosignClaims(Map<String, List<String>> autosignClaims) {
                this.autosignClaims = autosignClaims;
                return this;
            }

            public Builder inventoryFile(Path inventoryFile) {
                this.inventoryFile = inventoryFile;
                return this;
            }

            public Builder inventoryWindow(Duration inventoryWindow) {
                this.inventoryWindow = inventoryWindow;
                return this;
            }

            public Builder autosignTokens(List<AutosignToken> autosignTokens) {
                this.autosignTokens = autosignTokens;
                return this;
            }

            public Builder reservedIds(List<String> reservedIds) {
                this.reservedIds = reservedIds;
                return this;
            }

            public Acceptance build() {
                return new Acceptance(
                        autoAccept,
                        Optional.ofNullable(autosignFile),
                        Optional.ofNullable(autorejectFile),
                        Optional.ofNullable(autosignPolicy),
                        autosignPolicyTimeout,
                        autosignPolicyMaxConcurrent,
                        autosignClaims,
                        Optional.ofNullable(inventoryFile),
                        inventoryWindow,
                        autosignTokens,
                        reservedIds);
            }
        }
    }

    /**
     * Starts from the defaults; {@link #build()} validates. Setting a path-like option to null means "none" (or,
     * for {@code auditLog}, the default under {@code cachedir}).
     */
    public static final class Builder {
        private String interfaceAddress = "0.0.0.0";
        private int publishPort = 4505;
        private int retPort = 4506;
        private Set<TransportKind> transports = Set.of(TransportKind.ZEROMQ);
        private int tcpPort = 4507;
        private Tls tls;
        private Path pkiDir;
        private Path cachedir;
        private int keysize = 2048;
        private Duration publishSession = Duration.ofSeconds(86400);
        private int maxMinions;
        private int maxPending = 1000;
        private int authRatePerSource = 20;
        private int authBurst = 50;
        private int authWorkBudget = 100;
        private int workerThreads = Runtime.getRuntime().availableProcessors();
        private int maxReturnBytes = 4 * 1024 * 1024;
        private ConnectionLimits connectionLimits = ConnectionLimits.DEFAULTS;
        private Duration keepJobs = Duration.ofSeconds(86400);
        private int jobCacheMaxMib = 1024;
        private Acceptance acceptance = Acceptance.defaults();
        private Map<String, PublisherAcl> publisherAcl = Map.of();
        private Map<String, String> nodegroups = Map.of();
        private LogLevel logLevel = LogLevel.INFO;
        private Path logFile;
        private Path auditLog;
        private ClusterConfig cluster;
        private boolean saltMinions;
        private String httpInterface = "127.0.0.1";
        private Integer httpPort;
        private LogFormat logFormat = LogFormat.TEXT;
        private KeyRotationPolicy keyRotation = KeyRotationPolicy.ALLOW;
        private Duration masterKeyGrace = Duration.ofDays(7);
        private int masterKeyChain = 5;
        private String masterSignKeyName;
        private Api api;
        private FileServer fileServer = FileServer.defaults();

        private Builder(Path pkiDir, Path cachedir) {
            this.pkiDir = pkiDir;
            this.cachedir = cachedir;
        }

        public Builder interfaceAddress(String interfaceAddress) {
            this.interfaceAddress = interfaceAddress;
            return this;
        }

        public Builder publishPort(int publishPort) {
            this.publishPort = publishPort;
            return this;
        }

        public Builder retPort(int retPort) {
            this.retPort = retPort;
            return this;
        }

        /** Serves this one transport. */
        public Builder transport(TransportKind transport) {
            this.transports = Set.of(transport);
            return this;
        }

        /** Serves these transports at once, in this order (the first one's ports are the ones logged). */
        public Builder transports(TransportKind... transports) {
            this.transports = new LinkedHashSet<>(List.of(transports));
            return this;
        }

        public Builder transports(Set<TransportKind> transports) {
            this.transports = transports;
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

        public Builder publishSession(Duration publishSession) {
            this.publishSession = publishSession;
            return this;
        }

        public Builder maxMinions(int maxMinions) {
            this.maxMinions = maxMinions;
            return this;
        }

        public Builder maxPending(int maxPending) {
            this.maxPending = maxPending;
            return this;
        }

        public Builder authRatePerSource(int authRatePerSource) {
            this.authRatePerSource = authRatePerSource;
            return this;
        }

        public Builder authBurst(int authBurst) {
            this.authBurst = authBurst;
            return this;
        }

        public Builder authWorkBudget(int authWorkBudget) {
            this.authWorkBudget = authWorkBudget;
            return this;
        }

        public Builder workerThreads(int workerThreads) {
            this.workerThreads = workerThreads;
            return this;
        }

        public Builder connectionLimits(ConnectionLimits connectionLimits) {
            this.connectionLimits = connectionLimits;
            return this;
        }

        public Builder maxReturnBytes(int maxReturnBytes) {
            this.maxReturnBytes = maxReturnBytes;
            return this;
        }

        public Builder keepJobs(Duration keepJobs) {
            this.keepJobs = keepJobs;
            return this;
        }

        public Builder jobCacheMaxMib(int jobCacheMaxMib) {
            this.jobCacheMaxMib = jobCacheMaxMib;
            return this;
        }

        public Builder acceptance(Acceptance acceptance) {
            this.acceptance = acceptance;
            return this;
        }

        /** Nodegroups by name, each a compound target (checked when the master builds its nodegroups). */
        public Builder nodegroups(Map<String, String> nodegroups) {
            this.nodegroups = nodegroups;
            return this;
        }

        public Builder publisherAcl(Map<String, PublisherAcl> publisherAcl) {
            this.publisherAcl = publisherAcl;
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

        public Builder auditLog(Path auditLog) {
            this.auditLog = auditLog;
            return this;
        }

        /** Joins the cluster on this ensemble; null for one master alone. */
        public Builder cluster(ClusterConfig cluster) {
            this.cluster = cluster;
            return this;
        }

        public Builder saltMinions(boolean saltMinions) {
            this.saltMinions = saltMinions;
            return this;
        }

        public Builder keyRotation(KeyRotationPolicy keyRotation) {
            this.keyRotation = keyRotation;
            return this;
        }

        public Builder masterKeyGrace(Duration masterKeyGrace) {
            this.masterKeyGrace = masterKeyGrace;
            return this;
        }

        public Builder masterKeyChain(int masterKeyChain) {
            this.masterKeyChain = masterKeyChain;
            return this;
        }

        /** {@code master_sign_pubkey: true} with this {@code master_sign_key_name}; null: off (the default). */
        public Builder masterSignKeyName(String name) {
            this.masterSignKeyName = name;
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

        public Builder fileServer(FileServer fileServer) {
            this.fileServer = fileServer;
            return this;
        }

        /** Serves the HTTP API; null for none (the default). */
        public Builder api(Api api) {
            this.api = api;
            return this;
        }

        /** @throws IllegalArgumentException for a value no config file could have produced */
        public MasterConfig build() {
            return new MasterConfig(
                    interfaceAddress,
                    publishPort,
                    retPort,
                    transports,
                    tcpPort,
                    Optional.ofNullable(tls),
                    pkiDir,
                    cachedir,
                    keysize,
                    publishSession,
                    maxMinions,
                    maxPending,
                    authRatePerSource,
                    authBurst,
                    authWorkBudget,
                    workerThreads,
                    connectionLimits,
                    maxReturnBytes,
                    keepJobs,
                    jobCacheMaxMib,
                    acceptance,
                    publisherAcl,
                    nodegroups,
                    logLevel,
                    Optional.ofNullable(logFile),
                    auditLog != null ? auditLog : cachedir == null ? null : cachedir.resolve("audit.log"),
                    Optional.ofNullable(cluster),
                    saltMinions,
                    httpInterface,
                    httpPort == null ? OptionalInt.empty() : OptionalInt.of(httpPort),
                    logFormat,
                    keyRotation,
                    masterKeyGrace,
                    masterKeyChain,
                    Optional.ofNullable(masterSignKeyName).map(name -> pkiDir.resolve(name + ".pub")),
                    Optional.ofNullable(api),
                    fileServer);
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

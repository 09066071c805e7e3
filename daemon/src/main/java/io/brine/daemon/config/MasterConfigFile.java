package io.brine.daemon.config;

import io.brine.daemon.config.MasterConfig.Acceptance;
import io.brine.daemon.config.MasterConfig.AutosignToken;
import io.brine.daemon.config.MasterConfig.PublisherAcl;
import io.brine.daemon.config.MasterConfig.Tls;
import io.brine.protocol.ReservedIds;
import io.brine.protocol.targeting.Nodegroups;
import io.brine.protocol.targeting.TargetException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;

/** Maps {@code master.yaml} onto a {@link MasterConfig.Builder}, key by key, so each message names its key. */
final class MasterConfigFile {

    private static Optional<ConnectionLimits> connectionLimits(ConfigSection root) {
        OptionalInt max = root.integer("max_connections", 1, ConnectionLimits.MAX_VALUE);
        OptionalInt unauthenticated = root.integer("max_unauthenticated_connections", 1, ConnectionLimits.MAX_VALUE);
        OptionalInt perSource = root.integer("max_unauthenticated_per_source", 1, ConnectionLimits.MAX_VALUE);
        try {
            return Optional.of(new ConnectionLimits(max, unauthenticated, perSource));
        } catch (IllegalArgumentException e) {
            // The message starts with the key whose value is too large.
            root.problem(e.getMessage().substring(0, e.getMessage().indexOf(' ')), e.getMessage());
            return Optional.empty();
        }
    }

    private static final int MAX_PORT = 65535;
    private static final long YEAR = 365L * 24 * 3600;
    private static final ValueCheck GLOB = ValueCheck.glob();

    private MasterConfigFile() {}

    /** @param checkFiles whether to check the files it names too (the master does; the CLIs do not) */
    static MasterConfig read(Path file, boolean checkFiles) throws ConfigException {
        ReferencedFiles files = new ReferencedFiles(checkFiles);
        ConfigReader reader = ConfigReader.open(file);
        ConfigSection root = reader.root();
        MasterConfig.Builder config = MasterConfig.builder();

        root.host("interface").ifPresent(config::interfaceAddress);
        OptionalInt publishPort = root.integer("publish_port", 0, MAX_PORT);
        publishPort.ifPresent(config::publishPort);
        OptionalInt retPort = root.integer("ret_port", 0, MAX_PORT);
        retPort.ifPresent(config::retPort);
        Optional<Set<TransportKind>> transports = root.choices("transport", TransportKind.class);
        transports.ifPresent(config::transports);
        OptionalInt tcpPort = root.integer("tcp_port", 0, MAX_PORT);
        tcpPort.ifPresent(config::tcpPort);
        Optional<Tls> tls = root.section("tls").flatMap(section -> tls(section, files));
        tls.ifPresent(config::tls);
        if (tls.isPresent() && !transports.orElse(Set.of()).contains(TransportKind.TCP)) {
            root.problem("tls", "applies to the tcp transport only: add tcp to transport, or remove tls");
        }

        root.path("pki_dir").ifPresent(config::pkiDir);
        root.path("cachedir").ifPresent(config::cachedir);
        root.integer("keysize", MasterConfig.MIN_KEYSIZE, MasterConfig.MAX_KEYSIZE)
                .ifPresent(keysize -> {
                    if (keysize % 8 == 0) {
                        config.keysize(keysize);
                    } else {
                        root.problem("keysize", "expected a multiple of 8 (2048, 3072, 4096 ...), got " + keysize);
                    }
                });
        root.seconds("publish_session", 60, YEAR).ifPresent(config::publishSession);

        root.integer("max_minions", 0, 10_000_000).ifPresent(config::maxMinions);
        root.integer("max_pending", 1, 1_000_000).ifPresent(config::maxPending);
        root.integer("auth_rate_per_source", 1, 1_000_000).ifPresent(config::authRatePerSource);
        root.integer("auth_burst", 1, 1_000_000).ifPresent(config::authBurst);
        root.integer("auth_work_budget", 1, 1_000_000).ifPresent(config::authWorkBudget);
        root.integer("worker_threads", 1, 1024).ifPresent(config::workerThreads);
        connectionLimits(root).ifPresent(config::connectionLimits);
        root.integer("max_return_bytes", MasterConfig.MIN_RETURN_BYTES, MasterConfig.MAX_RETURN_BYTES)
                .ifPresent(config::maxReturnBytes);
        root.seconds("keep_jobs_seconds", 60, 10 * YEAR).ifPresent(config::keepJobs);
        root.integer("job_cache_max_mib", 1, 1024 * 1024).ifPresent(config::jobCacheMaxMib);

        config.acceptance(acceptance(root, files));
        root.sectionMap("publisher_acl").ifPresent(acl -> config.publisherAcl(publisherAcl(acl)));
        root.namedValues("nodegroups").ifPresent(entries -> nodegroups(entries).ifPresent(config::nodegroups));

        root.choice("log_level", LogLevel.class).ifPresent(config::logLevel);
        root.path("log_file").ifPresent(config::logFile);
        root.choice("log_format", LogFormat.class).ifPresent(config::logFormat);
        Optional<KeyRotationPolicy> keyRotation = root.choice("key_rotation", KeyRotationPolicy.class);
        keyRotation.ifPresent(config::keyRotation);
        root.seconds("master_key_grace", 60, 10 * YEAR).ifPresent(config::masterKeyGrace);
        root.integer("master_key_chain", 1, MasterConfig.MAX_MASTER_KEY_CHAIN).ifPresent(config::masterKeyChain);
        MinionConfigFile.masterSignKeyName(root, "master_sign_pubkey").ifPresent(config::masterSignKeyName);
        root.path("audit_log").ifPresent(config::auditLog);
        root.section("cluster").flatMap(MasterConfigFile::cluster).ifPresent(config::cluster);
        if (keyRotation.orElse(null) == KeyRotationPolicy.PENDING && root.has("cluster")) {
            root.problem(
                    "key_rotation",
                    "pending is not available with cluster yet (the cluster key store keeps no"
                            + " pending rotations): use allow or deny");
        }
        root.bool("salt_minions").ifPresent(config::saltMinions);
        config.fileServer(fileServer(root, checkFiles));
        root.host("http_interface").ifPresent(config::httpInterface);
        OptionalInt httpPort = root.integer("http_port", 0, MAX_PORT);
        httpPort.ifPresent(config::httpPort);
        Optional<MasterConfig.Api> api = root.section("api").flatMap(section -> api(section, files));
        api.ifPresent(config::api);

        MasterConfig defaults = MasterConfig.builder().build();
        Map<String, Integer> ports = new LinkedHashMap<>();
        ports.put("publish_port", publishPort.orElse(defaults.publishPort()));
        ports.put("ret_port", retPort.orElse(defaults.retPort()));
        ports.put("tcp_port", tcpPort.orElse(defaults.tcpPort()));
        httpPort.ifPresent(port -> ports.put("http_port", port));
        api.ifPresent(a -> ports.put("api.port", a.port()));
        ports.values().removeIf(port -> port == 0); // each 0 is a port of its own, chosen when bound
        root.requireDistinct(ports, "the ports"); // all bound on one interface

        reader.finish();
        return config.build();
    }

    /** {@code file_roots} in Salt's shape ({@code {base: [/srv/salt]}}) and the file server's other keys. */
    private static MasterConfig.FileServer fileServer(ConfigSection root, boolean checkFiles) {
        MasterConfig.FileServer defaults = MasterConfig.FileServer.defaults();
        ValueCheck directory = value -> {
            if (!value.startsWith("/")) {
                return Optional.of("expected an absolute directory, got " + value);
            }
            if (checkFiles && !Files.isDirectory(Path.of(value))) {
                return Optional.of("is not a directory: " + value);
            }
            return Optional.empty();
        };
        Map<String, List<Path>> roots = new LinkedHashMap<>();
        root.stringLists("file_roots", directory)
                .ifPresent(envs -> envs.forEach((env, dirs) -> {
                    if (!env.matches("[A-Za-z0-9_.-]{1,64}") || env.equals("__env__")) {
                        root.problem(
                                "file_roots",
                                "environment " + env + ": expected 1 to 64 of [A-Za-z0-9_.-] ("
                                        + "Salt's __env__ is not served)");
                    } else if (dirs.isEmpty()) {
                        root.problem("file_roots", "environment " + env + " names no directory");
                    } else {
                        roots.put(env, dirs.stream().map(Path::of).toList());
                    }
                }));
        List<String> regex = root.strings("file_ignore_regex", value -> {
                    try {
                        Pattern.compile(value);
                        return Optional.empty();
                    } catch (PatternSyntaxException e) {
                        return Optional.of("not a regular expression: " + e.getDescription());
                    }
                })
                .orElse(defaults.fileIgnoreRegex());
        List<String> globs = root.strings(
                        "file_ignore_glob",
                        value -> value.isEmpty() ? Optional.of("a glob cannot be empty") : Optional.empty())
                .orElse(defaults.fileIgnoreGlob());
        String hashType = root.string(
                        "hash_type",
                        value -> MasterConfig.FileServer.HASH_TYPES.contains(value)
                                ? Optional.empty()
                                : Optional.of("expected one of " + MasterConfig.FileServer.HASH_TYPES))
                .orElse(defaults.hashType());
        int bufferSize = root.integer(
                        "file_buffer_size",
                        MasterConfig.FileServer.MIN_BUFFER_SIZE,
                        MasterConfig.FileServer.MAX_BUFFER_SIZE)
                .orElse(defaults.fileBufferSize());
        Duration listCacheTime =
                root.seconds("fileserver_list_cache_time", 1, 3600).orElse(defaults.fileserverListCacheTime());
        int rate = root.integer("fileserver_requests_per_second", 1, 1_000_000)
                .orElse(defaults.fileserverRequestsPerSecond());
        int burst = root.integer("fileserver_burst", 1, 1_000_000).orElse(defaults.fileserverBurst());
        int inFlightMib =
                root.integer("fileserver_max_mib_in_flight", 8, 64 * 1024).orElse(defaults.fileserverMaxMibInFlight());
        return new MasterConfig.FileServer(
                roots, regex, globs, hashType, bufferSize, listCacheTime, rate, burst, inFlightMib);
    }

    private static Optional<Tls> tls(ConfigSection tls, ReferencedFiles files) {
        Optional<Path> cert = tls.path("cert");
        Optional<Path> key = tls.path("key");
        cert.ifPresent(path -> files.check(tls, "cert", path, ReferencedFiles.Use.READ));
        key.ifPresent(path -> files.check(tls, "key", path, ReferencedFiles.Use.PRIVATE_KEY));
        if (!tls.has("cert")) {
            tls.problem("cert", "is required with tls");
        }
        if (!tls.has("key")) {
            tls.problem("key", "is required with tls");
        }
        return cert.isPresent() && key.isPresent() ? Optional.of(new Tls(cert.get(), key.get())) : Optional.empty();
    }

    /**
     * {@code api:}. Off unless the section is there; {@code port} is required. Without {@code tls} the API must be
     * bound to loopback: tokens would otherwise cross the network in clear.
     */
    private static Optional<MasterConfig.Api> api(ConfigSection api, ReferencedFiles files) {
        String address = api.host("interface").orElse(MasterConfig.Api.DEFAULT_INTERFACE);
        OptionalInt port = api.integer("port", 1, MAX_PORT);
        if (!api.has("port")) {
            api.problem("port", "is required with api (the HTTPS port, e.g. 8443)");
        }
        Optional<Tls> tls = api.section("tls").flatMap(section -> tls(section, files));
        if (!api.has("tls") && !isLoopback(address)) {
            api.problem(
                    "interface",
                    "is " + address + ", not loopback: the API needs tls (cert and key) there,"
                            + " or bind it to 127.0.0.1 or ::1");
        }
        int maxBody =
                api.integer("max_body_bytes", 1024, 16 * 1024 * 1024).orElse(MasterConfig.Api.DEFAULT_MAX_BODY_BYTES);
        int maxConnections =
                api.integer("max_connections", 1, 100_000).orElse(MasterConfig.Api.DEFAULT_MAX_CONNECTIONS);
        int rate = api.integer("requests_per_second", 1, 100_000).orElse(MasterConfig.Api.DEFAULT_REQUESTS_PER_SECOND);
        Duration timeout = api.seconds("request_timeout", 1, 300).orElse(MasterConfig.Api.DEFAULT_REQUEST_TIMEOUT);
        Optional<MasterConfig.ClientCerts> clientCerts = clientCerts(api, files);
        if (port.isEmpty() || (api.has("tls") && tls.isEmpty())) {
            return Optional.empty();
        }
        return Optional.of(new MasterConfig.Api(
                address, port.getAsInt(), tls, maxBody, maxConnections, rate, timeout, clientCerts));
    }

    /**
     * {@code api.client_ca}, {@code client_auth} and {@code client_revoked}: all or nothing, and only with tls (a
     * CA without a mode, or a mode without a CA, would be a setting that does nothing, or cannot).
     */
    private static Optional<MasterConfig.ClientCerts> clientCerts(ConfigSection api, ReferencedFiles files) {
        Optional<Path> ca = api.path("client_ca");
        ca.ifPresent(path -> files.check(api, "client_ca", path, ReferencedFiles.Use.READ));
        Optional<MasterConfig.ClientAuth> chosen = api.choice("client_auth", MasterConfig.ClientAuth.class);
        if (api.has("client_auth") && chosen.isEmpty()) {
            return Optional.empty(); // not one of the three: said once
        }
        MasterConfig.ClientAuth mode = chosen.orElse(MasterConfig.ClientAuth.NONE);
        Optional<List<String>> revoked = api.strings(
                "client_revoked",
                value -> revokedFingerprint(value).isPresent()
                        ? Optional.empty()
                        : Optional.of("expected a certificate's SHA-256 fingerprint, 64 hex digits with or"
                                + " without colons (openssl x509 -noout -fingerprint -sha256 -in client.crt)"));
        if (revoked.isPresent() && revoked.get().size() > MasterConfig.ClientCerts.MAX_REVOKED) {
            api.problem(
                    "client_revoked",
                    "has " + revoked.get().size() + " entries; at most " + MasterConfig.ClientCerts.MAX_REVOKED);
            return Optional.empty();
        }
        if (mode == MasterConfig.ClientAuth.NONE) {
            if (api.has("client_ca")) {
                api.problem(
                        "client_ca",
                        "is set but client_auth is none: set client_auth to optional or required,"
                                + " or remove client_ca");
            } else if (api.has("client_revoked")) {
                api.problem("client_revoked", "applies to client certificates: set client_ca and client_auth");
            }
            return Optional.empty();
        }
        if (!api.has("client_ca")) {
            api.problem(
                    "client_auth",
                    "is " + mode.name().toLowerCase(Locale.ROOT) + " but client_ca is not set:"
                            + " name the PEM file of the CA that signs the client certificates");
            return Optional.empty();
        }
        if (!api.has("tls")) {
            api.problem("client_auth", "needs tls: client certificates are sent in the TLS handshake");
            return Optional.empty();
        }
        if (ca.isEmpty() || (api.has("client_revoked") && revoked.isEmpty())) {
            return Optional.empty();
        }
        Set<String> fingerprints = new LinkedHashSet<>();
        revoked.orElse(List.of()).forEach(value -> revokedFingerprint(value).ifPresent(fingerprints::add));
        return Optional.of(new MasterConfig.ClientCerts(ca.get(), mode, fingerprints));
    }

    /** A SHA-256 fingerprint as written (hex, either case, colons between bytes or none), in lower-case hex. */
    static Optional<String> revokedFingerprint(String value) {
        String hex = value.strip();
        if (hex.matches("[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){31}")) {
            hex = hex.replace(":", "");
        }
        return hex.matches("[0-9A-Fa-f]{64}") ? Optional.of(hex.toLowerCase(Locale.ROOT)) : Optional.empty();
    }

    /** Whether {@code address} (an address or host name as written) is this host's loopback. */
    static boolean isLoopback(String address) {
        return address.equals("localhost") || address.equals("::1") || address.startsWith("127.");
    }

    private static Optional<ClusterConfig> cluster(ConfigSection cluster) {
        Optional<String> connect = cluster.string("connect", ClusterConfig::connectProblem);
        if (!cluster.has("connect")) {
            cluster.problem("connect", "is required with cluster (the ZooKeeper ensemble, zk1:2181,zk2:2181)");
        }
        String root = cluster.string("root", ClusterConfig::rootProblem).orElse(ClusterConfig.DEFAULT_ROOT);
        Duration sessionTimeout =
                cluster.seconds("session_timeout", 2, 600).orElse(ClusterConfig.DEFAULT_SESSION_TIMEOUT);
        Duration connectTimeout = cluster.seconds(
                        "connect_timeout", ClusterConfig.MIN_CONNECT_TIMEOUT, ClusterConfig.MAX_CONNECT_TIMEOUT)
                .orElse(ClusterConfig.DEFAULT_CONNECT_TIMEOUT);
        Optional<ClusterConfig.Auth> auth = cluster.section("auth").flatMap(section -> {
            Optional<String> user = section.string(
                    "user",
                    value -> value.matches("[A-Za-z0-9._-]{1,64}")
                            ? Optional.empty()
                            : Optional.of("expected 1 to 64 of [A-Za-z0-9._-]"));
            Optional<Path> passwordFile = section.path("password_file");
            for (String key : List.of("user", "password_file")) {
                if (!section.has(key)) {
                    section.problem(key, "is required with cluster.auth");
                }
            }
            return user.isPresent() && passwordFile.isPresent()
                    ? Optional.of(new ClusterConfig.Auth(user.get(), passwordFile.get()))
                    : Optional.empty();
        });
        boolean insecureOpenAcl = cluster.bool("insecure_open_acl").orElse(false);
        if (insecureOpenAcl && cluster.has("auth")) {
            cluster.problem("insecure_open_acl", "is for a cluster without auth; remove one of the two");
            insecureOpenAcl = false;
        }
        boolean openAcl = insecureOpenAcl;
        return connect.map(
                c -> new ClusterConfig(c, root, sessionTimeout, auth, openAcl && auth.isEmpty(), connectTimeout));
    }

    private static Acceptance acceptance(ConfigSection root, ReferencedFiles files) {
        Acceptance.Builder acceptance = Acceptance.builder();
        root.bool("auto_accept").ifPresent(acceptance::autoAccept);
        root.path("autosign_file").ifPresent(path -> {
            files.check(root, "autosign_file", path, ReferencedFiles.Use.POLICY);
            acceptance.autosignFile(path);
        });
        root.path("autoreject_file").ifPresent(path -> {
            files.check(root, "autoreject_file", path, ReferencedFiles.Use.POLICY);
            acceptance.autorejectFile(path);
        });
        root.path("autosign_policy").ifPresent(path -> {
            files.check(root, "autosign_policy", path, ReferencedFiles.Use.POLICY_EXECUTABLE);
            acceptance.autosignPolicy(path);
        });
        root.seconds("autosign_policy_timeout", 1, 300).ifPresent(acceptance::autosignPolicyTimeout);
        root.integer("autosign_policy_max_concurrent", 1, 256).ifPresent(acceptance::autosignPolicyMaxConcurrent);
        root.stringLists("autosign_claims", GLOB).ifPresent(acceptance::autosignClaims);
        root.path("inventory_file").ifPresent(path -> {
            files.check(root, "inventory_file", path, ReferencedFiles.Use.POLICY);
            acceptance.inventoryFile(path);
        });
        root.seconds("inventory_window", 1, YEAR).ifPresent(acceptance::inventoryWindow);
        root.sectionList("autosign_tokens")
                .ifPresent(tokens -> acceptance.autosignTokens(tokens.stream()
                        .map(MasterConfigFile::autosignToken)
                        .flatMap(Optional::stream)
                        .collect(Collectors.toList())));
        root.strings("reserved_ids", ReservedIds::entryProblem).ifPresent(acceptance::reservedIds);
        return acceptance.build();
    }

    private static Optional<AutosignToken> autosignToken(ConfigSection token) {
        Optional<String> match = token.string("match", GLOB);
        Optional<String> salt = token.string(
                "salt",
                value -> value.matches("([0-9a-fA-F]{2}){16,64}")
                        ? Optional.empty()
                        : Optional.of(
                                "expected 16 to 64 random bytes as hex (brine-key token-hash makes" + " the entry)"));
        Optional<String> sha256 = token.string(
                "sha256",
                value -> value.matches("[0-9a-fA-F]{64}")
                        ? Optional.empty()
                        : Optional.of("expected 64 hex digits, SHA-256 of salt and token (brine-key"
                                + " token-hash makes the entry)"));
        boolean singleUse = token.bool("single_use").orElse(false);
        for (String key : List.of("match", "salt", "sha256")) {
            if (!token.has(key)) {
                token.problem(
                        key,
                        "is required in an autosign token"
                                + (key.equals("salt")
                                        ? " (unsalted hashes are no longer accepted: run brine-key token-hash)"
                                        : ""));
            }
        }
        return match.isPresent() && salt.isPresent() && sha256.isPresent()
                ? Optional.of(new AutosignToken(
                        match.get(),
                        salt.get().toLowerCase(Locale.ROOT),
                        sha256.get().toLowerCase(Locale.ROOT),
                        singleUse))
                : Optional.empty();
    }

    /**
     * {@code nodegroups:}, Salt's: a name to a compound target, or to a list of ids (or of compound words). All are
     * checked together, each problem at its entry's line: syntax, unknown nodegroups, uses of itself (Salt's
     * recursion check), expansions too long for a target.
     */
    private static Optional<Map<String, String>> nodegroups(List<ConfigSection.Named> entries) {
        Map<String, String> definitions = new LinkedHashMap<>();
        Map<String, ConfigSection.Named> written = new LinkedHashMap<>();
        boolean ok = true;
        for (ConfigSection.Named entry : entries) {
            written.put(entry.name(), entry);
            try {
                definitions.put(
                        entry.name(),
                        entry.list()
                                ? Nodegroups.fromList(entry.values())
                                : entry.values().get(0));
            } catch (TargetException e) {
                entry.problem(e.getMessage());
                ok = false;
            }
        }
        Map<String, String> problems = Nodegroups.problems(definitions);
        problems.forEach((name, problem) -> written.get(name).problem(problem));
        return ok && problems.isEmpty() ? Optional.of(definitions) : Optional.empty();
    }

    private static Map<String, PublisherAcl> publisherAcl(Map<String, ConfigSection> sections) {
        Map<String, PublisherAcl> acl = new LinkedHashMap<>();
        sections.forEach((publisher, section) -> acl.put(
                publisher,
                new PublisherAcl(
                        section.strings("targets", GLOB).orElse(List.of()),
                        section.strings("functions", GLOB).orElse(List.of()))));
        return acl;
    }
}

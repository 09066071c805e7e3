package io.brine.daemon.config;

import io.brine.daemon.config.MinionConfig.Auth;
import io.brine.daemon.config.MinionConfig.Functions;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/** Maps {@code minion.yaml} onto a {@link MinionConfig.Builder}, key by key, so each message names its key. */
final class MinionConfigFile {

    private static final int MAX_PORT = 65535;
    private static final long DAY = 24 * 3600;
    private static final ValueCheck GLOB = ValueCheck.glob();
    private static final ValueCheck FINGERPRINT = value -> Fingerprints.normalize(value) != null
            ? Optional.empty()
            : Optional.of("expected the master key's SHA-256 fingerprint, 32 hex bytes (as brine-key prints it:"
                    + " 'ab:cd:...')");

    /** Where the default id comes from; a test gives its own. */
    @FunctionalInterface
    interface HostName {
        String fqdn() throws UnknownHostException;
    }

    private MinionConfigFile() {}

    static String localFqdn() throws UnknownHostException {
        return InetAddress.getLocalHost().getCanonicalHostName();
    }

    /** An entry of a list of masters: {@code host} or {@code host:port}. */
    static Optional<String> masterEntryProblem(String entry) {
        String host = entry;
        int colon = entry.startsWith("[")
                ? entry.indexOf("]:") + 1
                : entry.indexOf(':') == entry.lastIndexOf(':') ? entry.indexOf(':') : -1;
        if (colon > 0) {
            host = entry.substring(0, colon);
            String port = entry.substring(colon + 1);
            if (!port.matches("[0-9]{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
                return Optional.of(
                        "expected host or host:port with a port from 1 to 65535, got " + Quoting.quote(entry));
            }
        }
        return ConfigSection.hostProblem(host);
    }

    static MinionConfig read(Path file, HostName hostName) throws ConfigException {
        ConfigReader reader = ConfigReader.open(file);
        ConfigSection root = reader.root();
        MinionConfig.Builder config = MinionConfig.builder();

        if (root.has("id")) {
            root.string("id", MinionIds::problem).ifPresent(config::id);
        } else {
            defaultId(root, hostName).ifPresent(config::id);
        }
        Optional<String> masterType = root.string(
                "master_type",
                value -> value.equals("str") || value.equals("failover")
                        ? Optional.empty()
                        : Optional.of("expected str (one master) or failover (a list of masters, one session at a"
                                + " time)"));
        Optional<Boolean> randomMaster = root.bool("random_master");
        if (root.isList("master")) {
            root.strings("master", ValueCheck.any()).ifPresent(masters -> {
                List<String> problems = masters.stream()
                        .map(MinionConfigFile::masterEntryProblem)
                        .flatMap(Optional::stream)
                        .toList();
                if (!problems.isEmpty()) {
                    problems.forEach(problem -> root.problem("master", problem));
                } else if (!masterType.orElse("str").equals("failover")) {
                    root.problem(
                            "master",
                            "a list of masters needs master_type: failover (brine holds one session"
                                    + " at a time; Salt's multi-master is not supported)");
                } else if (masters.size() < 2) {
                    root.problem("master", "list two masters or more, or write the one master alone");
                } else {
                    config.failoverMasters(masters);
                    randomMaster.ifPresent(config::randomMaster);
                }
            });
        } else {
            root.host("master").ifPresent(config::master);
            if (masterType.orElse("str").equals("failover")) {
                root.problem("master_type", "failover needs master as a list of masters");
            }
            if (randomMaster.orElse(false)) {
                root.problem("random_master", "needs master as a list of masters (with master_type: failover)");
            }
        }
        // Salt's minion config names the master's request port master_port; brine's own name is ret_port.
        String retPortKey = root.has("master_port") ? "master_port" : "ret_port";
        if (root.has("master_port") && root.has("ret_port")) {
            root.problem("master_port", "names the same port as ret_port (Salt's name for it): set one of the two");
        }
        OptionalInt retPort = root.integer(retPortKey, 1, MAX_PORT);
        retPort.ifPresent(config::retPort);
        OptionalInt publishPort = root.integer("publish_port", 1, MAX_PORT);
        publishPort.ifPresent(config::publishPort);
        Optional<TransportKind> transport = root.choice("transport", TransportKind.class);
        transport.ifPresent(config::transport);
        OptionalInt tcpPort = root.integer("tcp_port", 1, MAX_PORT);
        tcpPort.ifPresent(config::tcpPort);
        Optional<MinionConfig.Tls> tls = root.section("tls").flatMap(MinionConfigFile::tls);
        tls.ifPresent(config::tls);
        if (tls.isPresent() && transport.filter(t -> t == TransportKind.TCP).isEmpty()) {
            root.problem("tls", "applies to the tcp transport only: set transport: tcp, or remove tls");
        }

        root.path("pki_dir").ifPresent(config::pkiDir);
        root.path("cachedir").ifPresent(config::cachedir);
        root.integer("keysize", MinionConfig.MIN_KEYSIZE, MinionConfig.MAX_KEYSIZE)
                .ifPresent(keysize -> {
                    if (keysize % 8 == 0) {
                        config.keysize(keysize);
                    } else {
                        root.problem("keysize", "expected a multiple of 8 (2048, 3072, 4096 ...), got " + keysize);
                    }
                });
        root.string("master_finger", FINGERPRINT).ifPresent(config::masterFinger);
        masterSignKeyName(root, "verify_master_pubkey_sign").ifPresent(config::masterSignKeyName);

        config.auth(auth(root));
        root.stringLists("grains", ValueCheck.any()).ifPresent(config::grains);
        root.section("functions")
                .ifPresent(functions -> config.functions(new Functions(
                        functions
                                .strings("allow", GLOB)
                                .orElse(Functions.defaults().allow()),
                        functions
                                .strings("deny", GLOB)
                                .orElse(Functions.defaults().deny()))));
        root.path("plugins_dir").ifPresent(config::pluginsDir);
        root.seconds("return_retry_max", 1, DAY).ifPresent(config::returnRetryMax);
        root.seconds("job_timeout", 1, DAY).ifPresent(config::jobTimeout);
        root.seconds("publish_max_age", 1, DAY).ifPresent(config::publishMaxAge);
        root.seconds("key_max_age", MinionConfig.MIN_KEY_MAX_AGE.toSeconds(), MinionConfig.MAX_KEY_MAX_AGE.toSeconds())
                .ifPresent(config::keyMaxAge);
        root.integer("worker_threads", 1, 1024).ifPresent(config::workerThreads);
        reconnect(root, config);
        root.path("autosign_grant").ifPresent(config::autosignGrant);
        root.secret("autosign_token").ifPresent(config::autosignToken);

        root.choice("log_level", LogLevel.class).ifPresent(config::logLevel);
        root.path("log_file").ifPresent(config::logFile);
        root.choice("log_format", LogFormat.class).ifPresent(config::logFormat);
        root.path("status_file").ifPresent(config::statusFile);
        root.host("http_interface").ifPresent(config::httpInterface);
        root.integer("http_port", 0, 65535).ifPresent(config::httpPort);

        Map<String, Integer> ports = new LinkedHashMap<>();
        ports.put("publish_port", publishPort.orElse(MinionConfig.DEFAULT_PUBLISH_PORT));
        ports.put(retPortKey, retPort.orElse(MinionConfig.DEFAULT_RET_PORT));
        ports.put("tcp_port", tcpPort.orElse(MinionConfig.DEFAULT_TCP_PORT));
        root.requireDistinct(ports, "the master's ports");

        reader.finish();
        return config.build();
    }

    /** {@code recon_default} and {@code recon_max}, in milliseconds as Salt's; the maximum not below the first wait. */
    private static void reconnect(ConfigSection root, MinionConfig.Builder config) {
        OptionalInt first = root.integer("recon_default", (int) MinionConfig.MIN_RECON_DEFAULT.toMillis(), (int)
                MinionConfig.MAX_RECON_DEFAULT.toMillis());
        OptionalInt max = root.integer("recon_max", (int) MinionConfig.MIN_RECON_DEFAULT.toMillis(), (int)
                MinionConfig.MAX_RECON_MAX.toMillis());
        Duration interval = first.isPresent()
                ? Duration.ofMillis(first.getAsInt())
                : root.has("recon_default") ? null : MinionConfig.DEFAULT_RECON_DEFAULT;
        Duration cap = max.isPresent()
                ? Duration.ofMillis(max.getAsInt())
                : root.has("recon_max") ? null : MinionConfig.DEFAULT_RECON_MAX;
        if (interval == null || cap == null) {
            return; // reported
        }
        if (cap.compareTo(interval) < 0) {
            root.problem(
                    max.isPresent() ? "recon_max" : "recon_default",
                    "recon_max (" + cap.toMillis() + " ms) is below recon_default (" + interval.toMillis()
                            + " ms): the wait doubles from recon_default up to recon_max");
            return;
        }
        config.reconnect(interval, cap);
    }

    private static Optional<MinionConfig.Tls> tls(ConfigSection tls) {
        Optional<Path> ca = tls.path("ca");
        boolean verifyHostname = tls.bool("verify_hostname").orElse(true);
        if (!tls.has("ca")) {
            tls.problem("ca", "is required with tls");
        }
        return ca.map(file -> new MinionConfig.Tls(file, verifyHostname));
    }

    private static Auth auth(ConfigSection root) {
        Auth defaults = Auth.defaults();
        return new Auth(
                root.seconds("acceptance_wait_time", 1, DAY).orElse(defaults.acceptanceWaitTime()),
                root.seconds("acceptance_wait_time_max", 0, DAY).orElse(defaults.acceptanceWaitTimeMax()),
                root.bool("rejected_retry").orElse(defaults.rejectedRetry()),
                root.seconds("auth_timeout", 1, 3600).orElse(defaults.authTimeout()));
    }

    /**
     * Salt's switch for the master signing key ({@code verify_master_pubkey_sign} on a minion, {@code
     * master_sign_pubkey} on a master; off by default) and {@code master_sign_key_name} ({@code master_sign}): the
     * signing key's public half is {@code pki_dir/NAME.pub}. Empty when off.
     */
    static Optional<String> masterSignKeyName(ConfigSection root, String switchKey) {
        Optional<String> name = root.string(
                "master_sign_key_name",
                value -> value.matches("[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}")
                        ? Optional.empty()
                        : Optional.of("expected a file name without .pub (letters, digits, '.', '_', '-'; up to 64),"
                                + " as in pki_dir/master_sign.pub, got " + Quoting.quote(value)));
        if (!root.bool(switchKey).orElse(false)) {
            // The default written out (as in an uncommented example) is harmless; another name is a forgotten switch.
            if (name.filter(n -> !n.equals(MinionConfig.DEFAULT_MASTER_SIGN_KEY_NAME))
                    .isPresent()) {
                root.problem("master_sign_key_name", "has no effect without " + switchKey + ": true");
            }
            return Optional.empty();
        }
        return Optional.of(name.orElse(MinionConfig.DEFAULT_MASTER_SIGN_KEY_NAME));
    }

    /** Salt's default: the host's fully qualified name, lower-cased, if that is a valid id. */
    private static Optional<String> defaultId(ConfigSection root, HostName hostName) {
        String fqdn;
        try {
            fqdn = hostName.fqdn();
        } catch (UnknownHostException e) {
            root.problem(
                    "id",
                    "not set, and this host's name cannot be resolved ("
                            + MinionIds.printable(String.valueOf(e.getMessage())) + "): set id");
            return Optional.empty();
        }
        String id = fqdn == null ? "" : fqdn.toLowerCase(Locale.ROOT);
        Optional<String> problem = MinionIds.problem(id);
        if (problem.isPresent()) {
            root.problem(
                    "id",
                    "not set, and this host's name " + MinionIds.printable(fqdn) + " is not a valid id ("
                            + problem.get() + "): set id");
            return Optional.empty();
        }
        return Optional.of(id);
    }
}

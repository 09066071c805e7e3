package io.brine.daemon.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The {@code cluster:} section of {@code master.yaml}: the ZooKeeper ensemble that several masters share their key
 * store, audit trail, publish-key generation and job records through. Absent, the master runs alone on the
 * filesystem store and nothing touches ZooKeeper.
 *
 * @param connect        {@code connect}: the ensemble, {@code host:port} entries separated by commas, as ZooKeeper
 *                       takes it
 * @param root           {@code root}: the znode under which this cluster keeps everything ({@code /brine} by
 *                       default), so one ensemble can serve several clusters
 * @param sessionTimeout {@code session_timeout}: how long ZooKeeper keeps this master's session through a
 *                       disconnection; past it the master stops accepting admin changes
 * @param auth           {@code auth}: digest credentials for the root's ACL; empty means the ensemble's open ACL
 * @param insecureOpenAcl {@code insecure_open_acl}: without {@code auth}, a master refuses to start unless this says
 *                       that every znode may be open to whoever reaches the ensemble (who could then plant keys)
 * @param connectTimeout {@code connect_timeout}: how long a master's start and each brine-key run wait for the
 *                       ensemble's first answer before they give up saying it is unavailable
 */
public record ClusterConfig(
        String connect,
        String root,
        Duration sessionTimeout,
        Optional<Auth> auth,
        boolean insecureOpenAcl,
        Duration connectTimeout) {

    public static final String DEFAULT_ROOT = "/brine";
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(15);
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(15);
    /** Bounds of {@code connect_timeout}, in seconds. */
    public static final int MIN_CONNECT_TIMEOUT = 1;

    public static final int MAX_CONNECT_TIMEOUT = 600;

    private static final Pattern HOST_PORT =
            Pattern.compile("[A-Za-z0-9.\\-]+:[0-9]{1,5}|\\[[0-9A-Fa-f:.]+]:[0-9]{1,5}");
    private static final Pattern ROOT = Pattern.compile("(/[a-z0-9][a-z0-9._-]*)+");

    public ClusterConfig {
        Objects.requireNonNull(connect, "connect");
        connectProblem(connect).ifPresent(p -> {
            throw new IllegalArgumentException("connect: " + p);
        });
        Objects.requireNonNull(root, "root");
        rootProblem(root).ifPresent(p -> {
            throw new IllegalArgumentException("root: " + p);
        });
        Objects.requireNonNull(sessionTimeout, "sessionTimeout");
        if (sessionTimeout.toMillis() < 2000 || sessionTimeout.toSeconds() > 600) {
            throw new IllegalArgumentException("sessionTimeout must be from 2 to 600 seconds");
        }
        Objects.requireNonNull(auth, "auth");
        if (insecureOpenAcl && auth.isPresent()) {
            throw new IllegalArgumentException("insecureOpenAcl is for a cluster without auth");
        }
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        if (connectTimeout.toMillis() < MIN_CONNECT_TIMEOUT * 1000L
                || connectTimeout.toSeconds() > MAX_CONNECT_TIMEOUT) {
            throw new IllegalArgumentException(
                    "connectTimeout must be from " + MIN_CONNECT_TIMEOUT + " to " + MAX_CONNECT_TIMEOUT + " seconds");
        }
    }

    /** With the default connect timeout. */
    public ClusterConfig(
            String connect, String root, Duration sessionTimeout, Optional<Auth> auth, boolean insecureOpenAcl) {
        this(connect, root, sessionTimeout, auth, insecureOpenAcl, DEFAULT_CONNECT_TIMEOUT);
    }

    /** Without the open-ACL consent, with the default connect timeout. */
    public ClusterConfig(String connect, String root, Duration sessionTimeout, Optional<Auth> auth) {
        this(connect, root, sessionTimeout, auth, false);
    }

    /** A cluster on {@code connect} with the default root and session timeout, no auth. */
    public static ClusterConfig of(String connect) {
        return new ClusterConfig(connect, DEFAULT_ROOT, DEFAULT_SESSION_TIMEOUT, Optional.empty());
    }

    public ClusterConfig withRoot(String newRoot) {
        return new ClusterConfig(connect, newRoot, sessionTimeout, auth, insecureOpenAcl, connectTimeout);
    }

    public ClusterConfig withAuth(Auth newAuth) {
        return new ClusterConfig(connect, root, sessionTimeout, Optional.of(newAuth), false, connectTimeout);
    }

    /** {@code insecure_open_acl: true}: the admin's consent to znodes anyone reaching the ensemble can write. */
    public ClusterConfig withInsecureOpenAcl() {
        return new ClusterConfig(connect, root, sessionTimeout, Optional.empty(), true, connectTimeout);
    }

    public ClusterConfig withConnectTimeout(Duration newConnectTimeout) {
        return new ClusterConfig(connect, root, sessionTimeout, auth, insecureOpenAcl, newConnectTimeout);
    }

    /**
     * ZooKeeper digest credentials. The password is read from {@code passwordFile} when the master starts, so the
     * config holds no secret.
     */
    public record Auth(String user, Path passwordFile) {
        public Auth {
            Objects.requireNonNull(user, "user");
            Objects.requireNonNull(passwordFile, "passwordFile");
            if (!user.matches("[A-Za-z0-9._-]{1,64}")) {
                throw new IllegalArgumentException("user must be 1 to 64 of [A-Za-z0-9._-]");
            }
        }
    }

    /** Why {@code connect} is not a ZooKeeper connect string ({@code host:port[,host:port...]}), or empty. */
    static Optional<String> connectProblem(String connect) {
        List<String> entries = List.of(connect.split(",", -1));
        for (String entry : entries) {
            if (!HOST_PORT.matcher(entry).matches()) {
                return Optional.of("expected host:port entries separated by commas (zk1:2181,zk2:2181), got "
                        + Quoting.quote(connect));
            }
            int port = Integer.parseInt(entry.substring(entry.lastIndexOf(':') + 1));
            if (port < 1 || port > 65535) {
                return Optional.of("port " + port + " is not from 1 to 65535 in " + Quoting.quote(entry));
            }
        }
        return Optional.empty();
    }

    /** Why {@code root} is not an absolute znode path of lower-case labels, or empty. */
    static Optional<String> rootProblem(String root) {
        return ROOT.matcher(root).matches()
                ? Optional.empty()
                : Optional.of("expected an absolute znode path of lower-case [a-z0-9._-] labels (/brine/prod), got "
                        + Quoting.quote(root));
    }
}

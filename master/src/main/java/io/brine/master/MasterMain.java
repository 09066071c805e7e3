package io.brine.master;

import io.brine.cluster.ClusterStores;
import io.brine.daemon.BrineVersion;
import io.brine.daemon.DaemonLogging;
import io.brine.daemon.HangupSignal;
import io.brine.daemon.config.ConfigException;
import io.brine.daemon.config.LogLevel;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.files.WritableFile;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.transport.tcp.TcpTls;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code brine-master -c CONFIG_DIR}: runs the master until SIGTERM or SIGINT. */
@Command(
        name = "brine-master",
        mixinStandardHelpOptions = true,
        versionProvider = BrineVersion.class,
        description = {
            "Runs the brine master: accepts minion keys, hands out session keys, publishes jobs and "
                    + "collects returns.",
            "",
            "Reads CONFIG_DIR/master.yaml (see conf/master.yaml for every key).",
            "Exit codes: 0 stopped cleanly, 1 failed at start, 2 bad configuration or usage, or pki_dir, "
                    + "cachedir, log_file or the audit log cannot be used."
        })
public final class MasterMain implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(MasterMain.class);

    @Option(
            names = {"-c", "--config-dir"},
            paramLabel = "CONFIG_DIR",
            defaultValue = "/etc/brine",
            description = "Directory holding master.yaml (default: ${DEFAULT-VALUE}).")
    Path configDir;

    /** How long --check-config waits for the cluster's ensemble: a check answers sooner than a start waits. */
    static final Duration CHECK_CONNECT_TIMEOUT = Duration.ofSeconds(5);

    @Option(
            names = {"-l", "--log-level"},
            paramLabel = "LEVEL",
            converter = LogLevel.Converter.class,
            description = {
                "Log at LEVEL instead of log_level of master.yaml: error, warning, info, debug or trace"
                        + " (Salt's names too: critical, profile, garbage, all)."
            })
    LogLevel logLevel;

    @Option(
            names = "--check-config",
            description = {
                "Only load and check the configuration, then exit.",
                "With cluster: it connects to the ensemble (5 s at most) to check the root's ACL as the master would."
            })
    boolean checkConfig;

    public static void main(String[] args) {
        System.exit(new CommandLine(new MasterMain()).execute(args));
    }

    @Override
    public Integer call() {
        MasterConfig config;
        try {
            config = MasterConfig.loadChecked(configDir);
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            return 2;
        }
        ConnectionCaps.Fit caps = ConnectionCaps.fit(config);
        if (caps instanceof ConnectionCaps.Refused refused) {
            System.err.println(configDir.resolve(MasterConfig.FILE_NAME) + ": " + refused.message());
            return 2;
        }
        List<String> unwritable = unusableFiles(config);
        if (!unwritable.isEmpty()) {
            unwritable.forEach(problem -> System.err.println("Master cannot start: " + problem));
            return 2;
        }
        if (checkConfig) {
            if (caps instanceof ConnectionCaps.Lowered lowered) {
                System.err.println("WARN " + lowered.warning());
            }
            List<String> untrusted = AcceptancePolicies.untrustedInputs(config, config.pkiDir());
            if (!untrusted.isEmpty()) {
                System.err.println("acceptance policies disabled (" + untrusted.size() + "):");
                untrusted.forEach(problem -> System.err.println("  " + problem));
                return 2;
            }
            String refusal = startRefusal(config);
            if (refusal != null) {
                System.err.println("Master cannot start: " + refusal);
                return 2;
            }
            System.out.println("configuration OK: " + configDir.resolve(MasterConfig.FILE_NAME));
            return 0;
        }
        try {
            DaemonLogging.configure(
                    logLevel != null ? logLevel : config.logLevel(), config.logFile(), config.logFormat());
        } catch (IOException e) {
            System.err.println("Master cannot start: " + e.getMessage());
            return 2;
        }
        // Before the daemon starts: a SIGHUP the JVM does not handle stops it, and logrotate may send one at any time.
        Hangups hangups = reopenOnHangup();
        if (caps instanceof ConnectionCaps.Lowered lowered) {
            LOG.warn(lowered.warning());
        }
        MasterDaemon daemon;
        try {
            daemon = MasterDaemon.start(config, Clock.systemUTC());
        } catch (IOException | KeyStoreException | KeyFormatException | RuntimeException e) {
            LOG.error("Master cannot start: {}", e.getMessage());
            return 1;
        }
        hangups.started(daemon::reopenLogs);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            LOG.info("Master stopping");
                            daemon.close();
                            stopped.countDown();
                        },
                        "brine-shutdown"));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /**
     * Why the master could not use {@code pki_dir}, {@code cachedir}, {@code log_file} or its audit log as it will at
     * start (empty when it can), so that it refuses to start, saying the system's reason, owner, mode, user and fix,
     * rather than serve with a log nobody can read or fail later on a bare path; {@code --check-config} asks the
     * same.
     */
    static List<String> unusableFiles(MasterConfig config) {
        List<String> problems = new ArrayList<>();
        if (config.cluster().isEmpty()) { // with cluster: the keys live in the ensemble; ClusterStores.check reads
            WritableFile.directoryProblem("pki_dir", config.pkiDir(), ".lock").ifPresent(problems::add);
        }
        WritableFile.directoryProblem("cachedir", config.cachedir()).ifPresent(problems::add);
        config.logFile()
                .flatMap(file -> WritableFile.problem("log_file", file, false))
                .ifPresent(problems::add);
        WritableFile.problem("audit_log", config.auditLog(), true).ifPresent(problems::add);
        return problems;
    }

    /**
     * Why the master would refuse to start with {@code config} past its file checks, by the code the start runs:
     * the TLS key and certificate as the TCP transport loads them, and the {@code cluster:} section as
     * {@link ClusterStores#check} makes it (which connects to the ensemble for the root's ACL, waiting at most
     * {@link #CHECK_CONNECT_TIMEOUT}, or {@code connect_timeout} if shorter); null when it would not.
     */
    static String startRefusal(MasterConfig config) {
        try {
            if (config.tls().isPresent()) {
                TcpTls.server(config.tls().get().cert(), config.tls().get().key());
            }
            if (config.cluster().isPresent()) {
                Duration connectTimeout = config.cluster().get().connectTimeout();
                ClusterStores.check(
                        config,
                        connectTimeout.compareTo(CHECK_CONNECT_TIMEOUT) < 0 ? connectTimeout : CHECK_CONNECT_TIMEOUT);
            }
            return null;
        } catch (IOException | KeyStoreException | RuntimeException e) {
            return e.getMessage();
        }
    }

    /** SIGHUP reopens the audit log and {@code log_file} (logrotate's postrotate); a WARN when it cannot. */
    private static Hangups reopenOnHangup() {
        Hangups hangups = new Hangups();
        HangupSignal.handle("master", "audit.log and log_file", hangups::hangup);
        return hangups;
    }

    /** Hangups before the daemon has started are kept and acted on once it has: nothing is lost or stops it. */
    static final class Hangups {
        private Runnable reopen;
        private boolean pending;

        synchronized void hangup() {
            if (reopen == null) {
                pending = true;
            } else {
                reopen.run();
            }
        }

        synchronized void started(Runnable reopenLogs) {
            reopen = reopenLogs;
            if (pending) {
                pending = false;
                LOG.info("SIGHUP received while starting: reopening the logs now");
                reopen.run();
            }
        }
    }
}

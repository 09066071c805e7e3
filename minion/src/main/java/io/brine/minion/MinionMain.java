package io.brine.minion;

import io.brine.daemon.BrineVersion;
import io.brine.daemon.DaemonLogging;
import io.brine.daemon.HangupSignal;
import io.brine.daemon.config.ConfigException;
import io.brine.daemon.config.LogLevel;
import io.brine.daemon.config.MinionConfig;
import io.brine.daemon.files.WritableFile;
import io.brine.minion.auth.MasterPin;
import io.brine.minion.auth.MinionKeys;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import java.io.IOException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code brine-minion -c CONFIG_DIR}: runs the minion until SIGTERM, SIGINT, or an authenticated rejection or
 * master key change.
 */
@Command(
        name = "brine-minion",
        mixinStandardHelpOptions = true,
        versionProvider = BrineVersion.class,
        description = {
            "Runs a brine minion: offers its key to the master, runs the jobs the master publishes and "
                    + "returns their results.",
            "",
            "Reads CONFIG_DIR/minion.yaml (see conf/minion.yaml for every key).",
            "Its state is in its log and in status_file (default CACHEDIR/status.json).",
            "Exit codes: 0 stopped, 1 failed at start, 2 bad configuration or usage or log_file cannot be opened, "
                    + "3 rejected by a master it can authenticate (pinned key or master_finger), 4 the pinned master "
                    + "key itself announced another key. A reply it cannot authenticate never stops it.",
            "With --rotate-key: 0 rotated, 5 refused by the master (the reason on stderr), 6 no answer within "
                    + "5 minutes (the new key stays beside the old one; the next start offers it first), 7 the new key "
                    + "waits for an admin on the master (key_rotation: pending; the daemon asks again at its "
                    + "heartbeats and switches once it is accepted)."
        })
public final class MinionMain implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(MinionMain.class);

    @Option(
            names = {"-c", "--config-dir"},
            paramLabel = "CONFIG_DIR",
            defaultValue = "/etc/brine",
            description = "Directory holding minion.yaml (default: ${DEFAULT-VALUE}).")
    Path configDir;

    @Option(
            names = {"-l", "--log-level"},
            paramLabel = "LEVEL",
            converter = LogLevel.Converter.class,
            description = {
                "Log at LEVEL instead of log_level of minion.yaml: error, warning, info, debug or trace"
                        + " (Salt's names too: critical, profile, garbage, all)."
            })
    LogLevel logLevel;

    @Option(
            names = "--fingerprint",
            description = {
                "Print the fingerprint of this minion's key (minion.pem in"
                        + " pki_dir), as brine-key -f ID prints it on the master, then exit. Nothing is created: before the first"
                        + " start there is no key (exit 1)."
            })
    boolean fingerprint;

    @Option(names = "--check-config", description = "Only load and check the configuration, then exit.")
    boolean checkConfig;

    @Option(
            names = "--rotate-key",
            description = "Authenticate, ask the master to replace this minion's key by a new "
                    + "one (key_rotation on the master decides), switch to it on the master's signed answer, then exit. "
                    + "Stop the minion's service first: one process per id.")
    boolean rotateKey;

    /** How long --rotate-key waits for the master's answer. */
    static final Duration ROTATE_WAIT = Duration.ofMinutes(5);

    /**
     * Why the minion could not use {@code pki_dir} (its key pair and the master's pinned key), {@code cachedir} (the
     * status file, queued returns) or {@code log_file} as it will at start, each with the system's reason, owner,
     * mode, user and fix; {@code --check-config} asks the same.
     */
    static List<String> unusableFiles(MinionConfig config) {
        List<String> problems = new ArrayList<>();
        WritableFile.directoryProblem("pki_dir", config.pkiDir()).ifPresent(problems::add);
        WritableFile.directoryProblem("cachedir", config.cachedir()).ifPresent(problems::add);
        config.logFile()
                .flatMap(file -> WritableFile.problem("log_file", file, false))
                .ifPresent(problems::add);
        if (config.masterSignPub().isPresent()) {
            try {
                MasterPin.readSigningKey(config.masterSignPub().get());
            } catch (IOException e) {
                problems.add("verify_master_pubkey_sign: " + e.getMessage());
            }
        }
        return problems;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new MinionMain()).execute(args));
    }

    @Override
    public Integer call() {
        MinionConfig config;
        try {
            config = MinionConfig.load(configDir);
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            return 2;
        }
        if (fingerprint) {
            return printFingerprint(config);
        }
        List<String> unusable = unusableFiles(config);
        if (!unusable.isEmpty()) {
            unusable.forEach(problem -> System.err.println("Minion cannot start: " + problem));
            return 2;
        }
        if (checkConfig) {
            System.out.println(
                    "configuration OK: " + configDir.resolve(MinionConfig.FILE_NAME) + " (id " + config.id() + ")");
            return 0;
        }
        try {
            DaemonLogging.configure(
                    logLevel != null ? logLevel : config.logLevel(), config.logFile(), config.logFormat());
        } catch (IOException e) {
            System.err.println("Minion cannot start: " + e.getMessage());
            return 2;
        }
        // SIGHUP reopens log_file (logrotate); a WARN when it cannot.
        HangupSignal.handle("minion", "log_file", DaemonLogging::reopen);
        MinionDaemon daemon;
        try {
            daemon = MinionDaemon.start(config, Clock.systemUTC());
        } catch (IOException | KeyFormatException | RuntimeException e) {
            LOG.error("Minion cannot start: {}", e.getMessage());
            return 1;
        }
        Thread hook = new Thread(
                () -> {
                    LOG.info("Minion {} stopping", config.id());
                    daemon.close();
                },
                "brine-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        if (rotateKey) {
            return rotateOnce(daemon);
        }
        MinionState state;
        try {
            state = daemon.terminated().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } catch (ExecutionException e) {
            return 1;
        }
        return switch (state) {
            case REJECTED -> 3;
            case MASTER_KEY_MISMATCH -> 4;
            default -> 0;
        };
    }

    /** {@code --rotate-key}: one rotation, its outcome on stdout or stderr and in the exit status. */
    private static int rotateOnce(MinionDaemon daemon) {
        try {
            Object first = CompletableFuture.anyOf(daemon.rotateKey(), daemon.terminated())
                    .get(ROTATE_WAIT.toSeconds(), TimeUnit.SECONDS);
            if (first instanceof KeyRotation.Result result) {
                if (result.rotated()) {
                    System.out.println("key rotated: " + result.fingerprint() + " (" + result.reason() + ")");
                    return 0;
                }
                if (result.pending()) {
                    System.err.println("key rotation waits for an admin on the master: brine-key -a "
                            + daemon.minion().id() + " -f " + result.fingerprint() + " accepts it; the minion keeps its"
                            + " current key until then and asks again at its heartbeats");
                    return 7;
                }
                System.err.println("key rotation refused by the master: " + result.reason());
                return 5;
            }
            System.err.println("key rotation not done: the minion stopped (" + first + ")");
            return first == MinionState.REJECTED ? 3 : first == MinionState.MASTER_KEY_MISMATCH ? 4 : 1;
        } catch (TimeoutException e) {
            System.err.println("key rotation not done: no answer from the master within " + ROTATE_WAIT.toMinutes()
                    + " minutes; the new key stays beside the old one and the next start offers it first");
            return 6;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } catch (ExecutionException e) {
            return 1;
        } finally {
            daemon.close();
        }
    }

    /** {@code --fingerprint}: the key's fingerprint on stdout, exit 0; why not on stderr, exit 1. */
    private static int printFingerprint(MinionConfig config) {
        Path pkiDir = config.pkiDir();
        try {
            Optional<KeyPair> pair = MinionKeys.load(pkiDir);
            if (pair.isEmpty()) {
                System.err.println("brine-minion: no key yet in " + pkiDir + ": the minion creates "
                        + MinionKeys.PRIVATE_FILE + " at its first start (and logs its fingerprint); start it once");
                return 1;
            }
            System.out.println(Fingerprints.of(pair.get().getPublic()));
            return 0;
        } catch (IOException | KeyFormatException e) {
            System.err.println("brine-minion: cannot read the key in " + pkiDir + ": " + e.getMessage());
            return 1;
        }
    }
}

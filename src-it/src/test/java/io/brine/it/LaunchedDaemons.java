package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One master and one minion launched from bin/ with conf/'s example files, shared by the test classes of a JVM that
 * only need <em>a</em> running daemon (its log, metrics, events): launched when the first test asks for a
 * {@link Running} parameter, and stopped when the JVM exits. Launching them is most of such a test's time (two JVMs
 * starting on a shared machine); what each test checks it reads from a daemon that others have used too, so tests
 * compare counters before and after what they do, and target minions by id.
 *
 * <p>The master: {@code log_format: json}, {@code http_port} and both ports chosen by the system (read from its
 * log), test keys seeded where it would generate its own (key generation is DaemonLaunchersIT's),
 * and an {@code autosign_file} naming {@link #MINION} alone, so that minion is accepted by a policy and any other a
 * test starts waits pending for an admin.
 */
final class LaunchedDaemons implements ParameterResolver {

    static final Path ROOT =
            Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
    /** The shared minion's id. */
    static final String MINION = "web1";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern SERVING =
            Pattern.compile("Master serving: requests on \\S*:(\\d+), publications on \\S*:(\\d+)");
    /** In the JSON log, where {@code /} may be written {@code \/}. */
    private static final Pattern HTTP = Pattern.compile("Metrics and health on http:[^\\s\"]*?:(\\d+)\\\\?/metrics");

    private static Running running;

    /**
     * The launched daemons and where they live.
     *
     * @param masterDir   the master's config dir (master.yaml, pki/, cache/): what brine-key is given with -c
     * @param masterLog   the master's log (standard output and error), JSON lines
     * @param cliDir      a master.yaml with the ports the master bound, for bin/brine's -c
     * @param minionDir   the shared minion's config dir
     * @param retPort     the master's request port
     * @param publishPort the master's publish port
     * @param httpPort    the master's metrics and health port
     */
    record Running(
            Path masterDir,
            Path masterLog,
            Path cliDir,
            Path minionDir,
            int retPort,
            int publishPort,
            int httpPort,
            Process master) {

        /** The master's audit log. */
        Path auditLog() {
            return masterDir.resolve("cache/audit.log");
        }

        /**
         * A new dir with a minion.yaml for this master, from conf/'s; the minion retries after a second and reconnects
         * with the ITs' back-off ({@link Fleet#RECON_DEFAULT}).
         */
        Path minionConfig(String id) throws IOException {
            return LaunchedDaemons.minionConfig(masterDir.getParent(), id, retPort, publishPort);
        }

        /** The minion's state in its cache/status.json ("none" before there is one). */
        String minionState(Path minionDir) {
            try {
                return JSON.readTree(minionDir.resolve("cache/status.json").toFile())
                        .path("state")
                        .asText();
            } catch (IOException e) {
                return "none";
            }
        }
    }

    /** How many lines of {@code log} contain {@code text}. */
    static long logged(Path log, String text) throws IOException {
        try (Stream<String> lines = Files.lines(log)) {
            return lines.filter(line -> line.contains(text)).count();
        }
    }

    private static Path minionConfig(Path parent, String id, int retPort, int publishPort) throws IOException {
        Map<String, String> values = new LinkedHashMap<>(Map.of(
                "id",
                id,
                "ret_port",
                String.valueOf(retPort),
                "publish_port",
                String.valueOf(publishPort),
                "pki_dir",
                "pki",
                "cachedir",
                "cache",
                "acceptance_wait_time",
                "1"));
        values.putAll(Fleet.RECON_YAML);
        return MetricsEndpointIT.config(Files.createTempDirectory(parent, id), "minion.yaml", values);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == Running.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        try {
            return running();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (Exception e) {
            throw new IllegalStateException("launching the shared master and minion", e);
        }
    }

    private static synchronized Running running() throws Exception {
        if (running == null || !running.master().isAlive()) {
            running = launch();
        }
        return running;
    }

    private static Running launch() throws Exception {
        Path dir = Files.createTempDirectory("brine-launched");
        List<Process> processes = new ArrayList<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(processes, dir), "stop-launched-daemons"));

        Path masterDir = MetricsEndpointIT.config(
                dir.resolve("master"),
                "master.yaml",
                Map.of(
                        "publish_port",
                        "0",
                        "ret_port",
                        "0",
                        "pki_dir",
                        "pki",
                        "cachedir",
                        "cache",
                        "log_format",
                        "json",
                        "http_port",
                        "0",
                        "autosign_file",
                        "autosign.conf"));
        Files.writeString(masterDir.resolve("autosign.conf"), MINION + "\n");
        Fleet.seedMasterKey(masterDir.resolve("pki"), 140);
        Fleet.seedRootKey(masterDir.resolve("cache"), 141);
        Path masterLog = dir.resolve("master.log");
        Process master = start(processes, "brine-master", masterDir, masterLog);
        // As long as a cluster test's master may take (a start is CPU work): failing here fails every test that
        // shares the pair.
        await().atMost(ClusterMasterProcess.START_WAIT)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    String started = Files.exists(masterLog) ? Files.readString(masterLog) : "";
                    return started.contains("Master serving") && started.contains("Metrics and health on");
                });
        String log = Files.readString(masterLog, StandardCharsets.UTF_8);
        Matcher serving = SERVING.matcher(log);
        Matcher http = HTTP.matcher(log);
        assertThat(serving.find()).as("the master names its ports:%n%s", log).isTrue();
        assertThat(http.find())
                .as("the master names its metrics port:%n%s", log)
                .isTrue();
        int retPort = Integer.parseInt(serving.group(1));
        int publishPort = Integer.parseInt(serving.group(2));
        // The admin's CLI reads master.yaml: give it the ports the master bound.
        Path cliDir = MetricsEndpointIT.config(
                dir.resolve("cli"),
                "master.yaml",
                Map.of(
                        "publish_port",
                        String.valueOf(publishPort),
                        "ret_port",
                        String.valueOf(retPort),
                        "pki_dir",
                        masterDir.resolve("pki").toString(),
                        "cachedir",
                        masterDir.resolve("cache").toString()));

        Path minionDir = minionConfig(dir, MINION, retPort, publishPort);
        Fleet.seedKey(minionDir.resolve("pki"), 142);
        start(processes, "brine-minion", minionDir, dir.resolve(MINION + ".log"));
        Running launched = new Running(
                masterDir, masterLog, cliDir, minionDir, retPort, publishPort, Integer.parseInt(http.group(1)), master);
        await().atMost(ClusterMasterProcess.START_WAIT)
                .until(() -> launched.minionState(minionDir), "accepted"::equals);
        return launched;
    }

    private static Process start(List<Process> processes, String launcher, Path configDir, Path log)
            throws IOException {
        Process process = new ProcessBuilder(
                        "bash", ROOT.resolve("bin").resolve(launcher).toString(), "-c", configDir.toString())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(log.toFile())
                .redirectErrorStream(true)
                .start();
        synchronized (processes) {
            processes.add(process);
        }
        return process;
    }

    /** SIGTERM, then SIGKILL for what is still running after a while; then the directory goes. */
    private static void stop(List<Process> processes, Path dir) {
        List<Process> started;
        synchronized (processes) {
            started = List.copyOf(processes);
        }
        started.forEach(Process::destroy);
        for (Process process : started) {
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            // Left in the temp dir: nothing more can be done as the JVM exits.
        }
    }
}

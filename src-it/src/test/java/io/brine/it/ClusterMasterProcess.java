package io.brine.it;

import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.daemon.config.TransportKind;
import io.brine.protocol.RootPublisher;
import io.brine.protocol.testing.SuiteDefaults;
import io.brine.protocol.testing.TestKeys;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A master of a cluster as a real process ({@code bin/brine-master}), with the cluster's master key and publisher
 * root key from {@link TestKeys}, ports chosen by the system and read back from its log, and {@code /metrics} on a
 * port of its own. {@link #kill()} is {@code kill -9}.
 */
final class ClusterMasterProcess implements AutoCloseable {

    /**
     * How long a master may take to serve: five times the suite's wait. Starting is CPU work, no timer (about 3,000
     * classes loaded, Logback, picocli and Jackson set up, ZooKeeper joined: 4.5-5.5 s of CPU in each of 18 starts
     * here), so its time is that work over the share of the 2 shared cores a master gets: three starting at once
     * served 61-88 s after their start at a load average of 30-50, and had 2 s of CPU each after the suite's 30 s.
     * A master that exits fails the wait at once.
     */
    static final Duration START_WAIT = SuiteDefaults.WAIT.multipliedBy(5);

    private static final Path ROOT =
            Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
    private static final Pattern SERVING =
            Pattern.compile("Master serving: requests on \\S*:(\\d+), publications on \\S*:(\\d+)");
    private static final Pattern HTTP = Pattern.compile("Metrics and health on http://\\S*:(\\d+)/metrics");
    static final int MASTER_KEY = 250;
    static final int ROOT_KEY = 249;

    final Path dir;
    final Path log;
    private final Process process;
    private final long started = System.nanoTime();
    private int retPort;
    private int httpPort;

    private ClusterMasterProcess(Path dir, Path log, Process process) {
        this.dir = dir;
        this.log = log;
        this.process = process;
    }

    /** Starts a master in {@code dir} on the ensemble {@code connect}, accepting every key. Does not wait. */
    static ClusterMasterProcess start(Path dir, String connect) throws Exception {
        Fleet.seedMasterKey(dir.resolve("pki"), MASTER_KEY);
        Files.createDirectories(dir.resolve("cache"));
        Fleet.writeKeyFile(
                dir.resolve("cache").resolve(RootPublisher.KEY_FILE), TestKeys.privatePem(ROOT_KEY), "r--------");
        Files.writeString(
                dir.resolve("master.yaml"),
                String.join(
                        "\n",
                        "interface: 127.0.0.1",
                        "ret_port: 0",
                        "publish_port: 0",
                        "pki_dir: pki",
                        "cachedir: cache",
                        "auto_accept: true",
                        "auth_rate_per_source: 1000",
                        "auth_burst: 1000",
                        "http_port: 0",
                        "cluster:",
                        "  connect: " + connect,
                        "  session_timeout: 4",
                        "  auth:",
                        "    user: brine",
                        "    password_file: zk.pass",
                        ""),
                StandardCharsets.UTF_8);
        TwoMasterCluster.writePassword(dir.resolve("zk.pass"));
        Path log = dir.resolve("master.out");
        Process process = new ProcessBuilder(
                        "bash", ROOT.resolve("bin/brine-master").toString(), "-c", dir.toString())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(log.toFile())
                .redirectErrorStream(true)
                .start();
        return new ClusterMasterProcess(dir, log, process);
    }

    /** Waits until the master serves and names its ports, at most {@link #START_WAIT}. */
    ClusterMasterProcess awaitServing() {
        await().atMost(START_WAIT).until(() -> {
            if (!process.isAlive()) {
                throw new IllegalStateException("master exited " + process.exitValue() + ": " + text());
            }
            String text = text();
            Matcher serving = SERVING.matcher(text);
            Matcher http = HTTP.matcher(text);
            if (serving.find() && http.find()) {
                retPort = Integer.parseInt(serving.group(1));
                httpPort = Integer.parseInt(http.group(1));
                return true;
            }
            return false;
        });
        System.out.printf(
                "ClusterMasterProcess: %s served %.1f s after its start, %.1f s of CPU%n",
                dir.getFileName(),
                (System.nanoTime() - started) / 1e9,
                process.toHandle()
                        .info()
                        .totalCpuDuration()
                        .map(cpu -> cpu.toMillis() / 1e3)
                        .orElse(-1.0));
        return this;
    }

    private String text() throws IOException {
        return Files.exists(log) ? Files.readString(log) : "";
    }

    String endpoint() {
        return "127.0.0.1:" + retPort;
    }

    /** {@code kill -9}: no shutdown hook, no goodbye to ZooKeeper or the minions. */
    void kill() throws Exception {
        Process kill = new ProcessBuilder("kill", "-9", Long.toString(process.pid())).start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -9 " + process.pid() + " failed");
        }
        await().until(() -> !process.isAlive());
    }

    boolean alive() {
        return process.isAlive();
    }

    /** One line of {@code /metrics} by its name and labels as printed, or -1 when absent. */
    double metric(String line) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        for (String text : response.body().split("\n")) {
            if (text.startsWith(line + " ")) {
                return Double.parseDouble(text.substring(line.length() + 1).trim());
            }
        }
        return -1;
    }

    /** GET {@code path} on the health port: status code and body. */
    HttpResponse<String> get(String path) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    /** A publisher session as the local administrator. */
    BrineClient rootClient() throws ClientException {
        KeyPair root = TestKeys.pair(ROOT_KEY);
        return BrineClient.connect(
                TransportKind.ZEROMQ,
                "127.0.0.1",
                retPort,
                RootPublisher.NAME,
                root,
                (RSAPublicKey) TestKeys.pair(MASTER_KEY).getPublic(),
                Duration.ofSeconds(10));
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
        keepLog();
    }

    /**
     * Copies the master's log to {@code target/cluster-master-logs/} (the test's {@code @TempDir}, where it was
     * written, is deleted): a failure in a fresh-clone CI run is read from it afterwards. The masters of one test share
     * their temp dir's name.
     */
    private void keepLog() {
        try {
            Path kept = Path.of(System.getProperty("user.dir"), "target", "cluster-master-logs");
            Files.createDirectories(kept);
            Path parent = dir.toAbsolutePath().getParent();
            String run = parent == null ? "" : parent.getFileName() + "-";
            Files.writeString(kept.resolve(run + dir.getFileName() + "-" + process.pid() + ".log"), text());
        } catch (IOException e) {
            // the log is a convenience
        }
    }
}

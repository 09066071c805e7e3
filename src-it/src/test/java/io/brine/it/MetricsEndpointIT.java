package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real master process (bin/brine-master, conf/master.yaml with {@code http_port} set), scraped with a real HTTP
 * client while a real minion process authenticates and a job from bin/brine runs on it.
 */
class MetricsEndpointIT {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
    private static final Pattern SERVING = Pattern.compile(
            "Master serving: requests on \\S*:(\\d+), publications on \\S*:(\\d+)");
    private static final Pattern HTTP = Pattern.compile("Metrics and health on http://\\S+:(\\d+)/metrics");

    @TempDir
    Path tmp;
    private final List<Process> processes = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @AfterEach
    void killLeftovers() {
        processes.forEach(Process::destroyForcibly);
    }

    @Test
    void countersMoveAfterAnAuthAndAJob() throws Exception {
        Path masterDir = config(tmp.resolve("master"), "master.yaml", Map.of("publish_port", "0", "ret_port", "0",
                "pki_dir", "pki", "cachedir", "cache", "auto_accept", "true", "http_port", "0"));
        // Test keys where the daemons would generate theirs (that is DaemonLaunchersIT's and TarballIT's).
        Fleet.seedMasterKey(masterDir.resolve("pki"), 143);
        Fleet.seedRootKey(masterDir.resolve("cache"), 144);
        Path masterLog = tmp.resolve("master.log");
        start("brine-master", masterDir, masterLog);
        awaitLog(masterLog, "Metrics and health on");
        awaitLog(masterLog, "Master serving");
        int httpPort = group(HTTP, masterLog, 1);
        int retPort = group(SERVING, masterLog, 1);
        int publishPort = group(SERVING, masterLog, 2);

        assertThat(get(httpPort, "/healthz").statusCode()).isEqualTo(200);
        assertThat(get(httpPort, "/readyz").statusCode()).isEqualTo(200);
        String before = get(httpPort, "/metrics").body();
        assertThat(before).contains("jvm_memory_used_bytes", "process_uptime_seconds");
        assertThat(value(before, "brine_auth_answers_total", "outcome=\"accepted\"")).isZero();
        assertThat(value(before, "brine_returns_total")).isZero();

        Map<String, String> minion = new LinkedHashMap<>(Map.of("id", "web1", "ret_port", String.valueOf(retPort),
                "publish_port", String.valueOf(publishPort), "pki_dir", "pki", "cachedir", "cache"));
        Path web1 = config(tmp.resolve("web1"), "minion.yaml", minion);
        Fleet.seedKey(web1.resolve("pki"), 145);
        start("brine-minion", web1, tmp.resolve("web1.log"));
        await().untilAsserted(() -> assertThat(value(get(httpPort, "/metrics").body(), "brine_auth_answers_total",
                "outcome=\"accepted\",rule=\"auto_accept\"")).isEqualTo(1));
        await().untilAsserted(() -> assertThat(value(get(httpPort, "/metrics").body(), "brine_minions_connected",
                "transport=\"zeromq\"")).isEqualTo(1));

        // The admin's CLI reads master.yaml: give it the ports the master bound.
        Path cliDir = config(tmp.resolve("cli"), "master.yaml", Map.of("publish_port", String.valueOf(publishPort),
                "ret_port", String.valueOf(retPort), "pki_dir", masterDir.resolve("pki").toString(), "cachedir",
                masterDir.resolve("cache").toString()));
        Process brine = new ProcessBuilder("bash", ROOT.resolve("bin/brine").toString(), "-c", cliDir.toString(),
                "*", "test.ping").redirectInput(ProcessBuilder.Redirect.from(
                new File("/dev/null"))).redirectErrorStream(true).start();
        String out = new String(brine.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(brine.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(brine.exitValue()).as(out).isZero();

        String after = get(httpPort, "/metrics").body();
        assertThat(value(after, "brine_publications_total")).isEqualTo(1);
        assertThat(value(after, "brine_returns_total")).isEqualTo(1);
        assertThat(value(after, "brine_missing_minions_total")).isZero();
        assertThat(value(after, "brine_auth_latency_seconds_count")).isGreaterThanOrEqualTo(1);
        assertThat(value(after, "brine_keys", "state=\"minions\"")).isEqualTo(1);
    }

    private Process start(String launcher, Path configDir, Path log) throws IOException {
        Process process = new ProcessBuilder("bash", ROOT.resolve("bin").resolve(launcher).toString(), "-c",
                configDir.toString()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(log.toFile()).redirectErrorStream(true).start();
        processes.add(process);
        return process;
    }

    /** conf/NAME with the commented-out defaults of {@code values} set, as an admin edits it. */
    static Path config(Path dir, String name, Map<String, String> values) throws IOException {
        String text = Files.readString(ROOT.resolve("conf").resolve(name));
        for (Map.Entry<String, String> entry : values.entrySet()) {
            String commented = "\n#" + entry.getKey() + ":";
            assertThat(text).as("conf/%s has %s", name, entry.getKey()).contains(commented);
            int line = text.indexOf(commented) + 1;
            int end = text.indexOf('\n', line);
            text = text.substring(0, line) + entry.getKey() + ": " + entry.getValue() + text.substring(end);
        }
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(name), text);
        return dir;
    }

    static void awaitLog(Path log, String text) {
        await().pollInterval(Duration.ofMillis(20))
                .until(() -> Files.exists(log) && Files.readString(log).contains(text));
    }

    private static int group(Pattern pattern, Path log, int group) throws IOException {
        Matcher matcher = pattern.matcher(Files.readString(log));
        assertThat(matcher.find()).as("%s in the log", pattern).isTrue();
        return Integer.parseInt(matcher.group(group));
    }

    private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static double value(String exposition, String name) {
        return value(exposition, name, "");
    }

    /** The sum of the samples of {@code name} whose labels contain {@code labels}. */
    static double value(String exposition, String name, String labels) {
        Matcher sample = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$").matcher(
                exposition);
        double sum = 0;
        while (sample.find()) {
            if (sample.group(1) == null ? labels.isEmpty() : sample.group(1).contains(labels)) {
                sum += Double.parseDouble(sample.group(2));
            }
        }
        return sum;
    }
}

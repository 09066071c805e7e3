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
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A real master process (bin/brine-master, conf/master.yaml with {@code http_port} set: the one
 * {@link LaunchedDaemons} shares), scraped with a real HTTP client: the shared minion's auth is counted by the rule
 * that accepted it, and a job from bin/brine moves the job counters by one.
 * Run as {@link LaunchedDaemonsIT.Metrics}, beside the other tests of the shared daemons, in one JVM.
 */
@ExtendWith(LaunchedDaemons.class)
abstract class MetricsEndpointIT {

    private static final Path ROOT = LaunchedDaemons.ROOT;

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Test
    void countersMoveAfterAnAuthAndAJob(LaunchedDaemons.Running daemons) throws Exception {
        int httpPort = daemons.httpPort();
        assertThat(get(httpPort, "/healthz").statusCode()).isEqualTo(200);
        assertThat(get(httpPort, "/readyz").statusCode()).isEqualTo(200);
        String before = get(httpPort, "/metrics").body();
        assertThat(before).contains("jvm_memory_used_bytes", "process_uptime_seconds");
        // The shared minion was accepted by autosign_file, which names it alone.
        assertThat(value(before, "brine_auth_answers_total", "outcome=\"accepted\",rule=\"autosign_file\""))
                .isGreaterThanOrEqualTo(1);
        await().untilAsserted(() -> assertThat(
                        value(get(httpPort, "/metrics").body(), "brine_minions_connected", "transport=\"zeromq\""))
                .isGreaterThanOrEqualTo(1));

        Process brine = new ProcessBuilder(
                        "bash",
                        ROOT.resolve("bin/brine").toString(),
                        "-c",
                        daemons.cliDir().toString(),
                        LaunchedDaemons.MINION,
                        "test.ping")
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true)
                .start();
        String out = new String(brine.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(brine.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(brine.exitValue()).as(out).isZero();

        String after = get(httpPort, "/metrics").body();
        assertThat(value(after, "brine_publications_total") - value(before, "brine_publications_total"))
                .isEqualTo(1);
        assertThat(value(after, "brine_returns_total") - value(before, "brine_returns_total"))
                .isEqualTo(1);
        assertThat(value(after, "brine_missing_minions_total")).isEqualTo(value(before, "brine_missing_minions_total"));
        assertThat(value(after, "brine_auth_latency_seconds_count")).isGreaterThanOrEqualTo(1);
        try (Stream<Path> accepted = Files.list(daemons.masterDir().resolve("pki/minions"))) {
            assertThat(value(after, "brine_keys", "state=\"minions\"")).isEqualTo(accepted.count());
        }
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

    private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static double value(String exposition, String name) {
        return value(exposition, name, "");
    }

    /** The sum of the samples of {@code name} whose labels contain {@code labels}. */
    static double value(String exposition, String name, String labels) {
        Matcher sample = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$")
                .matcher(exposition);
        double sum = 0;
        while (sample.find()) {
            if (sample.group(1) == null ? labels.isEmpty() : sample.group(1).contains(labels)) {
                sum += Double.parseDouble(sample.group(2));
            }
        }
        return sum;
    }
}

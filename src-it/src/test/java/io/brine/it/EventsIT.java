package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/brine events --out json} against a real master process: it prints an admin's key accept (by
 * bin/brine-key, another process) and the returns of a job from bin/brine, as JSON lines, as they happen.
 */
class EventsIT {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern SERVING = Pattern.compile(
            "Master serving: requests on \\S*:(\\d+), publications on \\S*:(\\d+)");

    @TempDir
    Path tmp;
    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        processes.forEach(Process::destroyForcibly);
    }

    @Test
    void brineEventsShowsAKeyAcceptAndAJobsReturns() throws Exception {
        Path masterDir = MetricsEndpointIT.config(tmp.resolve("master"), "master.yaml", Map.of("publish_port", "0",
                "ret_port", "0", "pki_dir", "pki", "cachedir", "cache"));
        // Test keys where the daemons would generate theirs (that is DaemonLaunchersIT's and TarballIT's).
        Fleet.seedMasterKey(masterDir.resolve("pki"), 140);
        Fleet.seedRootKey(masterDir.resolve("cache"), 141);
        Path masterLog = tmp.resolve("master.log");
        start(masterLog, "brine-master", "-c", masterDir.toString());
        MetricsEndpointIT.awaitLog(masterLog, "Master serving");
        Matcher serving = SERVING.matcher(Files.readString(masterLog));
        assertThat(serving.find()).isTrue();
        String retPort = serving.group(1);
        String publishPort = serving.group(2);
        // The admin's CLI reads master.yaml: give it the ports the master bound.
        Path cliDir = MetricsEndpointIT.config(tmp.resolve("cli"), "master.yaml", Map.of("publish_port",
                publishPort, "ret_port", retPort, "pki_dir", masterDir.resolve("pki").toString(), "cachedir",
                masterDir.resolve("cache").toString()));

        Path events = tmp.resolve("events.jsonl");
        start(events, "brine", "events", "--out", "json", "-c", cliDir.toString());
        MetricsEndpointIT.awaitLog(masterLog, "subscribed to events");

        Path web1 = MetricsEndpointIT.config(tmp.resolve("web1"), "minion.yaml", Map.of("id", "web1", "ret_port",
                retPort, "publish_port", publishPort, "pki_dir", "pki", "cachedir", "cache", "acceptance_wait_time",
                "1"));
        Fleet.seedKey(web1.resolve("pki"), 142);
        start(tmp.resolve("web1.log"), "brine-minion", "-c", web1.toString());
        MetricsEndpointIT.awaitLog(events, "\"tag\":\"brine/auth/pending\"");

        run("brine-key", "-c", masterDir.toString(), "-a", "web1", "-y");
        MetricsEndpointIT.awaitLog(events, "\"tag\":\"brine/key/minions\"");
        MetricsEndpointIT.awaitLog(events, "\"tag\":\"brine/auth/accepted\"");

        run("brine", "-c", cliDir.toString(), "*", "test.ping");
        MetricsEndpointIT.awaitLog(events, "/ret/web1\"");

        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(events)) {
            lines.add(JSON.readTree(line));
        }
        JsonNode accept = lines.stream().filter(l -> l.path("tag").asText().equals("brine/key/minions"))
                .findFirst().orElseThrow();
        assertThat(accept.path("data").path("id").asText()).isEqualTo("web1");
        assertThat(accept.path("data").path("from").asText()).isEqualTo("minions_pre");
        assertThat(accept.path("time").asText()).isNotEmpty();
        JsonNode published = lines.stream().filter(l -> l.path("tag").asText().matches("brine/job/[^/]+/new"))
                .findFirst().orElseThrow();
        String jid = published.path("data").path("jid").asText();
        JsonNode ret = lines.stream().filter(l -> l.path("tag").asText().equals("brine/job/" + jid + "/ret/web1"))
                .findFirst().orElseThrow();
        assertThat(ret.path("data").path("success").asBoolean()).isTrue();
    }

    private void start(Path output, String launcher, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("bash", ROOT.resolve("bin").resolve(launcher).toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(
                new File("/dev/null"))).redirectOutput(output.toFile());
        if (launcher.equals("brine")) {
            // The events alone on standard output, as a pipe to jq would see them.
            builder.redirectError(ProcessBuilder.Redirect.appendTo(tmp.resolve("brine.err").toFile()));
        } else {
            builder.redirectErrorStream(true); // the daemons log to standard error
        }
        processes.add(builder.start());
    }

    private static void run(String launcher, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("bash", ROOT.resolve("bin").resolve(launcher).toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(
                new File("/dev/null"))).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(out).isZero();
    }
}

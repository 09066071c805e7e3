package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/brine events --out json} against a real master process (the one {@link LaunchedDaemons} shares): it
 * prints an admin's key accept (by bin/brine-key, another process) and the returns of a job from bin/brine, as JSON
 * lines, as they happen.
 * Run as {@link LaunchedDaemonsIT.Events}, beside the other tests of the shared daemons, in one JVM.
 */
@ExtendWith(LaunchedDaemons.class)
abstract class EventsIT {

    private static final Path ROOT = LaunchedDaemons.ROOT;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        processes.forEach(Process::destroyForcibly);
    }

    @Test
    void brineEventsShowsAKeyAcceptAndAJobsReturns(LaunchedDaemons.Running daemons) throws Exception {
        Path masterLog = daemons.masterLog();
        long subscribed = LaunchedDaemons.logged(masterLog, "subscribed to events");
        Path events = tmp.resolve("events.jsonl");
        start(events, "brine", "events", "--out", "json", "-c", daemons.cliDir().toString());
        await().until(() -> LaunchedDaemons.logged(masterLog, "subscribed to events") > subscribed);

        // Not in the shared master's autosign_file: it waits for an admin.
        String id = "events1";
        Path minion = daemons.minionConfig(id);
        Fleet.seedKey(minion.resolve("pki"), 143);
        start(tmp.resolve(id + ".log"), "brine-minion", "-c", minion.toString());
        MetricsEndpointIT.awaitLog(events, "\"tag\":\"brine/auth/pending\"");

        run("brine-key", "-c", daemons.masterDir().toString(), "-a", id, "-y");
        MetricsEndpointIT.awaitLog(events, "\"tag\":\"brine/key/minions\"");
        MetricsEndpointIT.awaitLog(events, "\"tag\":\"brine/auth/accepted\"");

        run("brine", "-c", daemons.cliDir().toString(), id, "test.ping");
        MetricsEndpointIT.awaitLog(events, "/ret/" + id + "\"");

        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(events)) {
            lines.add(JSON.readTree(line));
        }
        JsonNode accept = lines.stream()
                .filter(l -> l.path("tag").asText().equals("brine/key/minions"))
                .findFirst()
                .orElseThrow();
        assertThat(accept.path("data").path("id").asText()).isEqualTo(id);
        assertThat(accept.path("data").path("from").asText()).isEqualTo("minions_pre");
        assertThat(accept.path("time").asText()).isNotEmpty();
        JsonNode published = lines.stream()
                .filter(l -> l.path("tag").asText().matches("brine/job/[^/]+/new"))
                .findFirst()
                .orElseThrow();
        String jid = published.path("data").path("jid").asText();
        JsonNode ret = lines.stream()
                .filter(l -> l.path("tag").asText().equals("brine/job/" + jid + "/ret/" + id))
                .findFirst()
                .orElseThrow();
        assertThat(ret.path("data").path("success").asBoolean()).isTrue();
    }

    private void start(Path output, String launcher, String... args) throws IOException {
        List<String> command = new ArrayList<>(
                List.of("bash", ROOT.resolve("bin").resolve(launcher).toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(output.toFile());
        if (launcher.equals("brine")) {
            // The events alone on standard output, as a pipe to jq would see them.
            builder.redirectError(
                    ProcessBuilder.Redirect.appendTo(tmp.resolve("brine.err").toFile()));
        } else {
            builder.redirectErrorStream(true); // the daemons log to standard error
        }
        processes.add(builder.start());
    }

    private static void run(String launcher, String... args) throws Exception {
        List<String> command = new ArrayList<>(
                List.of("bash", ROOT.resolve("bin").resolve(launcher).toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true)
                .start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(out).isZero();
    }
}

package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real master process with {@code log_format: json}: its log is JSON lines, and on SIGHUP it reopens audit.log,
 * so that after logrotate moved the file the master's next record lands in a new one.
 */
class LogsIT {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;
    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        processes.forEach(Process::destroyForcibly);
    }

    @Test
    void theLogIsJsonLinesAndAuditLogIsReopenedOnSighup() throws Exception {
        Path masterDir = MetricsEndpointIT.config(tmp.resolve("master"), "master.yaml", Map.of("publish_port", "0",
                "ret_port", "0", "pki_dir", "pki", "cachedir", "cache", "log_format", "json"));
        // Test keys where the master would generate its own (that is DaemonLaunchersIT's and TarballIT's).
        Fleet.seedMasterKey(masterDir.resolve("pki"), 146);
        Fleet.seedRootKey(masterDir.resolve("cache"), 147);
        Path masterLog = tmp.resolve("master.log");
        Process master = new ProcessBuilder("bash", ROOT.resolve("bin/brine-master").toString(), "-c",
                masterDir.toString()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(masterLog.toFile()).redirectErrorStream(true).start();
        processes.add(master);
        MetricsEndpointIT.awaitLog(masterLog, "Master serving");

        // Every line the master logged once its config was read is one JSON object.
        List<String> lines = Files.readAllLines(masterLog);
        JsonNode serving = null;
        for (String line : lines.subList(lines.indexOf(lines.stream().filter(l -> l.startsWith("{")).findFirst()
                .orElseThrow()), lines.size())) {
            JsonNode event = JSON.readTree(line);
            assertThat(event.path("level").asText()).isNotEmpty();
            if (event.path("formattedMessage").asText().startsWith("Master serving")) {
                serving = event;
            }
        }
        assertThat(serving).as("the serving line, as JSON").isNotNull();
        assertThat(serving.path("loggerName").asText()).isEqualTo("io.brine.master.Master");

        // logrotate moves audit.log away, then sends SIGHUP.
        Path audit = masterDir.resolve("cache/audit.log");
        Path rotated = masterDir.resolve("cache/audit.log.1");
        Files.move(audit, rotated);
        Process hup = new ProcessBuilder("kill", "-HUP", String.valueOf(master.pid())).start();
        assertThat(hup.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(hup.exitValue()).isZero();
        MetricsEndpointIT.awaitLog(masterLog, "Logs reopened");
        assertThat(audit).exists();
        assertThat(Files.getPosixFilePermissions(audit)).isEqualTo(PosixFilePermissions.fromString("rw-------"));

        // The master's next record (a rotation an admin asks for) lands in the new file, not the moved one.
        Process rotate = new ProcessBuilder("bash", ROOT.resolve("bin/brine-key").toString(), "-c",
                masterDir.toString(), "--rotate").redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true).start();
        String out = new String(rotate.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(rotate.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(rotate.exitValue()).as(out).isZero();
        MetricsEndpointIT.awaitLog(audit, "\"event\":\"publish-key-rotated\"");
        assertThat(Files.readString(rotated)).doesNotContain("publish-key-rotated");
        assertThat(master.isAlive()).isTrue();
    }
}

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
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A real master process with {@code log_format: json} (the one {@link LaunchedDaemons} shares): its log is JSON
 * lines, and on SIGHUP it reopens audit.log, so that after logrotate moved the file the master's next record lands in
 * a new one.
 * Run as {@link LaunchedDaemonsIT.Logs}, beside the other tests of the shared daemons, in one JVM.
 */
@ExtendWith(LaunchedDaemons.class)
abstract class LogsIT {

    private static final Path ROOT = LaunchedDaemons.ROOT;
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theLogIsJsonLinesAndAuditLogIsReopenedOnSighup(LaunchedDaemons.Running daemons) throws Exception {
        // A JVM started with SIGHUP ignored launches its daemons so, and they cannot catch it (HangupSignal): say so
        // rather than time out waiting for a reopening that cannot come.
        assertThat(hangupsIgnored())
                .as("this test JVM runs with SIGHUP ignored (/proc/self/status SigIgn bit 0: the build was started"
                        + " under nohup, or by a supervisor that ignores SIGHUP); the master it launched inherits that"
                        + " and cannot reopen its logs on SIGHUP. Run the build without nohup")
                .isFalse();
        Path masterLog = daemons.masterLog();
        assertThat(Files.readString(masterLog)).doesNotContain("SIGHUP is ignored");

        // Every line the master logged once its config was read is one JSON object.
        List<String> lines = Files.readAllLines(masterLog);
        JsonNode serving = null;
        for (String line : lines.subList(
                lines.indexOf(lines.stream()
                        .filter(l -> l.startsWith("{"))
                        .findFirst()
                        .orElseThrow()),
                lines.size())) {
            JsonNode event = JSON.readTree(line);
            assertThat(event.path("level").asText()).isNotEmpty();
            if (event.path("formattedMessage").asText().startsWith("Master serving")) {
                serving = event;
            }
        }
        assertThat(serving).as("the serving line, as JSON").isNotNull();
        assertThat(serving.path("loggerName").asText()).isEqualTo("io.brine.master.Master");

        // logrotate moves audit.log away, then sends SIGHUP.
        Path audit = daemons.auditLog();
        Path rotated = Files.createTempFile(audit.getParent(), "audit.log.", "");
        Files.move(audit, rotated, StandardCopyOption.REPLACE_EXISTING);
        long reopened = LaunchedDaemons.logged(masterLog, "Logs reopened");
        Process hup = new ProcessBuilder(
                        "kill", "-HUP", String.valueOf(daemons.master().pid()))
                .start();
        assertThat(hup.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(hup.exitValue()).isZero();
        await().until(() -> LaunchedDaemons.logged(masterLog, "Logs reopened") > reopened);
        assertThat(audit).exists();
        assertThat(Files.getPosixFilePermissions(audit)).isEqualTo(PosixFilePermissions.fromString("rw-------"));

        // The master's next record (a rotation an admin asks for) lands in the new file, not the moved one.
        Process rotate = new ProcessBuilder(
                        "bash",
                        ROOT.resolve("bin/brine-key").toString(),
                        "-c",
                        daemons.masterDir().toString(),
                        "--rotate")
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true)
                .start();
        String out = new String(rotate.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(rotate.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(rotate.exitValue()).as(out).isZero();
        MetricsEndpointIT.awaitLog(audit, "\"event\":\"publish-key-rotated\"");
        assertThat(Files.readString(rotated)).doesNotContain("publish-key-rotated");
        assertThat(daemons.master().isAlive()).isTrue();
    }

    /** Whether this process ignores SIGHUP: bit 0 (signal 1) of the SigIgn mask in /proc/self/status. */
    private static boolean hangupsIgnored() throws IOException {
        return Files.readAllLines(Path.of("/proc/self/status")).stream()
                .filter(line -> line.startsWith("SigIgn:"))
                .map(line -> (Long.parseUnsignedLong(
                                        line.substring("SigIgn:".length()).strip(), 16)
                                & 1)
                        != 0)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no SigIgn line in /proc/self/status"));
    }
}

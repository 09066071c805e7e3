package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.protocol.testing.TestKeys;
import java.io.File;
import java.io.IOException;
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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/brine-master, bin/brine-minion, bin/brine-key and bin/brine as an admin runs them, from the release tarball
 * unpacked as the README's install section does ({@link ReleaseTarball}; nothing of the checkout is used but the
 * tarball), with its example configs (dirs and ports set; the minion also gets an id and short waits): the issue's
 * "done when" walk-through and a test.ping through bin/brine, then rotation and a delete from other processes,
 * SIGTERM, a swapped master key, bad configs. The checkout's own bin/ runs in the other process tests (LaunchedDaemons,
 * UnwritableLogsIT, ForgedRepliesIT, BrineKeyLauncherIT).
 */
class DaemonLaunchersIT {

    /** The unpacked release tarball whose bin/ and conf/ this runs. */
    private static Path home;

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The test minion's acceptance_wait_time: the least its config takes, so that the walk-through is short too. */
    private static final int ACCEPTANCE_WAIT = 1;
    /** The master's log line that names the ports it bound. */
    private static final Pattern SERVING =
            Pattern.compile("Master serving: requests on \\S*:(\\d+), publications on \\S*:(\\d+)");

    @TempDir
    Path tmp;

    private final List<Process> processes = new ArrayList<>();

    @BeforeAll
    static void unpack() throws Exception {
        home = ReleaseTarball.home();
    }

    @AfterEach
    void killLeftovers() {
        for (Process process : processes) {
            process.destroyForcibly();
        }
    }

    record Run(int exit, String out, String err) {}

    /** Runs a launcher to completion. */
    private static Run run(String launcher, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(
                List.of("bash", home.resolve("bin").resolve(launcher).toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        byte[] out = process.getInputStream().readAllBytes();
        byte[] err = process.getErrorStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(
                process.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }

    /** Starts a daemon with its log (standard error) going to {@code log}. */
    private Process start(String launcher, Path configDir, Path log) throws IOException {
        return start(List.of(), launcher, configDir, log);
    }

    /**
     * Starts a daemon as nohup does, with SIGHUP ignored (a disposition an exec keeps, and ProcessBuilder cannot
     * set): through a shell that ignores it, then execs the launcher.
     */
    private Process startIgnoringHangups(String launcher, Path configDir, Path log) throws IOException {
        return start(List.of("sh", "-c", "trap '' HUP; exec \"$@\"", "sh"), launcher, configDir, log);
    }

    private Process start(List<String> wrapper, String launcher, Path configDir, Path log) throws IOException {
        List<String> command = new ArrayList<>(wrapper);
        command.addAll(List.of("bash", home.resolve("bin").resolve(launcher).toString(), "-c", configDir.toString()));
        Process process = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(log.toFile())
                .redirectErrorStream(true)
                .start();
        processes.add(process);
        return process;
    }

    /** conf/NAME with the commented-out defaults of {@code values} set, as an admin edits it. */
    private static Path config(Path dir, String name, Map<String, String> values) throws IOException {
        String text = Files.readString(home.resolve("conf").resolve(name));
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

    private Path masterConfig(Path dir, int retPort, int publishPort) throws IOException {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("publish_port", String.valueOf(publishPort));
        values.put("ret_port", String.valueOf(retPort));
        values.put("pki_dir", "pki");
        values.put("cachedir", "cache");
        return config(dir, "master.yaml", values);
    }

    private Path minionConfig(Path dir, String id, int retPort, int publishPort) throws IOException {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("id", id);
        values.put("ret_port", String.valueOf(retPort));
        values.put("publish_port", String.valueOf(publishPort));
        values.put("pki_dir", "pki");
        values.put("cachedir", "cache");
        values.put("acceptance_wait_time", String.valueOf(ACCEPTANCE_WAIT));
        values.put("auth_timeout", "5");
        values.putAll(Fleet.RECON_YAML);
        return config(dir, "minion.yaml", values);
    }

    private static JsonNode status(Path minionDir) {
        try {
            return JSON.readTree(minionDir.resolve("cache/status.json").toFile());
        } catch (IOException e) {
            return JSON.createObjectNode().put("state", "none");
        }
    }

    private static void awaitState(Path minionDir, String state) {
        await().until(() -> status(minionDir).path("state").asText(), state::equals);
    }

    private static void awaitLog(Path log, String text) {
        await().pollInterval(Duration.ofMillis(20))
                .until(() -> Files.exists(log) && Files.readString(log).contains(text));
    }

    @Test
    void aMasterAndMinionsFromBinWithTheExampleConfigs() throws Exception {
        // The master binds ports the system chooses and names them in its log.
        Path masterDir = masterConfig(tmp.resolve("master"), 0, 0);
        Path masterLog = tmp.resolve("master.log");
        Process master = start("brine-master", masterDir, masterLog);
        // A first start generates its keys too: as long as a cluster test's master may take (a start is CPU work).
        await().atMost(ClusterMasterProcess.START_WAIT)
                .pollInterval(Duration.ofMillis(20))
                .until(() ->
                        Files.exists(masterLog) && Files.readString(masterLog).contains("Master serving"));
        Matcher serving = SERVING.matcher(Files.readString(masterLog));
        assertThat(serving.find()).as("the master names its ports").isTrue();
        int retPort = Integer.parseInt(serving.group(1));
        int publishPort = Integer.parseInt(serving.group(2));
        assertThat(masterDir.resolve("pki/master.pem")).exists();
        assertThat(Files.getPosixFilePermissions(masterDir.resolve("pki/master.pem")))
                .hasToString("[OWNER_READ]");

        // The minion offers its key and waits.
        Path web1 = minionConfig(tmp.resolve("web1"), "web1", retPort, publishPort);
        Path web1Log = tmp.resolve("web1.log");
        Process minion = start("brine-minion", web1, web1Log);
        awaitState(web1, "pending");
        assertThat(status(web1).path("next_attempt").isNull()).isFalse();
        assertThat(Files.readString(web1Log))
                .contains("Minion key created, fingerprint "
                        + status(web1).path("fingerprint").asText());
        assertThat(Files.getPosixFilePermissions(web1.resolve("pki/minion.pem")))
                .hasToString("[OWNER_READ]");
        assertThat(web1.resolve("pki/minion_master.pub")).doesNotExist();
        assertThat(masterDir.resolve("pki/minions_pre/web1")).exists();

        // The admin accepts it; it is accepted at its next try and pins the master.
        Run accept = run("brine-key", "-c", masterDir.toString(), "-a", "web1", "-y");
        assertThat(accept.exit()).as(accept.err()).isZero();
        long accepted = System.nanoTime();
        awaitState(web1, "accepted");
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - accepted);
        System.out.printf("DaemonLaunchersIT: accepted %d ms after brine-key -a returned%n", millis);
        assertThat(Files.readString(web1.resolve("pki/minion_master.pub")))
                .isEqualTo(Files.readString(masterDir.resolve("pki/master.pub")));

        // bin/brine runs a function on it (--port: master.yaml's ret_port is 0 here).
        Run ping = run(
                "brine",
                "-c",
                masterDir.toString(),
                "--port",
                String.valueOf(retPort),
                "--out",
                "json",
                "web1",
                "test.ping");
        assertThat(ping.exit()).as(ping.err()).isZero();
        assertThat(JSON.readTree(ping.out()).path("web1").asBoolean())
                .as(ping.out())
                .isTrue();
        String acceptedKey = Files.readString(masterDir.resolve("pki/minions/web1"));

        // An impostor with the same id and its own key ends in minions_denied/; the accepted key is untouched.
        // (Its key is a test key: web1 showed a minion making its own above.) It is started as nohup starts a
        // process, with SIGHUP ignored: it says at once that SIGHUP will not reopen its log.
        Path impostor = minionConfig(tmp.resolve("impostor"), "web1", retPort, publishPort);
        Fleet.seedKey(impostor.resolve("pki"), 153);
        Path impostorLog = tmp.resolve("impostor.log");
        Process impostorProcess = startIgnoringHangups("brine-minion", impostor, impostorLog);
        awaitState(impostor, "denied");
        assertThat(Files.readString(impostorLog))
                .containsOnlyOnce("SIGHUP is ignored")
                .contains(
                        "SIGHUP is ignored: the minion was started with SIGHUP ignored (nohup",
                        "will not reopen log_file",
                        "logrotate's copytruncate");
        assertThat(masterDir.resolve("pki/minions_denied/web1")).exists();
        assertThat(Files.readString(masterDir.resolve("pki/minions_denied/web1")))
                .isNotEqualTo(acceptedKey);
        assertThat(Files.readString(masterDir.resolve("pki/minions/web1"))).isEqualTo(acceptedKey);
        assertThat(status(web1).path("state").asText()).isEqualTo("accepted");
        impostorProcess.destroy();
        assertThat(impostorProcess.waitFor(30, TimeUnit.SECONDS)).isTrue();

        // An admin's rotation, from another process, reaches the minion.
        long generation = status(web1).path("generation").asLong();
        Run rotate = run("brine-key", "-c", masterDir.toString(), "--rotate");
        assertThat(rotate.exit()).as(rotate.err()).isZero();
        awaitLog(masterLog, "(asked by an admin)");
        await().until(() -> status(web1).path("generation").asLong() > generation);

        // A delete from another process closes the session and rotates; the minion, told its session is gone,
        // offers its key again.
        Run delete = run("brine-key", "-c", masterDir.toString(), "-d", "web1", "-y");
        assertThat(delete.exit()).as(delete.err()).isZero();
        long deleted = System.nanoTime();
        awaitLog(masterLog, "(key of web1 removed)");
        millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - deleted);
        System.out.printf("DaemonLaunchersIT: rotated %d ms after brine-key -d returned%n", millis);
        assertThat(Files.readString(masterLog)).contains("Minion web1: key deleted; session closed");

        // SIGTERM stops the master cleanly (128 + 15: the JVM's status after its shutdown hooks ran).
        master.destroy();
        assertThat(master.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(master.exitValue()).isIn(0, 143);
        assertThat(Files.readString(masterLog))
                .contains("Master stopping", "Master stopped")
                .doesNotContain("ERROR");

        // Another master key on the same address: the pinned minion refuses it, whatever state it was in (here
        // pending again, after the delete), and keeps asking: its replies are not signed by the pinned key, as a
        // forger's would not be (ForgedRepliesIT). (A restart on the same ports, as an admin's would be.)
        // (Its keys are made beforehand, to spare a slow machine two key generations it has seen once already.)
        Path swapped = masterConfig(tmp.resolve("swapped"), retPort, publishPort);
        Fleet.seedMasterKey(swapped.resolve("pki"), TestKeys.COUNT - 1);
        Fleet.writeKeyFile(
                Files.createDirectories(swapped.resolve("cache")).resolve("root.pem"),
                TestKeys.privatePem(TestKeys.COUNT - 2),
                "r--------");
        // Started with SIGHUP ignored, as nohup does: it says so before it serves.
        Path swappedLog = tmp.resolve("swapped.log");
        startIgnoringHangups("brine-master", swapped, swappedLog);
        // The new master's start is part of the wait.
        await().atMost(ClusterMasterProcess.START_WAIT)
                .until(() -> status(web1).path("state").asText(), "master_key_mismatch"::equals);
        assertThat(Files.readString(swappedLog))
                .contains(
                        "SIGHUP is ignored: the master was started with SIGHUP ignored (nohup",
                        "will not reopen audit.log and log_file",
                        "logrotate's copytruncate");
        assertThat(Files.readString(web1Log)).contains("CRITICAL", "master key changed");
        assertThat(minion.isAlive()).isTrue();
        assertThat(Files.readString(web1.resolve("pki/minion_master.pub")))
                .isEqualTo(Files.readString(masterDir.resolve("pki/master.pub")));
    }

    @Test
    void badConfigsStopTheDaemonsWithEveryProblemAndItsLine() throws Exception {
        Path master = Files.createDirectories(tmp.resolve("bad-master"));
        Files.writeString(master.resolve("master.yaml"), "ret_port: 4506\npublish_sesion: 3600\nkeysize: 1000\n");
        Run masterRun = run("brine-master", "-c", master.toString());
        assertThat(masterRun.exit()).isEqualTo(2);
        assertThat(masterRun.err())
                .contains(
                        "2 problems",
                        master.resolve("master.yaml") + ":2: publish_sesion",
                        master.resolve("master.yaml") + ":3: keysize")
                .doesNotContain("Exception");

        Path minion = Files.createDirectories(tmp.resolve("bad-minion"));
        Files.writeString(minion.resolve("minion.yaml"), "id: Web1\nacceptance_wait_time: soon\n");
        Run minionRun = run("brine-minion", "-c", minion.toString());
        assertThat(minionRun.exit()).isEqualTo(2);
        assertThat(minionRun.err())
                .contains(
                        minion.resolve("minion.yaml") + ":1: id",
                        minion.resolve("minion.yaml") + ":2: acceptance_wait_time")
                .doesNotContain("Exception");

        Run help = run("brine-master", "--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).contains("--config-dir", "Exit codes");
        Run version = run("brine-minion", "--version");
        assertThat(version.exit()).isZero();
        assertThat(version.out()).startsWith("brine ").doesNotContain("unknown");
    }
}

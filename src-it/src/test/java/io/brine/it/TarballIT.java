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
import java.time.Duration;
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
 * The release tarball (dist/target/brine-VERSION.tar.gz) unpacked into a temporary directory, as the README's install
 * section does ({@link ReleaseTarball}): the layout the README names. Its launchers run a master and minions with its
 * example configs in DaemonLaunchersIT, which runs them from the same unpacked tarball. The Debian package
 * (dist/target/brine_VERSION_all.deb) is checked with dpkg-deb and lintian, unpacked with dpkg -x, and run from its
 * /opt/brine with its /etc/brine configs: a master and a minion, brine-key accepts the minion, brine runs test.ping
 * on it.
 */
class TarballIT {

    private static final Path DEB = Path.of(System.getProperty(
                    "brine.deb", "../dist/target/brine_" + System.getProperty("brine.version", "0.2.0") + "_all.deb"))
            .toAbsolutePath();
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * How long lintian may take: only how long a broken build takes to say so. Niced, it took 13 s of CPU but 208 s by
     * the wall clock on a 2-core machine at a load of 50, and 60 s was exceeded at 35.
     */
    private static final Duration LINTIAN_WAIT = Duration.ofMinutes(5);

    private static final Pattern SERVING =
            Pattern.compile("Master serving: requests on \\S*:(\\d+), publications on \\S*:(\\d+)");

    @TempDir
    Path tmp;

    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        processes.forEach(Process::destroyForcibly);
    }

    record Run(int exit, String out, String err) {}

    private static Run run(List<String> command, Path workDir) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command)
                .directory(workDir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        byte[] out = process.getInputStream().readAllBytes();
        byte[] err = process.getErrorStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(
                process.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }

    private Process start(Path home, String launcher, Path configDir, Path log) throws IOException {
        Process process = new ProcessBuilder(
                        home.resolve("bin").resolve(launcher).toString(), "-c", configDir.toString())
                .directory(tmp.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(log.toFile())
                .redirectErrorStream(true)
                .start();
        processes.add(process);
        return process;
    }

    /** The shipped CONF/NAME with the commented-out defaults of {@code values} set, as an admin edits it. */
    private static Path config(Path conf, Path dir, String name, Map<String, String> values) throws IOException {
        String text = Files.readString(conf.resolve(name));
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

    private static String state(Path minionDir) {
        try {
            JsonNode status =
                    JSON.readTree(minionDir.resolve("cache/status.json").toFile());
            return status.path("state").asText();
        } catch (IOException e) {
            return "none";
        }
    }

    @Test
    void theTarballUnpackedAnywhereHasTheLayoutTheReadmeNames() throws Exception {
        Path home = ReleaseTarball.home();
        assertThat(home.getFileName().toString()).startsWith("brine-");

        for (String launcher : List.of("brine", "brine-master", "brine-minion", "brine-key")) {
            assertThat(home.resolve("bin").resolve(launcher)).isExecutable();
            assertThat(home.resolve("share/man/man1").resolve(launcher + ".1")).isNotEmptyFile();
            assertThat(home.resolve("share/bash-completion/completions").resolve(launcher + ".bash"))
                    .isNotEmptyFile();
        }
        assertThat(home.resolve("LICENSE")).content().contains("Apache License").contains("Version 2.0");
        assertThat(home.resolve("README.md")).isNotEmptyFile();
        assertThat(home.resolve("systemd/brine-master.service")).isNotEmptyFile();
        assertThat(home.resolve("systemd/brine-minion.service")).isNotEmptyFile();
        assertThat(home.resolve("conf/master.yaml")).isNotEmptyFile();
        assertThat(home.resolve("conf/minion.yaml")).isNotEmptyFile();
        for (String doc : List.of("PROTOCOL.md", "SALT.md", "ARCHITECTURE.md", "BENCHMARKS.md", "CHANGELOG.md")) {
            assertThat(home.resolve("share/doc/brine").resolve(doc))
                    .as("the docs README cites")
                    .isNotEmptyFile();
        }
    }

    @Test
    void theDebianPackagePassesLintianAndRunsAMasterAMinionBrineKeyAndBrine() throws Exception {
        assertThat(DEB)
                .as("built by the dist module (./mvnw -pl dist -am package)")
                .exists();
        // Debian's package checker takes about as long as the rest of this test and waits on nothing of it: it runs
        // beside the checks and the walk-through below (niced, so that the daemons' start-up goes first), and is
        // read at the end. Its checks are not what costs: lintian -C with one check took 8.7 of the 11.9 s of CPU of
        // the whole run (unpacking and indexing the package's 30 MB, 64 jars), and --tags with only the error-level
        // tags (all that --fail-on error judges) 11.4 s, so it runs whole.
        Path lintianOut = tmp.resolve("lintian.out");
        Process lintian = new ProcessBuilder("nice", "-n", "10", "lintian", "--fail-on", "error", DEB.toString())
                .directory(tmp.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(lintianOut.toFile())
                .redirectErrorStream(true)
                .start();
        processes.add(lintian);
        Run info = run(List.of("dpkg-deb", "--field", DEB.toString(), "Package", "Version", "Architecture"), tmp);
        assertThat(info.exit()).as(info.err()).isZero();
        assertThat(info.out())
                .contains("Package: brine\n")
                .contains("Version: " + System.getProperty("brine.version", "0.2.0") + "\n")
                .contains("Architecture: all\n");
        Run conffiles = run(List.of("dpkg-deb", "--info", DEB.toString(), "conffiles"), tmp);
        assertThat(conffiles.exit()).as(conffiles.err()).isZero();
        assertThat(conffiles.out().lines())
                .containsExactlyInAnyOrder(
                        "/etc/brine/master.yaml", "/etc/brine/minion.yaml", "/etc/logrotate.d/brine");
        Run postinst = run(List.of("dpkg-deb", "--info", DEB.toString(), "postinst"), tmp);
        assertThat(postinst.out()).contains("adduser --system --group").contains("/etc/brine/pki");
        Run contents = run(List.of("dpkg-deb", "--contents", DEB.toString()), tmp);
        assertThat(contents.exit()).as(contents.err()).isZero();
        List<String> paths = contents.out()
                .lines()
                .map(line -> line.substring(line.indexOf("./") + 1))
                .toList();
        for (String cli : List.of("brine", "brine-master", "brine-minion", "brine-key")) {
            assertThat(paths)
                    .contains(
                            "/usr/bin/" + cli + " -> /opt/brine/bin/" + cli,
                            "/usr/share/man/man1/" + cli + ".1.gz",
                            "/usr/share/bash-completion/completions/" + cli);
        }
        assertThat(paths)
                .contains(
                        "/lib/systemd/system/brine-master.service",
                        "/lib/systemd/system/brine-minion.service",
                        "/usr/share/doc/brine/copyright",
                        "/usr/share/doc/brine/changelog.gz",
                        "/usr/share/doc/brine/PROTOCOL.md",
                        "/usr/share/doc/brine/ARCHITECTURE.md",
                        "/usr/share/doc/brine/BENCHMARKS.md",
                        "/usr/share/doc/brine/README.md",
                        "/opt/brine/systemd/brine-master.service");

        Path root = Files.createDirectories(tmp.resolve("root"));
        Run unpack = run(List.of("dpkg", "-x", DEB.toString(), root.toString()), tmp);
        assertThat(unpack.exit()).as(unpack.err()).isZero();
        runsAMasterAMinionBrineKeyAndBrine(root.resolve("opt/brine"), root.resolve("etc/brine"));

        // Debian's package checker: an error fails the build (warnings such as jar-not-in-usr-share are /opt's).
        assertThat(lintian.waitFor(LINTIAN_WAIT.toSeconds(), TimeUnit.SECONDS))
                .as("lintian finishes: %s", Files.readString(lintianOut))
                .isTrue();
        String checked = Files.readString(lintianOut, StandardCharsets.UTF_8);
        assertThat(lintian.exitValue())
                .as("lintian (installed by .ci/install-test-deps):%n%s", checked)
                .isZero();
        assertThat(checked.lines().filter(line -> line.startsWith("E: ")).toList())
                .isEmpty();
    }

    private void runsAMasterAMinionBrineKeyAndBrine(Path home, Path conf) throws Exception {
        // A master with ports the system chooses, named in its log.
        Path masterDir = config(
                conf,
                tmp.resolve("etc-master"),
                "master.yaml",
                Map.of("publish_port", "0", "ret_port", "0", "pki_dir", "pki", "cachedir", "cache"));
        // Its keys and the minion's are seeded, as if made at a first start: making them is the same code from the same
        // jars in DaemonLaunchersIT's first start (about 0.5 s of CPU each with the launchers' C1 alone), and what
        // this test adds is the package's layout, not key generation.
        Fleet.seedMasterKey(masterDir.resolve("pki"), 150);
        Fleet.seedRootKey(masterDir.resolve("cache"), 151);
        Path masterLog = tmp.resolve("master.log");
        Process master = start(home, "brine-master", masterDir, masterLog);
        // As long as a cluster test's master may take (a start is CPU work, and lintian runs beside it); a master that
        // exits fails at once.
        await().atMost(ClusterMasterProcess.START_WAIT)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    assertThat(master.isAlive())
                            .as("master exited: %s", Files.exists(masterLog) ? Files.readString(masterLog) : "")
                            .isTrue();
                    return Files.exists(masterLog)
                            && SERVING.matcher(Files.readString(masterLog)).find();
                });
        Matcher serving = SERVING.matcher(Files.readString(masterLog));
        assertThat(serving.find()).isTrue();

        // A minion offers its key.
        Path minionDir = config(
                conf,
                tmp.resolve("etc-minion"),
                "minion.yaml",
                Map.of(
                        "id",
                        "web1",
                        "ret_port",
                        serving.group(1),
                        "publish_port",
                        serving.group(2),
                        "pki_dir",
                        "pki",
                        "cachedir",
                        "cache",
                        "acceptance_wait_time",
                        "1",
                        "auth_timeout",
                        "5"));
        Fleet.seedKey(minionDir.resolve("pki"), 152);
        start(home, "brine-minion", minionDir, tmp.resolve("minion.log"));
        // Its start is part of the wait, as the master's is.
        await().atMost(ClusterMasterProcess.START_WAIT).until(() -> state(minionDir), "pending"::equals);

        // brine-key accepts it.
        Run accept = run(
                List.of(home.resolve("bin/brine-key").toString(), "-c", masterDir.toString(), "-a", "web1", "-y"), tmp);
        assertThat(accept.exit()).as(accept.err()).isZero();
        await().until(() -> state(minionDir), "accepted"::equals);

        // brine runs a function on it (--port: master.yaml's ret_port is 0 here).
        Run ping = run(
                List.of(
                        home.resolve("bin/brine").toString(),
                        "-c",
                        masterDir.toString(),
                        "--port",
                        serving.group(1),
                        "--out",
                        "json",
                        "web1",
                        "test.ping"),
                tmp);
        assertThat(ping.exit()).as(ping.err()).isZero();
        assertThat(JSON.readTree(ping.out()).path("web1").asBoolean()).isTrue();
    }
}

package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** bin/brine-key as an admin runs it, on the build of this checkout: the "done when" walk-through. */
class BrineKeyLauncherIT {

    private static final Path ROOT =
            Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    record Run(int exit, String out, String err) {}

    private Run run(Path launcher, String... args) throws IOException, InterruptedException {
        return run(Map.of(), launcher, args);
    }

    /** As {@link #run(Path, String...)}, with {@code environment}'s variables set, an empty value removing one. */
    private Run run(Map<String, String> environment, Path launcher, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("bash", launcher.toString()));
        command.addAll(List.of(args));
        // Files, not pipes: a verbose run's stderr would fill a pipe while stdout is being read.
        Path out = Files.createTempFile(tmp, "out", ".txt");
        Path err = Files.createTempFile(tmp, "err", ".txt");
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile());
        environment.forEach((name, value) -> {
            if (value.isEmpty()) {
                builder.environment().remove(name);
            } else {
                builder.environment().put(name, value);
            }
        });
        Process process = builder.start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(
                process.exitValue(),
                Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    /**
     * A master.yaml whose cluster: is {@code connect}, with digest auth, and the shortest connect_timeout: the
     * refusals below are the same line at any bound, and each run waits it out.
     */
    private Path clusterConfig(String connect) throws IOException {
        Path etc = Files.createDirectories(tmp.resolve("etc"));
        Path password = Files.writeString(etc.resolve("zk.pass"), "s3cret\n");
        Files.setPosixFilePermissions(password, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(
                etc.resolve("master.yaml"),
                "pki_dir: " + Files.createDirectories(tmp.resolve("pki"))
                        + "\ncachedir: " + tmp.resolve("cache") + "\ncluster:\n  connect: " + connect
                        + "\n  root: /brine\n  connect_timeout: 1\n  auth:\n    user: brine\n    password_file: zk.pass\n");
        return etc;
    }

    private static void assertOneLineClusterUnavailable(Run run, String connect) {
        assertThat(run.exit()).as(run.err()).isEqualTo(4);
        assertThat(run.out()).isEmpty();
        assertThat(run.err())
                .isEqualTo("brine-key: cluster unavailable: cannot reach the"
                        + " ZooKeeper ensemble " + connect + " within 1 s (no server reachable, or the ensemble has no"
                        + " quorum); tried each server of cluster.connect for root /brine; nothing changed. Start the stopped"
                        + " ZooKeeper servers (a majority of the ensemble must run) or fix cluster.connect in master.yaml,"
                        + " then try again\n");
    }

    @Test
    void anEnsembleWithoutQuorumIsOneLineAndExitFour() throws Exception {
        try (TestingCluster ensemble = new TestingCluster(TwoMasterCluster.threeServerSpecs())) {
            ensemble.start();
            for (InstanceSpec spec : ensemble.getInstances().stream().limit(2).toList()) {
                assertThat(ensemble.killServer(spec)).isTrue();
            }
            Path etc = clusterConfig(ensemble.getConnectString());

            Run accept = run(ROOT.resolve("bin/brine-key"), "-c", etc.toString(), "-a", "web1", "-y");

            assertOneLineClusterUnavailable(accept, ensemble.getConnectString());
        }
    }

    @Test
    void anEnsembleNeverReachableIsOneLineAndExitFourAndVerboseShowsTheClient() throws Exception {
        String connect;
        try (TestingServer gone = new TestingServer()) {
            connect = gone.getConnectString();
        }
        Path etc = clusterConfig(connect);

        Run list = run(ROOT.resolve("bin/brine-key"), "-c", etc.toString(), "-L");
        Run verbose = run(ROOT.resolve("bin/brine-key"), "-c", etc.toString(), "-L", "-v");

        assertOneLineClusterUnavailable(list, connect);
        assertThat(verbose.exit()).isEqualTo(4);
        assertThat(verbose.err().lines().count()).isGreaterThan(1);
        assertThat(verbose.err()).endsWith(list.err());
    }

    @Test
    void generateListAcceptAndFingerprintAKey() throws Exception {
        Path launcher = ROOT.resolve("bin/brine-key");
        Path keys = tmp.resolve("keys");
        Path pki = tmp.resolve("pki");
        String cache = tmp.resolve("cache").toString();

        Run gen = run(launcher, "--gen-keys", "web1", "--gen-keys-dir", keys.toString());
        assertThat(gen.exit()).as(gen.err()).isZero();
        assertThat(keys.resolve("web1.pem")).exists();
        assertThat(keys.resolve("web1.pub")).exists();

        Files.createDirectories(pki.resolve("minions_pre"));
        Files.copy(keys.resolve("web1.pub"), pki.resolve("minions_pre/web1"), StandardCopyOption.COPY_ATTRIBUTES);

        Run list = run(launcher, "--pki-dir", pki.toString(), "-L", "--out", "json");
        assertThat(list.exit()).as(list.err()).isZero();
        assertThat(list.err()).isEmpty();
        JsonNode listing = JSON.readTree(list.out());
        assertThat(listing.get("minions_pre").toString()).isEqualTo("[\"web1\"]");

        Run noTerminal = run(launcher, "--pki-dir", pki.toString(), "--cachedir", cache, "-a", "web*");
        assertThat(noTerminal.exit()).isEqualTo(1);
        assertThat(pki.resolve("minions_pre/web1")).exists();

        Run accept = run(launcher, "--pki-dir", pki.toString(), "--cachedir", cache, "-a", "web*", "-y");
        assertThat(accept.exit()).as(accept.err()).isZero();
        assertThat(accept.out()).contains("Key for minion web1 accepted.");
        assertThat(pki.resolve("minions/web1")).exists();
        assertThat(pki.resolve("minions_pre/web1")).doesNotExist();

        Run finger = run(launcher, "--pki-dir", pki.toString(), "-f", "web1");
        assertThat(finger.exit()).isZero();
        String fingerprint = gen.out()
                .lines()
                .filter(l -> l.startsWith("Fingerprint: "))
                .findFirst()
                .orElseThrow()
                .substring("Fingerprint: ".length());
        assertThat(finger.out()).isEqualTo("Accepted Keys:\nweb1:  " + fingerprint + "\n");
        assertThat(fingerprint).matches("([0-9a-f]{2}:){31}[0-9a-f]{2}");

        Run usage = run(launcher, "--pki-dir", pki.toString(), "-a", "Web1", "-y");
        assertThat(usage.exit()).isEqualTo(2);
        assertThat(usage.err()).startsWith("brine-key: ").doesNotContain("Exception");
    }

    /**
     * Started by a service manager or in a container with no locale (LANG unset: POSIX), Java 17 reads and makes file
     * names as ASCII, so a state tree, pki_dir or config under a non-ASCII path was not found; the launchers give Java
     * a UTF-8 character type (C.UTF-8) when the environment's is not.
     */
    @Test
    void aNonAsciiPathWorksWhenTheEnvironmentHasNoUtf8Locale() throws Exception {
        Path keys = tmp.resolve("clés");
        Run gen = run(
                Map.of("LANG", "", "LC_ALL", "", "LC_CTYPE", ""),
                ROOT.resolve("bin/brine-key"),
                "--gen-keys",
                "web1",
                "--gen-keys-dir",
                keys.toString());
        assertThat(gen.exit()).as(gen.err()).isZero();
        assertThat(keys.resolve("web1.pem")).exists();
    }

    @Test
    void anUnbuiltCheckoutSaysHowToBuild() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("checkout/bin"));
        for (String script : List.of("brine-key", "brine-common.sh")) {
            Files.copy(ROOT.resolve("bin").resolve(script), bin.resolve(script));
        }

        Run run = run(bin.resolve("brine-key"), "-L");

        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("brine is not built yet: run ./mvnw -q -DskipTests package");
    }
}

package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.CrashPoints;
import io.brine.daemon.config.TransportKind;
import io.brine.minion.auth.MinionKeyring;
import io.brine.minion.auth.MinionKeys;
import io.brine.protocol.crypto.Pem;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A minion's key rotation killed with {@code kill -9} at every step, minion and master as real processes from bin/
 * (issue 25): started again, the pair ends with one accepted key that the minion holds, the new one or the old one
 * unchanged, and the minion signs in with it. Each step is a {@link CrashPoints} name armed in the process's crash
 * dir; the process holds there, and the test kills it. The minion's steps each in a minion of its own against one
 * master; the master's steps in turn on one minion's {@code --rotate-key}, the master killed at each and started
 * again on the ports it had. The two transports run at the same time (junit-platform.properties), each in a test
 * instance of its own with its own master and minions: the class takes about as long as one of them.
 */
class RotationCrashIT {

    private static final Path ROOT =
            Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
    private static final Pattern SERVING =
            Pattern.compile("Master serving: requests on \\S*:(\\d+), publications on" + " \\S*:(\\d+)");

    /** A step of the rotation and whether the master holds the new key once a process was killed there. */
    private record Step(String name, boolean rotated) {}

    private static final List<Step> MINION_STEPS = List.of(
            new Step("minion-rotation-key-written", false),
            new Step("minion-rotation-answered", true),
            new Step("minion-rotation-switched", true));
    private static final List<Step> MASTER_STEPS = List.of(
            new Step("master-rotation-checked", false),
            new Step("master-rotation-retired", false),
            new Step("master-rotation-stored", true));

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();
    private Path masterDir;
    private Process master;
    private int masterLaunches;

    @AfterEach
    void stopAll() throws InterruptedException {
        for (Process process : processes) {
            process.destroyForcibly();
            process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest
    @EnumSource(TransportKind.class)
    @Execution(ExecutionMode.CONCURRENT)
    void killedAtAnyStepOfARotationTheMinionSignsInWithTheOneKeyTheMasterAccepts(TransportKind kind) throws Exception {
        String transport = kind.name().toLowerCase(Locale.ROOT);
        Map<String, String> masterValues = new LinkedHashMap<>(Map.of(
                "interface",
                "127.0.0.1",
                "publish_port",
                "0",
                "ret_port",
                "0",
                "transport",
                transport,
                "tcp_port",
                "0",
                "pki_dir",
                "pki",
                "cachedir",
                "cache",
                "auto_accept",
                "true"));
        masterDir = MetricsEndpointIT.config(dir.resolve("master"), "master.yaml", masterValues);
        Fleet.seedMasterKey(masterDir.resolve("pki"), 190);
        Files.createDirectories(crashDir(masterDir));
        Matcher ports = startMaster();
        // Started again on the ports it bound, so the minions find it.
        if (kind == TransportKind.TCP) {
            masterValues.put("tcp_port", ports.group(1));
        } else {
            masterValues.put("ret_port", ports.group(1));
            masterValues.put("publish_port", ports.group(2));
        }
        MetricsEndpointIT.config(masterDir, "master.yaml", masterValues);
        Map<String, String> minionValues = new LinkedHashMap<>(Map.of(
                "transport",
                transport,
                "pki_dir",
                "pki",
                "cachedir",
                "cache",
                "acceptance_wait_time",
                "1",
                "auth_timeout",
                "5"));
        minionValues.putAll(Fleet.RECON_YAML); // back soon after each of the master's restarts
        if (kind == TransportKind.TCP) {
            minionValues.put("tcp_port", ports.group(1));
        } else {
            minionValues.put("ret_port", ports.group(1));
            minionValues.put("publish_port", ports.group(2));
        }

        // The minion's steps: each in a minion of its own, killed there, then started as a daemon again.
        Map<Step, Path> minions = new LinkedHashMap<>();
        Map<Step, Process> rotations = new LinkedHashMap<>();
        int key = 191;
        for (Step step : MINION_STEPS) {
            Path minion = minion(step.name(), minionValues, key++);
            Files.createFile(crashDir(minion).resolve(step.name()));
            minions.put(step, minion);
            rotations.put(step, start("brine-minion", minion, "rotate.out", "--rotate-key"));
        }
        Map<Step, PublicKey> expected = new LinkedHashMap<>();
        Map<Step, Process> restarts = new LinkedHashMap<>();
        for (Step step : MINION_STEPS) {
            Path minion = minions.get(step);
            // Signed in first, then a new key pair made: each its own wait on a loaded machine.
            awaitOutput(rotations.get(step), minion.resolve("rotate.out"), "accepted by the master");
            killAtCrashPoint(rotations.get(step), minion.resolve("rotate.out"), step.name());
            // minion.pub is the old key at every step: the switch rewrites it last.
            PublicKey old = publicKey(minion);
            Path newFile = minion.resolve("pki").resolve(MinionKeyring.NEW_PRIVATE_FILE);
            PublicKey fresh = privateKey(
                    Files.exists(newFile) ? newFile : minion.resolve("pki").resolve(MinionKeys.PRIVATE_FILE));
            assertThat(fresh).as(step.name()).isNotEqualTo(old);
            assertThat(acceptedKey(step.name())).as(step.name()).isEqualTo(step.rotated() ? fresh : old);
            expected.put(step, step.rotated() ? fresh : old);
            restarts.put(step, start("brine-minion", minion, "restart.out"));
        }
        for (Step step : MINION_STEPS) {
            assertSignedInWith(step.name(), minions.get(step), restarts.get(step), expected.get(step));
        }

        // The master's steps, in turn on one minion's rotation: killed at each, started again, armed at the next.
        Path minion = minion("rotating", minionValues, key);
        PublicKey old = publicKey(minion);
        arm(MASTER_STEPS.get(0));
        Process rotation = start("brine-minion", minion, "rotate.out", "--rotate-key");
        awaitOutput(rotation, minion.resolve("rotate.out"), "accepted by the master");
        for (int i = 0; i < MASTER_STEPS.size(); i++) {
            Step step = MASTER_STEPS.get(i);
            killAtCrashPoint(master, masterDir.resolve("master-" + masterLaunches + ".out"), step.name());
            PublicKey fresh = privateKey(minion.resolve("pki").resolve(MinionKeyring.NEW_PRIVATE_FILE));
            assertThat(acceptedKey("rotating")).as(step.name()).isEqualTo(step.rotated() ? fresh : old);
            if (i + 1 < MASTER_STEPS.size()) {
                arm(MASTER_STEPS.get(i + 1));
            }
            startMaster();
        }
        assertThat(rotation.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(rotation.exitValue())
                .as(Files.readString(minion.resolve("rotate.out")))
                .isZero();
        PublicKey rotated = publicKey(minion);
        assertThat(rotated).isNotEqualTo(old);
        assertSignedInWith("rotating", minion, start("brine-minion", minion, "restart.out"), rotated);
    }

    /**
     * Starts the master with its crash points and waits until it serves, as long as a cluster test's master may take
     * ({@link ClusterMasterProcess#START_WAIT}: a start is CPU, and the two transports start theirs at once); its
     * ports.
     */
    private Matcher startMaster() throws Exception {
        masterLaunches++;
        Path log = masterDir.resolve("master-" + masterLaunches + ".out");
        master = start("brine-master", masterDir, log.getFileName().toString());
        Process launched = master;
        await().atMost(ClusterMasterProcess.START_WAIT).until(() -> {
            assertThat(launched.isAlive()).as("master exited: %s", read(log)).isTrue();
            return SERVING.matcher(read(log)).find();
        });
        Matcher serving = SERVING.matcher(read(log));
        assertThat(serving.find()).isTrue();
        return serving;
    }

    private void arm(Step step) throws IOException {
        Files.createFile(crashDir(masterDir).resolve(step.name()));
    }

    private Path minion(String id, Map<String, String> values, int key) throws Exception {
        Map<String, String> withId = new LinkedHashMap<>(values);
        withId.put("id", id);
        Path minion = MetricsEndpointIT.config(dir.resolve(id), "minion.yaml", withId);
        Fleet.seedKey(minion.resolve("pki"), key);
        Files.createDirectories(crashDir(minion));
        return minion;
    }

    private static Path crashDir(Path configDir) {
        return configDir.resolve("crash");
    }

    private Process start(String launcher, Path configDir, String output, String... options) throws IOException {
        List<String> command = new ArrayList<>(
                List.of("bash", ROOT.resolve("bin").resolve(launcher).toString(), "-c", configDir.toString()));
        command.addAll(List.of(options));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(configDir.resolve(output).toFile())
                .redirectErrorStream(true);
        // C1 alone, as the suite launches every daemon (src-it/pom.xml), but for a minion that makes a new key pair
        // (--rotate-key): C2 makes it in a fraction of the time.
        String tier = List.of(options).contains("--rotate-key") ? "-XX:TieredStopAtLevel=4" : "-XX:TieredStopAtLevel=1";
        builder.environment().put("BRINE_JAVA_OPTS", tier + " -D" + CrashPoints.PROPERTY + "=" + crashDir(configDir));
        Process process = builder.start();
        processes.add(process);
        return process;
    }

    /** Waits until {@code process} holds at {@code step}, then {@code kill -9}. */
    private static void killAtCrashPoint(Process process, Path output, String step) throws Exception {
        awaitOutput(process, output, "crash point reached: " + step);
        Process kill = new ProcessBuilder("kill", "-9", Long.toString(process.pid())).start();
        assertThat(kill.waitFor()).isZero();
        assertThat(process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    /** Waits for {@code text} from a process this test started: its start is part of the wait, as a master's is. */
    private static void awaitOutput(Process process, Path output, String text) throws IOException {
        try {
            await().atMost(ClusterMasterProcess.START_WAIT).until(() -> {
                assertThat(process.isAlive())
                        .as("exited before %s: %s", text, read(output))
                        .isTrue();
                return read(output).contains(text);
            });
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("never printed " + text + ":\n" + read(output), e);
        }
    }

    /**
     * The minion is signed in with {@code key}, the one key the master accepted for it (in minions/, not waiting nor
     * rejected); minion.pem and minion.pub hold it and no new key is left beside them.
     */
    private void assertSignedInWith(String id, Path minion, Process restarted, PublicKey key) throws Exception {
        // Its own words: status.json may still say what the killed process last wrote.
        awaitOutput(restarted, minion.resolve("restart.out"), "accepted by the master");
        assertThat(acceptedKey(id)).as(id).isEqualTo(key);
        assertThat(privateKey(minion.resolve("pki").resolve(MinionKeys.PRIVATE_FILE)))
                .as(id)
                .isEqualTo(key);
        assertThat(publicKey(minion)).as(id).isEqualTo(key);
        assertThat(minion.resolve("pki").resolve(MinionKeyring.NEW_PRIVATE_FILE))
                .doesNotExist();
        for (String state : List.of("minions_pre", "minions_rejected")) {
            assertThat(masterDir.resolve("pki").resolve(state).resolve(id))
                    .as(id)
                    .doesNotExist();
        }
        // A new key offered at sign-in that the master never rotated to is denied there, as any second key under an
        // accepted id is; the minion dropped it.
        Path denied = masterDir.resolve("pki/minions_denied").resolve(id);
        if (Files.exists(denied)) {
            assertThat(Pem.readPublicKey(Files.readString(denied))).as(id).isNotEqualTo(key);
        }
    }

    private PublicKey acceptedKey(String id) throws Exception {
        return Pem.readPublicKey(
                Files.readString(masterDir.resolve("pki/minions").resolve(id)));
    }

    private static PublicKey publicKey(Path minion) throws Exception {
        return Pem.readPublicKey(Files.readString(minion.resolve("pki").resolve(MinionKeys.PUBLIC_FILE)));
    }

    private static PublicKey privateKey(Path file) throws Exception {
        return Pem.readPrivateKey(Files.readString(file)).getPublic();
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }
}

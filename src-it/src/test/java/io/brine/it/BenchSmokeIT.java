package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.protocol.testing.TestKeys;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/brine-bench works: a tiny swarm against a real master, auth and test.ping, figures in the JSON. The figures
 * themselves are not checked here (a build machine is not a benchmark machine); BENCHMARKS.md holds real runs.
 */
class BenchSmokeIT {

    private static final Path ROOT =
            Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();

    private static final int MINIONS = 5;
    private static final int WARMUP_MINIONS = 2;
    /** What the bench says when it makes the one key the test leaves out of its cache. */
    private static final String GENERATED = ": generating 1 RSA-2048 keys on ";

    @TempDir
    Path tmp;

    /** Runs bin/brine-bench with {@code args} and the shared options; its output, after checking it exited 0. */
    private String bench(Path json, String... args) throws Exception {
        Path output = tmp.resolve("bench.out");
        // The key cache (--keys-dir: one PKCS#1 PEM file per simulated minion, 00000.pem, ...) holds the suite's test
        // keys but the last, which the bench makes (GENERATED, below): seven RSA-2048 key generations were the first
        // run's first 20 s on a loaded machine, in every fresh clone.
        Path keys = tmp.resolve("bench-keys");
        Files.createDirectories(keys);
        for (int i = 0; i < MINIONS + WARMUP_MINIONS - 1; i++) {
            Files.writeString(keys.resolve(String.format("%05d.pem", i)), TestKeys.privatePem(i));
        }
        // The least each option allows that still runs every step: two warm-up minions (the floor), one ping round,
        // RSA timed for a moment, no settling pauses (--no-settle), and the bench's master with C1 alone, as the suite
        // launches every daemon (src-it/pom.xml: C2 compiling beside a master that lives for seconds doubled the CPU
        // of its start; seven minions' auths and one master key are little RSA work). What is left of a run is its
        // JVMs and its waits for the minions.
        List<String> command = new ArrayList<>(List.of(
                "bash",
                ROOT.resolve("bin/brine-bench").toString(),
                "--minions",
                Integer.toString(MINIONS),
                "--ping-rounds",
                "1",
                "--rsa-seconds",
                "0.05",
                "--warmup-minions",
                Integer.toString(WARMUP_MINIONS),
                "--no-settle",
                "--master-opts=-XX:TieredStopAtLevel=1",
                "--keys-dir",
                keys.toString(),
                "--json",
                json.toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        // Not the C1 alone the suite gives the daemons it launches (src-it/pom.xml) for the bench's own JVM: it signs,
        // times and makes RSA keys; with C1 alone, on a loaded machine, one private op took a second and the run
        // outlasted its 5 minutes. Its master gets C1 alone from --master-opts, above.
        builder.environment().remove("BRINE_JAVA_OPTS");
        Process bench = builder.start();
        // The output goes to a file, so this wait is what bounds the run (reading a pipe to its end would not be).
        boolean exited = bench.waitFor(5, TimeUnit.MINUTES);
        if (!exited) {
            bench.descendants().forEach(ProcessHandle::destroyForcibly);
            bench.destroyForcibly();
        }
        String out = Files.readString(output, StandardCharsets.UTF_8);
        assertThat(exited)
                .as("brine-bench still running after 5 minutes:%n%s", out)
                .isTrue();
        assertThat(bench.exitValue()).as(out).isZero();
        assertThat(out).contains(GENERATED);
        return out;
    }

    /**
     * Brine minions with the swarm's default ZeroMQ client (the Netty one), and the master's key rotated at the end
     * (masterkey: a few seconds, the new key's generation and the master's one-second tick; keyrotate is not run here,
     * it waits for every minion's next heartbeat, 30 s or more). The other client, the minion's own
     * jeromq, is the Salt run's: the client is chosen below the protocol (SwarmTransports), so each client and each
     * protocol runs once, in two bench runs instead of three (each starts a master, a warm-up and a swarm JVM).
     */
    @Test
    void fiveMinionsAuthenticateAndAnswerAPing() throws Exception {
        Path json = tmp.resolve("bench.json");
        String out = bench(json, "--scenarios", "auth,ping,masterkey");

        JsonNode figures = new ObjectMapper().readTree(json.toFile());
        assertThat(figures.at("/limits/rsa2048_private_ops_per_s").asDouble()).isPositive();
        assertThat(figures.at("/limits/rsa2048_public_ops_per_s").asDouble()).isPositive();
        assertThat(figures.at("/minions").asInt()).isEqualTo(5);
        assertThat(figures.at("/protocol").asText()).isEqualTo("brine");
        assertThat(figures.at("/zmq_client").asText()).as("the default").isEqualTo("netty");
        assertThat(figures.at("/scenarios/auth/auths_per_s").asDouble()).isPositive();
        assertThat(figures.at("/scenarios/auth/master_cpu_ms_per_auth").isNumber())
                .isTrue();
        assertThat(figures.at("/scenarios/ping/returned").asInt()).isEqualTo(5);
        assertThat(figures.at("/scenarios/ping/last_ms").asDouble()).isPositive();
        assertThat(figures.at("/scenarios/masterkey/pinned").asInt())
                .as("every minion walked the chain and pinned the new master key")
                .isEqualTo(5);
        assertThat(figures.at("/failures").size()).as(out).isZero();
        assertThat(out).contains("the swarm's ZeroMQ client: netty)", "auth ", "ping ", "masterkey ");
    }

    @Test
    void fiveSimulatedSaltMinionsSignInWithSaltsAuthTakeSaltPublicationsAndReturnThroughSaltsReturn() throws Exception {
        Path json = tmp.resolve("bench.json");
        String out = bench(
                json,
                "--protocol",
                "salt",
                "--transport",
                "zeromq",
                "--scenarios",
                "auth,rotate,ping,publish",
                "--publications",
                "10",
                "--zmq-client",
                "jeromq");

        JsonNode figures = new ObjectMapper().readTree(json.toFile());
        assertThat(figures.at("/protocol").asText()).isEqualTo("salt");
        assertThat(figures.at("/zmq_client").asText()).isEqualTo("jeromq");
        assertThat(figures.at("/command").asText()).contains("--zmq-client jeromq");
        assertThat(figures.at("/master_config").asText()).contains("salt_minions: true");
        assertThat(figures.at("/minions").asInt()).isEqualTo(5);
        assertThat(figures.at("/scenarios/auth/auths_per_s").asDouble()).isPositive();
        assertThat(figures.at("/scenarios/auth/reauth/auths_per_s").asDouble()).isPositive();
        // Each return came through Salt's _return into the job cache, where the publisher reads it.
        assertThat(figures.at("/scenarios/ping/returned").asInt()).isEqualTo(5);
        assertThat(figures.at("/scenarios/publish/delivered").asLong()).isEqualTo(50);
        assertThat(figures.at("/scenarios/rotate/skipped").isTextual()).isTrue();
        assertThat(figures.at("/failures").size()).as(out).isZero();
        assertThat(out)
                .contains("simulated Salt minions", "the swarm's ZeroMQ client: jeromq)", "auth ", "ping ", "publish ");
    }
}

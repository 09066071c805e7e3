package io.brine.store.policy;

import static io.brine.store.policy.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.daemon.testing.LogCapture;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.MovableClock;
import io.brine.store.keys.PolicyVerdict;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExecutablePolicyTest {

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(Attempts.T0);
    final List<String> promoted = new CopyOnWriteArrayList<>();
    ExecutablePolicy policy;

    @AfterEach
    void tearDown() {
        if (policy != null) {
            policy.close();
        }
    }

    private Path script(String body) throws Exception {
        return script(body, "rwx------");
    }

    private Path script(String body, String mode) throws Exception {
        Path file = dir.resolve("policy");
        Files.writeString(file, "#!/bin/sh\n" + body.replace("$DIR", dir.toString()) + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    private ExecutablePolicy policy(Path executable, Duration timeout, int maxConcurrent) {
        policy = new ExecutablePolicy(executable, timeout, maxConcurrent, clock);
        policy.promoteWith((attempt, decision) -> promoted.add(attempt.id() + " " + decision.rule()));
        return policy;
    }

    private int runs() throws Exception {
        Path log = dir.resolve("runs");
        return Files.exists(log) ? Files.readAllLines(log).size() : 0;
    }

    @Test
    void anExecutableThatVanishedOrLostItsExecuteBitIsOneWarnAMinuteNamingIdSourceAndWhy() throws Exception {
        Path executable = script("exit 0");
        policy(executable, Duration.ofSeconds(10), 2);
        try (LogCapture log = LogCapture.of(ExecutablePolicy.class)) {
            Files.setPosixFilePermissions(executable, PosixFilePermissions.fromString("rw-------"));
            assertThat(policy.evaluate(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);
            assertThat(policy.evaluate(attempt("web2", 2)).verdict()).isEqualTo(PolicyVerdict.NONE);
            assertThat(log.at(Level.WARN))
                    .singleElement()
                    .asString()
                    .isEqualTo("Minion web1 ("
                            + attempt("web1", 1).remoteAddress() + "): autosign_policy not run: " + executable
                            + " is not executable: not run; the key waits for an admin");
            Files.delete(executable);
            clock.advance(ExecutablePolicy.NO_CACHE);
            policy.evaluate(attempt("web3", 3));
            assertThat(log.at(Level.WARN))
                    .hasSize(2)
                    .last()
                    .asString()
                    .contains("Minion web3 (", executable + " does not exist", "(and 1 more since the last line)");
        }
        assertThat(runs()).isZero();
    }

    @Test
    void exitZeroAcceptsInTheBackgroundPromotesAndIsRemembered() throws Exception {
        Path exe = script("cat > $DIR/stdin.json\necho \"$#:$1\" > $DIR/args\nexit 0");
        policy(exe, Duration.ofSeconds(10), 2);

        PolicyDecision first = policy.evaluate(attempt("web1", 1, Map.of("role", "web"), null, null, "10.0.0.5"));
        assertThat(first.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(first.reason()).startsWith("started");
        await().until(() -> promoted.contains("web1 autosign_policy " + exe));

        PolicyDecision retry = policy.evaluate(attempt("web1", 1));
        assertThat(retry.verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(retry.rule()).isEqualTo("autosign_policy " + exe);
        assertThat(retry.reason()).startsWith("exit 0");
        assertThat(Files.readString(dir.resolve("args"))).isEqualTo("1:web1\n");
        JsonNode input = new ObjectMapper().readTree(dir.resolve("stdin.json").toFile());
        assertThat(input.get("id").asText()).isEqualTo("web1");
        assertThat(input.get("public_key").asText()).isEqualTo(Pem.publicKeySpki(Attempts.key(1)));
        assertThat(input.get("fingerprint").asText()).isEqualTo(Attempts.fingerprint(1));
        assertThat(input.get("claims").get("role").asText()).isEqualTo("web");
        assertThat(input.get("remote_address").asText()).isEqualTo("10.0.0.5");
        assertThat(input.get("time").asText()).isEqualTo(Attempts.T0.toString());
        // The answer is for this key only.
        assertThat(policy.evaluate(attempt("web1", 2)).reason()).startsWith("started");
    }

    @Test
    void aNoIsRememberedForAMinuteSoARetryingMinionStartsNoProcess() throws Exception {
        Path exe = script("echo run >> $DIR/runs\nexit 3");
        policy(exe, Duration.ofSeconds(10), 2);

        policy.evaluate(attempt("web1", 1));
        await().until(() -> policy.evaluate(attempt("web1", 1)).reason().startsWith("exit 3"));
        for (int i = 0; i < 5; i++) {
            clock.advance(Duration.ofSeconds(10));
            assertThat(policy.evaluate(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);
        }
        assertThat(runs()).isEqualTo(1);
        assertThat(promoted).isEmpty();

        clock.advance(Duration.ofSeconds(11));
        assertThat(policy.evaluate(attempt("web1", 1)).reason()).startsWith("started");
        await().until(() -> runs() == 2);
    }

    @Test
    void aChangedExecutableIsAskedAgainAtOnce() throws Exception {
        Path exe = script("exit 1");
        policy(exe, Duration.ofSeconds(10), 2);
        policy.evaluate(attempt("web1", 1));
        await().until(() -> policy.evaluate(attempt("web1", 1)).reason().startsWith("exit 1"));

        script("exit 0 # the fixed version");
        assertThat(policy.evaluate(attempt("web1", 1)).reason()).startsWith("started");
        await().until(() -> !promoted.isEmpty());
    }

    @Test
    void aHangIsKilledAtItsTimeoutWithWhatItStartedAndCountsAsNo() throws Exception {
        Path exe = script("sleep 30 &\necho $! > $DIR/child\nsleep 30");
        policy(exe, Duration.ofSeconds(1), 2);

        PolicyDecision decision = policy.check(attempt("web1", 1));

        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(decision.reason()).contains("timed out after 1 s: killed");
        long child = Long.parseLong(Files.readString(dir.resolve("child")).strip());
        await().until(() -> ProcessHandle.of(child).map(h -> !h.isAlive()).orElse(true));
        try (PolicyProcess process = new PolicyProcess(exe, Duration.ofSeconds(1), PolicyProcess.SETSID)) {
            PolicyProcess.Run run = process.run(attempt("web1", 1));
            assertThat(run.killed()).isTrue();
            assertThat(run.accepted()).isFalse();
            assertThat(run.exitCode()).isEqualTo(-1);
        }
    }

    /** Alive as /proc sees it: a zombie (killed, not reaped yet by whoever adopted it) is dead. */
    private static boolean alive(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).charAt(0) != 'Z';
        } catch (IOException e) {
            return false;
        }
    }

    /** A policy that double-forks a long sleep (reparented to init: no longer its descendant), then hangs. */
    private Path doubleForking(String then) throws Exception {
        return script("( sleep 300 & echo $! > $DIR/grandchild.tmp; mv $DIR/grandchild.tmp $DIR/grandchild ) &\n"
                + "while [ ! -e $DIR/grandchild ]; do sleep 0.05; done\n" + then);
    }

    @Test
    void aDoubleForkedGrandchildIsKilledAtTheTimeoutWithItsGroup() throws Exception {
        Path exe = doubleForking("sleep 300");
        policy(exe, Duration.ofSeconds(1), 1);

        PolicyDecision decision = policy.check(attempt("web1", 1));

        assertThat(decision.reason()).contains("timed out after 1 s: killed");
        long grandchild =
                Long.parseLong(Files.readString(dir.resolve("grandchild")).strip());
        await().until(() -> !alive(grandchild));
    }

    @Test
    void whatARunLeavesBehindIsKilledWhenItExits() throws Exception {
        Path exe = doubleForking("exit 0");
        policy(exe, Duration.ofSeconds(30), 1);

        assertThat(policy.check(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        long grandchild =
                Long.parseLong(Files.readString(dir.resolve("grandchild")).strip());
        await().until(() -> !alive(grandchild));
    }

    @Test
    void withoutSetsidNothingRunsAndTheAnswerSaysWhy() throws Exception {
        Path exe = script("echo ran > $DIR/ran\nexit 0");
        try (PolicyProcess process = new PolicyProcess(exe, Duration.ofSeconds(10), Optional.empty())) {
            PolicyProcess.Run run = process.run(attempt("web1", 1));
            assertThat(run.accepted()).isFalse();
            assertThat(run.reason()).contains("setsid (util-linux) is not installed");
            assertThat(process.problem()).isPresent();
        }
        assertThat(dir.resolve("ran")).doesNotExist();
    }

    @Test
    void theCallerGetsItsAnswerWhileTheRunIsStillGoing() throws Exception {
        // The run cannot end before the test creates "go": an evaluate that waited for it would never say "started".
        Path exe = script("while [ ! -e $DIR/go ]; do sleep 0.05; done\nexit 0");
        policy(exe, Duration.ofSeconds(30), 1);

        assertThat(policy.evaluate(attempt("web1", 1)).reason()).startsWith("started");
        assertThat(policy.evaluate(attempt("web2", 2)).reason()).startsWith("busy");
        assertThat(policy.evaluate(attempt("web1", 1)).reason()).startsWith("running");
        assertThat(promoted).isEmpty();

        Files.writeString(dir.resolve("go"), "");
        await().until(() -> promoted.contains("web1 autosign_policy " + exe));
        await().until(() -> policy.evaluate(attempt("web2", 2)).reason().startsWith("started"));
    }

    @Test
    void closingKillsWhatRuns() throws Exception {
        Path exe = script("echo $$ > $DIR/pid.tmp\nmv $DIR/pid.tmp $DIR/pid\nsleep 30");
        policy(exe, Duration.ofSeconds(30), 1);
        policy.evaluate(attempt("web1", 1));
        await().until(() -> Files.exists(dir.resolve("pid")));
        long pid = Long.parseLong(Files.readString(dir.resolve("pid")).strip());
        policy.close();
        await().until(() -> ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true));
        assertThat(promoted).isEmpty();
    }

    @Test
    void aCrashCountsAsNo() throws Exception {
        Path exe = script("kill -SEGV $$");
        policy(exe, Duration.ofSeconds(10), 2);
        PolicyDecision decision = policy.check(attempt("web1", 1));
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(decision.reason()).startsWith("exit 139");
    }

    @Test
    void anExecutableThatDoesNotReadItsInputStillDecides() throws Exception {
        policy(script("exit 0"), Duration.ofSeconds(10), 2);
        assertThat(policy.check(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
    }

    @Test
    void anExecutableGroupOrOthersCanWriteIsNeverRun() throws Exception {
        for (String mode : new String[] {"rwxrwx---", "rwx---rwx"}) {
            Path exe = script("echo run >> $DIR/runs\nexit 0", mode);
            policy(exe, Duration.ofSeconds(10), 2);
            PolicyDecision decision = policy.evaluate(attempt("web1", 1));
            assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
            assertThat(decision.reason()).contains("is writable by").endsWith("not run");
            assertThat(policy.check(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);
            policy.close();
        }
        assertThat(runs()).isZero();
    }

    @Test
    void aFileThatIsNotExecutableIsNeverRun() throws Exception {
        Path exe = script("exit 0", "rw-------");
        policy(exe, Duration.ofSeconds(10), 2);
        assertThat(policy.evaluate(attempt("web1", 1)).reason()).contains("is not executable");
        policy(dir.resolve("missing"), Duration.ofSeconds(10), 2);
        assertThat(policy.evaluate(attempt("web1", 1)).reason()).contains("does not exist");
        policy(dir, Duration.ofSeconds(10), 2);
        assertThat(policy.evaluate(attempt("web1", 1)).reason()).contains("not a regular file");
    }

    @Test
    void outputOverTheCapIsANoEvenWithExitZeroAndTheRunIsKilled() throws Exception {
        Path exe = script("head -c 100000000 /dev/zero | tr '\\0' a\nexit 0");
        try (PolicyProcess process = new PolicyProcess(exe, Duration.ofSeconds(60), PolicyProcess.SETSID)) {
            PolicyProcess.Run run = process.run(attempt("web1", 1));
            assertThat(run.accepted()).isFalse();
            assertThat(run.killed()).isTrue();
            assertThat(run.reason()).contains("more than " + PolicyProcess.MAX_OUTPUT + " bytes of output");
            assertThat(run.output()).startsWith("aaaa").contains(" more bytes dropped]");
        }
        policy(exe, Duration.ofSeconds(60), 1);
        assertThat(policy.check(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.NONE);
    }

    @Test
    void outputUpToTheCapIsKept() throws Exception {
        Path exe = script("head -c " + PolicyProcess.MAX_OUTPUT + " /dev/zero | tr '\\0' a\nexit 0");
        try (PolicyProcess process = new PolicyProcess(exe, Duration.ofSeconds(10), PolicyProcess.SETSID)) {
            PolicyProcess.Run run = process.run(attempt("web1", 1));
            assertThat(run.accepted()).isTrue();
            assertThat(run.output()).hasSize(PolicyProcess.MAX_OUTPUT);
        }
    }

    @Test
    void noShellAndNoInheritedEnvironment() throws Exception {
        Path exe = script("env > $DIR/env\nexit 0");
        policy(exe, Duration.ofSeconds(10), 2);
        assertThat(policy.check(attempt("web1", 1)).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(Files.readAllLines(dir.resolve("env")))
                .allMatch(line -> line.startsWith("PATH=")
                        || line.startsWith("LANG=")
                        || line.startsWith("PWD=")
                        || line.startsWith("SHLVL=")
                        || line.startsWith("_="));
    }
}

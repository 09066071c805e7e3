package io.brine.minion.functions.builtin;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.minion.functions.FunctionAccess;
import io.brine.minion.functions.FunctionCall;
import io.brine.minion.functions.FunctionRegistry;
import io.brine.minion.functions.FunctionResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

@EnabledOnOs(OS.LINUX)
class CmdFunctionsTest {

    private static final int CAP = 4096;

    @TempDir
    Path dir;

    private FunctionResult call(String fun, String cmd, Map<String, Object> kwargs) {
        FunctionRegistry registry = new FunctionRegistry(
                BuiltinFunctions.create(new BuiltinFunctions.Settings(CAP, dir, "dev")), FunctionAccess.allowAll());
        return registry.call(fun, FunctionCall.of(List.of(cmd), kwargs));
    }

    private FunctionResult run(String cmd, Object... kwargs) {
        Map<String, Object> map = new HashMap<>();
        for (int i = 0; i < kwargs.length; i += 2) {
            map.put((String) kwargs[i], kwargs[i + 1]);
        }
        return call("cmd.run", cmd, map);
    }

    @Test
    void withoutAShellSemicolonsPipesVariablesAndGlobsAreLiteral() throws IOException {
        Files.createFile(dir.resolve("file1"));
        assertThat(run("echo a; echo b | cat $HOME * && x"))
                .isEqualTo(new FunctionResult("a; echo b | cat $HOME * && x", 0));
    }

    @Test
    void withoutAShellQuotesGroupWords() {
        assertThat(run("printf '%s|' 'a b' \"c d\" e\\ f").value()).isEqualTo("a b|c d|e f|");
    }

    @Test
    void withShellTrueTheShellInterpretsTheCommand() throws IOException {
        Files.createFile(dir.resolve("file1"));
        assertThat(run("echo a; echo $((1+2)) | cat; echo *", "shell", true).value())
                .isEqualTo("a\n3\nfile1");
    }

    @Test
    void theRetcodeIsTheExitCodeAndTheOutputInterleavesStdoutAndStderr() {
        FunctionResult result = run("echo out; echo err >&2; exit 3", "shell", "true");
        assertThat(result.retcode()).isEqualTo(3);
        assertThat(result.success()).isFalse();
        assertThat(result.value()).isEqualTo("out\nerr");
    }

    @Test
    void runAllKeepsStdoutAndStderrApart() {
        FunctionResult result = call("cmd.run_all", "echo out; echo err >&2; exit 2", Map.of("shell", true));
        assertThat(result.retcode()).isEqualTo(2);
        @SuppressWarnings("unchecked")
        Map<String, Object> value = (Map<String, Object>) result.value();
        assertThat(value)
                .containsEntry("stdout", "out")
                .containsEntry("stderr", "err")
                .containsEntry("retcode", 2L);
        assertThat((Long) value.get("pid")).isPositive();
    }

    @Test
    void retcodeReturnsTheExitCode() {
        assertThat(call("cmd.retcode", "false", Map.of())).isEqualTo(new FunctionResult(1L, 1));
    }

    @Test
    void aMissingProgramIsRetcode127() {
        FunctionResult result = run("brine-no-such-program --help");
        assertThat(result.retcode()).isEqualTo(FunctionResult.NOT_FOUND);
        assertThat((String) result.value()).startsWith("cannot run brine-no-such-program");
    }

    @Test
    void cwdSetsTheWorkingDirectoryAndMustBeAnAbsoluteDirectory() throws IOException {
        Path sub = Files.createDirectory(dir.resolve("sub"));
        assertThat(run("pwd", "cwd", sub.toString()).value())
                .isEqualTo(sub.toRealPath().toString());
        assertThat(run("pwd").value()).isEqualTo(dir.toRealPath().toString());
        assertThat(run("pwd", "cwd", "sub").value()).isEqualTo("cwd must be an absolute path, not sub");
        assertThat(run("pwd", "cwd", dir.resolve("absent").toString()).retcode())
                .isEqualTo(1);
    }

    @Test
    void stdinIsFedToTheCommandOrClosedSoItCannotHang() {
        assertThat(run("cat", "stdin", "hello\nworld\n").value()).isEqualTo("hello\nworld");
        assertThat(run("cat", "timeout", 10)).isEqualTo(new FunctionResult("", 0));
    }

    @Test
    void envAddsAndRemovesVariables() {
        assertThat(run("printenv BRINE_TEST", "env", Map.of("BRINE_TEST", "x y"))
                        .value())
                .isEqualTo("x y");
        Map<String, Object> unset = new HashMap<>();
        unset.put("HOME", null);
        assertThat(run("printenv HOME", "env", unset).retcode()).isEqualTo(1);
        assertThat(run("true", "env", Map.of("A=B", "x")).value()).isEqualTo("env: invalid variable name 'A=B'");
    }

    @Test
    void typosAndUnquotedCommandsAreRefused() {
        assertThat((String) run("true", "timout", 5).value()).startsWith("unknown keyword argument timout");
        FunctionRegistry registry = new FunctionRegistry(
                BuiltinFunctions.create(BuiltinFunctions.Settings.defaults()), FunctionAccess.allowAll());
        assertThat(registry.call("cmd.run", FunctionCall.of(List.of("ls", "-l"), Map.of()))
                        .retcode())
                .isEqualTo(1);
        assertThat((String) run("echo 'unterminated").value()).contains("unterminated single quote");
    }

    @Test
    void aTimeoutKillsTheCommandWithRetcode124() {
        // An hour's sleep: that it answers at all (within the suite's wait) shows the timeout killed it.
        CompletableFuture<FunctionResult> call =
                CompletableFuture.supplyAsync(() -> call("cmd.run_all", "sleep 3600", Map.of("timeout", 0.5)));
        await().until(call::isDone);
        FunctionResult result = call.join();
        assertThat(result.retcode()).isEqualTo(FunctionResult.TIMEOUT);
        Map<?, ?> value = (Map<?, ?>) result.value();
        assertThat((String) value.get("stderr")).contains("timed out after 0.5 s");
        long pid = (Long) value.get("pid");
        await().until(() -> !running(pid));
    }

    @Test
    void aTimeoutKillsTheWholeProcessTree() throws IOException {
        FunctionResult result = call(
                "cmd.run",
                "sleep 30 & echo $! > bg.pid; echo $$ > sh.pid; echo started; sleep 30",
                Map.of("shell", true, "timeout", 0.5));
        assertThat(result.retcode()).isEqualTo(FunctionResult.TIMEOUT);
        assertThat((String) result.value()).startsWith("started\n[brine: timed out after 0.5 s");
        long background = Long.parseLong(Files.readString(dir.resolve("bg.pid")).strip());
        long shell = Long.parseLong(Files.readString(dir.resolve("sh.pid")).strip());
        await().until(() -> !running(background) && !running(shell));
    }

    @Test
    void aCommandIsOverWhenItsProcessExitsAndItsBackgroundChildrenAreLeftAlone() throws IOException {
        // The child holds the command's stdout for an hour, and the timeout is an hour: that the call answers at all
        // (within the suite's wait) shows it ended with the shell, not with the child's output or the timeout.
        CompletableFuture<FunctionResult> call = CompletableFuture.supplyAsync(
                () -> run("sleep 3600 & echo $! > bg.pid; echo started", "shell", true, "timeout", 3600));
        try {
            await().until(call::isDone);
            assertThat(call.join()).isEqualTo(new FunctionResult("started", 0));
            long background =
                    Long.parseLong(Files.readString(dir.resolve("bg.pid")).strip());
            assertThat(running(background))
                    .as("a daemon started with & is the admin's business")
                    .isTrue();
        } finally {
            if (Files.exists(dir.resolve("bg.pid"))) {
                ProcessHandle.of(Long.parseLong(
                                Files.readString(dir.resolve("bg.pid")).strip()))
                        .ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    @Test
    void aTimeoutAlsoKillsDescendantsThatWereReparentedAway() throws IOException {
        FunctionResult result =
                run("(sleep 30 & echo $! > orphan.pid); echo started; sleep 30", "shell", true, "timeout", 0.5);
        assertThat(result.retcode()).isEqualTo(FunctionResult.TIMEOUT);
        assertThat((String) result.value()).startsWith("started\n");
        long orphan = Long.parseLong(Files.readString(dir.resolve("orphan.pid")).strip());
        await().until(() -> !running(orphan));
    }

    @Test
    void anInterruptedJobKillsItsCommandAndTheCommandsChildren() throws Exception {
        AtomicReference<FunctionResult> result = new AtomicReference<>();
        Thread job =
                new Thread(() -> result.set(run("echo $$ > sh.pid; sleep 30 & echo $! > bg.pid; wait", "shell", true)));
        job.start();
        Path bgPid = dir.resolve("bg.pid");
        await().until(() -> Files.exists(bgPid) && Files.readString(bgPid).endsWith("\n"));
        job.interrupt();
        job.join(WAIT.toMillis());
        assertThat(job.isAlive()).isFalse();
        assertThat(result.get()).isEqualTo(new FunctionResult("cmd.run was interrupted", 1));
        long shell = Long.parseLong(Files.readString(dir.resolve("sh.pid")).strip());
        long background = Long.parseLong(Files.readString(bgPid).strip());
        await().until(() -> !running(shell) && !running(background));
    }

    @Test
    void outputIsCappedWithAMarker() {
        FunctionResult result = run("head -c 100000 /dev/zero | tr '\\0' a", "shell", true);
        assertThat(result.retcode()).isZero();
        String value = (String) result.value();
        assertThat(value)
                .startsWith("aaaa")
                .hasSizeLessThan(CAP + 200)
                .endsWith("[brine: output truncated: kept the first 4096 of 100000 bytes]");
    }

    @Test
    void endlessOutputIsCappedAndEndsAtTheTimeout() {
        FunctionResult result = run("yes", "timeout", 0.5);
        assertThat(result.retcode()).isEqualTo(FunctionResult.TIMEOUT);
        assertThat((String) result.value())
                .hasSizeLessThan(CAP + 300)
                .contains("[brine: output truncated")
                .contains("timed out");
    }

    /** A zombie (killed, not yet reaped by an init that may never reap it) counts as gone. */
    private static boolean running(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state != 'Z' && state != 'X';
        } catch (IOException e) {
            return false;
        }
    }
}

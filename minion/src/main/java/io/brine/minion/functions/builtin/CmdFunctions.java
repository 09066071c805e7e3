package io.brine.minion.functions.builtin;

import io.brine.minion.functions.FunctionCall;
import io.brine.minion.functions.FunctionException;
import io.brine.minion.functions.FunctionResult;
import io.brine.minion.functions.MinionFunction;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code cmd.run}, {@code cmd.run_all} and {@code cmd.retcode}: run a command, Salt style. Without
 * {@code shell=true} the command line is only split into words ({@link CommandLine}), so {@code ;}, {@code |},
 * {@code $VAR} and {@code *} reach the program as they are; with {@code shell=true} it runs under
 * {@code /bin/sh -c}. As in Salt, the job's retcode is the command's exit code. The command is over when its own
 * process exits (background children are not waited for); at its timeout ({@code timeout=}, at most what is left
 * of the job's) its whole process tree is killed and the retcode is 124. See {@link CommandRunner}.
 */
final class CmdFunctions {

    private static final String SHELL = "/bin/sh";
    private static final Set<String> KEYWORDS = Set.of("cmd", "cwd", "timeout", "shell", "env", "stdin", "rstrip");
    private static final String PARAMETERS =
            " CMD [cwd=DIR] [timeout=SECONDS] [shell=BOOL] [env={NAME: VALUE}]" + " [stdin=TEXT] [rstrip=BOOL]";

    private final CommandRunner runner;
    private final Path defaultCwd;

    CmdFunctions(CommandRunner runner, Path defaultCwd) {
        this.runner = runner;
        this.defaultCwd = defaultCwd;
    }

    List<MinionFunction> functions() {
        return List.of(
                MinionFunction.of(
                        "cmd.run",
                        "cmd.run" + PARAMETERS + ": the command's output, stdout and stderr"
                                + " interleaved; retcode = its exit code",
                        this::run),
                MinionFunction.of(
                        "cmd.run_all",
                        "cmd.run_all" + PARAMETERS + ": {pid, retcode, stdout, stderr};" + " retcode = its exit code",
                        this::runAll),
                MinionFunction.of(
                        "cmd.retcode", "cmd.retcode" + PARAMETERS + ": the command's exit code", this::retcode));
    }

    private Object run(FunctionCall call) throws Exception {
        Invocation invocation = parse(call, true);
        CommandRunner.Completed done = runner.run(invocation.command());
        String output = invocation.rstrip() ? done.stdout().stripTrailing() : done.stdout();
        if (done.timedOut()) {
            return new FunctionResult(appendLine(output, timeoutMarker(invocation)), FunctionResult.TIMEOUT);
        }
        return new FunctionResult(output, done.exitCode());
    }

    private Object runAll(FunctionCall call) throws Exception {
        Invocation invocation = parse(call, false);
        CommandRunner.Completed done = runner.run(invocation.command());
        int retcode = done.timedOut() ? FunctionResult.TIMEOUT : done.exitCode();
        String stdout = invocation.rstrip() ? done.stdout().stripTrailing() : done.stdout();
        String stderr = invocation.rstrip() ? done.stderr().stripTrailing() : done.stderr();
        if (done.timedOut()) {
            stderr = appendLine(stderr, timeoutMarker(invocation));
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("pid", done.pid());
        result.put("retcode", (long) retcode);
        result.put("stdout", stdout);
        result.put("stderr", stderr);
        return new FunctionResult(result, retcode);
    }

    private Object retcode(FunctionCall call) throws Exception {
        Invocation invocation = parse(call, false);
        CommandRunner.Completed done = runner.run(invocation.command());
        int retcode = done.timedOut() ? FunctionResult.TIMEOUT : done.exitCode();
        return new FunctionResult((long) retcode, retcode);
    }

    private record Invocation(CommandRunner.Command command, boolean rstrip) {}

    private Invocation parse(FunctionCall call, boolean mergeOutput) throws FunctionException {
        call.checkArguments(1, KEYWORDS);
        String line = call.requireString(0, "cmd");
        boolean shell = call.bool(FunctionCall.KEYWORD_ONLY, "shell").orElse(false);
        List<String> argv;
        if (shell) {
            argv = List.of(SHELL, "-c", line);
        } else {
            try {
                argv = CommandLine.split(line);
            } catch (IllegalArgumentException e) {
                throw new FunctionException(
                        "cannot split the command into arguments: " + e.getMessage() + " (or pass shell=true)");
            }
        }
        Duration timeout = call.remaining();
        var requested = call.number(FunctionCall.KEYWORD_ONLY, "timeout");
        if (requested.isPresent()) {
            if (requested.get() <= 0) {
                throw new FunctionException("timeout must be a positive number of seconds");
            }
            Duration asked = Duration.ofNanos((long) Math.min(requested.get() * 1e9, Long.MAX_VALUE));
            timeout = asked.compareTo(timeout) < 0 ? asked : timeout;
        }
        Map<String, String> env = environment(call);
        String stdin = call.string(FunctionCall.KEYWORD_ONLY, "stdin").orElse(null);
        boolean rstrip = call.bool(FunctionCall.KEYWORD_ONLY, "rstrip").orElse(true);
        return new Invocation(new CommandRunner.Command(argv, cwd(call), env, stdin, timeout, mergeOutput), rstrip);
    }

    private Path cwd(FunctionCall call) throws FunctionException {
        var given = call.string(FunctionCall.KEYWORD_ONLY, "cwd");
        if (given.isEmpty()) {
            return defaultCwd;
        }
        Path cwd;
        try {
            cwd = Path.of(given.get());
        } catch (InvalidPathException e) {
            throw new FunctionException("cwd " + given.get() + " is not a valid path");
        }
        if (!cwd.isAbsolute()) {
            throw new FunctionException("cwd must be an absolute path, not " + given.get());
        }
        if (!Files.isDirectory(cwd)) {
            throw new FunctionException("cwd " + cwd + " is not a directory");
        }
        return cwd;
    }

    private static Map<String, String> environment(FunctionCall call) throws FunctionException {
        var given = call.map(FunctionCall.KEYWORD_ONLY, "env");
        Map<String, String> env = new LinkedHashMap<>();
        if (given.isEmpty()) {
            return env;
        }
        for (Map.Entry<String, Object> entry : given.get().entrySet()) {
            String name = entry.getKey();
            if (name.isEmpty() || name.indexOf('=') >= 0 || name.indexOf('\0') >= 0) {
                throw new FunctionException("env: invalid variable name '" + name + "'");
            }
            Object value = entry.getValue();
            if (value instanceof Map<?, ?> || value instanceof List<?> || value instanceof byte[]) {
                throw new FunctionException("env: the value of " + name + " must be a string");
            }
            if (value != null && value.toString().indexOf('\0') >= 0) {
                throw new FunctionException("env: the value of " + name + " contains a NUL character");
            }
            env.put(name, value == null ? null : value.toString());
        }
        return env;
    }

    private static String timeoutMarker(Invocation invocation) {
        String seconds = BigDecimal.valueOf(invocation.command().timeout().toMillis(), 3)
                .stripTrailingZeros()
                .toPlainString();
        return "[brine: timed out after " + seconds + " s; the command and its child processes were killed]";
    }

    private static String appendLine(String text, String line) {
        return text.isEmpty() ? line : text + "\n" + line;
    }
}

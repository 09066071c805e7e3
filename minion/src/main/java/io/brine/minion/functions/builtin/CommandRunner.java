package io.brine.minion.functions.builtin;

import io.brine.minion.functions.FunctionException;
import io.brine.minion.functions.FunctionResult;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one external command for {@code cmd.*} with the bounds a daemon needs: output captured up to a cap (the rest
 * is read and dropped so the command never blocks on a full pipe), stdin either given or closed (a command that
 * waits for input gets end-of-file, not a hang), and a timeout after which the command and every descendant it
 * started are killed, including ones already re-parented away from it.
 *
 * <p>The command is over when its own process exits, with what it wrote by then. Background processes it leaves
 * behind ({@code daemon &}) keep running and are not waited for (Salt would wait for them until the timeout). This is
 * also the only behaviour the JDK makes deterministic: when the process exits, its reaper drains and closes the
 * output pipes, unless a reader is blocked in {@code read()} at that moment. So the readers here never block in
 * {@code read()}; they read what is available and otherwise park briefly.
 */
final class CommandRunner {

    private static final Logger log = LoggerFactory.getLogger(CommandRunner.class);
    /**
     * Set in every command's environment with a fresh value, and inherited by whatever it starts: how the process
     * tree is found even after it has come apart (the technique of Jenkins' ProcessTreeKiller).
     */
    static final String COOKIE = "BRINE_CMD_COOKIE";
    /** Idle readers re-check for output after this long at first, backing off to {@link #MAX_IDLE_NANOS}. */
    private static final long MIN_IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private static final long MAX_IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** After a kill, how long to wait for the process to be reaped and the pipes to close. */
    private static final long KILL_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final int outputCapBytes;

    CommandRunner(int outputCapBytes) {
        if (outputCapBytes <= 0) {
            throw new IllegalArgumentException("output cap must be positive");
        }
        this.outputCapBytes = outputCapBytes;
    }

    /**
     * @param argv        the program and its arguments
     * @param cwd         the working directory
     * @param env         added to (a null value: removed from) the minion's environment
     * @param stdin       the command's input, or null for none (closed at once)
     * @param timeout     when to kill it
     * @param mergeOutput stderr into stdout (one interleaved text, as {@code cmd.run} returns)
     */
    record Command(
            List<String> argv, Path cwd, Map<String, String> env, String stdin, Duration timeout, boolean mergeOutput) {
        Command {
            argv = List.copyOf(argv);
            Objects.requireNonNull(cwd, "cwd");
            Objects.requireNonNull(timeout, "timeout");
        }
    }

    /**
     * @param exitCode the exit code, or -1 when the command was killed before it exited
     * @param stderr   empty when the output was merged into stdout
     */
    record Completed(long pid, int exitCode, String stdout, String stderr, boolean timedOut) {}

    /**
     * @throws FunctionException    the command could not be started (retcode 127)
     * @throws InterruptedException the job was cancelled; the command's process tree has been killed
     */
    Completed run(Command command) throws FunctionException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command.argv())
                .directory(command.cwd().toFile())
                .redirectErrorStream(command.mergeOutput());
        Map<String, String> environment = builder.environment();
        String cookie = UUID.randomUUID().toString();
        command.env().forEach((k, v) -> {
            if (v == null) {
                environment.remove(k);
            } else {
                environment.put(k, v);
            }
        });
        environment.put(COOKIE, cookie);
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new FunctionException(
                    "cannot run " + command.argv().get(0) + ": " + reason(e), FunctionResult.NOT_FOUND);
        }
        long pid = process.pid();
        CappedOutput stdout = new CappedOutput(process, process.getInputStream(), outputCapBytes);
        CappedOutput stderr = new CappedOutput(process, process.getErrorStream(), outputCapBytes);
        List<Thread> readers = new ArrayList<>(List.of(start(stdout, "brine-cmd-" + pid + "-stdout")));
        if (!command.mergeOutput()) {
            readers.add(start(stderr, "brine-cmd-" + pid + "-stderr"));
        }
        feed(process, command.stdin());

        long deadline = System.nanoTime() + Math.max(0, command.timeout().toNanos());
        boolean timedOut;
        try {
            timedOut = !process.waitFor(Math.max(0, command.timeout().toNanos()), TimeUnit.NANOSECONDS);
            readers.forEach(LockSupport::unpark); // collect the last output now, not after an idle back-off
            timedOut = timedOut || !join(readers, deadline);
        } catch (InterruptedException e) {
            kill(process, cookie);
            throw e;
        }
        if (timedOut) {
            log.debug(
                    "Command {} (pid {}) timed out after {}; killing its process tree",
                    command.argv().get(0),
                    pid,
                    command.timeout());
            kill(process, cookie);
            process.waitFor(KILL_GRACE_NANOS, TimeUnit.NANOSECONDS);
            if (!join(readers, System.nanoTime() + KILL_GRACE_NANOS)) {
                log.debug("Command pid {}: output readers still busy after the kill; returning what we have", pid);
            }
        }
        int exitCode = process.isAlive() ? -1 : process.exitValue();
        return new Completed(
                pid, timedOut ? -1 : exitCode, stdout.text(), command.mergeOutput() ? "" : stderr.text(), timedOut);
    }

    /** Writes stdin on its own thread: a command that does not read it must not block us past the timeout. */
    private static void feed(Process process, String stdin) {
        OutputStream in = process.getOutputStream();
        if (stdin == null) {
            closeQuietly(in);
            return;
        }
        byte[] bytes = stdin.getBytes(StandardCharsets.UTF_8);
        start(
                () -> {
                    try (OutputStream out = in) {
                        out.write(bytes);
                    } catch (IOException e) {
                        // The command exited (or closed its stdin) without reading everything: not our error.
                    }
                },
                "brine-cmd-" + process.pid() + "-stdin");
    }

    /**
     * Kills the command, its descendants, and every process still carrying its cookie: a background child whose
     * parent exited has been re-parented and is no longer a descendant, but it still has the cookie.
     */
    private static void kill(Process process, String cookie) {
        List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
        process.destroyForcibly();
        // ProcessHandle remembers each process's start time, so a recycled pid is never killed by mistake.
        tree.forEach(ProcessHandle::destroyForcibly);
        carrying(cookie).forEach(ProcessHandle::destroyForcibly);
    }

    /** Processes whose environment holds the cookie (Linux: /proc/PID/environ, readable for our own processes). */
    private static List<ProcessHandle> carrying(String cookie) {
        Path proc = Path.of("/proc");
        if (!Files.isDirectory(proc)) {
            return List.of();
        }
        String entry = "\0" + COOKIE + "=" + cookie + "\0";
        long self = ProcessHandle.current().pid();
        return ProcessHandle.allProcesses()
                .filter(p -> p.pid() != self)
                .filter(p -> {
                    try {
                        byte[] environ = Files.readAllBytes(proc.resolve(p.pid() + "/environ"));
                        return ("\0" + new String(environ, StandardCharsets.ISO_8859_1) + "\0").contains(entry);
                    } catch (IOException | SecurityException e) {
                        return false; // gone, or not ours
                    }
                })
                .toList();
    }

    /** Waits for the readers until {@code deadline} (System.nanoTime); true when they all finished. */
    private static boolean join(List<Thread> threads, long deadline) throws InterruptedException {
        for (Thread thread : threads) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                TimeUnit.NANOSECONDS.timedJoin(thread, left);
            }
            if (thread.isAlive()) {
                return false;
            }
        }
        return true;
    }

    private static Thread start(Runnable task, String name) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static String reason(IOException e) {
        // "Cannot run program "x" (in directory "/"): error=2, No such file or directory" -> the last part.
        String message = String.valueOf(e.getMessage());
        int comma = message.lastIndexOf(", ");
        return comma >= 0 && message.contains("error=") ? message.substring(comma + 2) : message;
    }

    private static void closeQuietly(OutputStream out) {
        try {
            out.close();
        } catch (IOException e) {
            // Nothing to do: the command's stdin is gone either way.
        }
    }

    /**
     * Reads a process's output stream until the process has exited and nothing it wrote is left, keeping the first
     * {@code cap} bytes. It never blocks in {@code read()} (see the class comment).
     */
    private static final class CappedOutput implements Runnable {
        private final Process process;
        private final InputStream in;
        private final int cap;
        private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        private long total;

        CappedOutput(Process process, InputStream in, int cap) {
            this.process = process;
            this.in = in;
            this.cap = cap;
        }

        @Override
        public void run() {
            byte[] buffer = new byte[8192];
            long idle = MIN_IDLE_NANOS;
            try (InputStream stream = in) {
                while (true) {
                    // Exit first, then available(): everything the process wrote before exiting is counted.
                    boolean exited = !process.isAlive();
                    int available = stream.available();
                    if (available > 0) {
                        int n = stream.read(buffer, 0, Math.min(available, buffer.length));
                        if (n < 0) {
                            return;
                        }
                        keep(buffer, n);
                        idle = MIN_IDLE_NANOS;
                    } else if (exited) {
                        return;
                    } else {
                        LockSupport.parkNanos(idle);
                        idle = Math.min(idle * 2, MAX_IDLE_NANOS);
                    }
                }
            } catch (IOException e) {
                // The pipe was closed under us (the process was killed): keep what was read.
            }
        }

        private synchronized void keep(byte[] buffer, int n) {
            int room = cap - kept.size();
            if (room > 0) {
                kept.write(buffer, 0, Math.min(n, room));
            }
            total += n;
        }

        synchronized String text() {
            String text = kept.toString(StandardCharsets.UTF_8);
            if (total > kept.size()) {
                text += "\n[brine: output truncated: kept the first " + kept.size() + " of " + total + " bytes]";
            }
            return text;
        }
    }
}

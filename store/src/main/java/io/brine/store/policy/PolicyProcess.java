package io.brine.store.policy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.brine.protocol.crypto.Pem;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of the {@code autosign_policy} executable, the way DESIGN.md §4.7 bounds it: no shell, the id as its only
 * argument, the request as a JSON document on its standard input, {@code /} as its directory and only {@code PATH}
 * and {@code LANG} in its environment; its output (standard output and error together) read as it comes and capped at
 * {@link #MAX_OUTPUT} (more is a "no": the run is killed, whatever its exit status); killed with every process it started when {@code timeout} passes or when this is closed.
 * Never throws for anything the executable does: every failure is a "no".
 *
 * <p>Each run is started through util-linux's {@code setsid}, so it leads a process group of its own: a child that
 * double-forks is no longer a descendant of the run (it is reparented to init), but it stays in the group, and when
 * the run ends (by itself, at its timeout, over the output cap, or at close) every process still in the group is
 * killed ({@link ProcessGroup}). A JVM's child is never a group leader, so {@code setsid} calls setsid(2) and execs
 * the executable in place: the pid is the group's id, the exit status and output are the executable's own
 * ({@code --wait} keeps the exit status should it ever fork). Without {@code setsid} no run starts (see
 * {@link #SETSID}). A process that calls setsid(2) itself leaves the group and is not found.
 */
final class PolicyProcess implements AutoCloseable {

    static final int MAX_OUTPUT = 64 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(PolicyProcess.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * What one run concluded. {@code exitCode} is -1 when the process did not exit by itself; {@code killed} says it
     * was killed at its timeout.
     */
    record Run(boolean accepted, int exitCode, boolean killed, String reason, String output) {}

    /** Where util-linux puts {@code setsid} (Essential on Debian); empty when it is not installed. */
    static final Optional<Path> SETSID = Stream.of("/usr/bin/setsid", "/bin/setsid")
            .map(Path::of)
            .filter(Files::isExecutable)
            .findFirst();

    private final Path executable;
    private final Duration timeout;
    private final Optional<Path> setsid;
    private final Set<Process> processes = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Object poolLock = new Object();
    private ExecutorService drains;
    private ScheduledExecutorService killer;

    PolicyProcess(Path executable, Duration timeout, Optional<Path> setsid) {
        this.executable = executable;
        this.timeout = timeout;
        this.setsid = setsid;
    }

    /** Why no run can start here, or empty. */
    Optional<String> problem() {
        return setsid.isPresent()
                ? Optional.empty()
                : Optional.of("setsid (util-linux) is not installed: a run needs"
                        + " a process group of its own so that everything it starts is killed with it; not run");
    }

    /** Runs the executable about {@code attempt} and waits for it, within the timeout. */
    Run run(AuthAttempt attempt) {
        byte[] input;
        try {
            input = document(attempt);
        } catch (JsonProcessingException e) {
            return new Run(false, -1, false, "cannot encode the request for the executable", "");
        }
        if (setsid.isEmpty()) {
            return new Run(false, -1, false, problem().orElseThrow(), "");
        }
        ProcessBuilder builder = new ProcessBuilder(
                        setsid.get().toString(), "--wait", "--", executable.toString(), attempt.id())
                .redirectErrorStream(true)
                .directory(Path.of("/").toFile());
        builder.environment().clear();
        builder.environment().put("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        builder.environment().put("LANG", "C.UTF-8");
        long started = System.nanoTime();
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            return new Run(false, -1, false, "cannot run " + executable + ": " + e.getMessage(), "");
        }
        processes.add(process);
        if (closed.get()) {
            killTree(process);
        }
        AtomicBoolean timedOut = new AtomicBoolean();
        ScheduledFuture<?> kill = killer().schedule(
                        () -> {
                            timedOut.set(true);
                            killTree(process);
                        },
                        timeout.toMillis(),
                        TimeUnit.MILLISECONDS);
        AtomicBoolean overflowed = new AtomicBoolean();
        CompletableFuture<String> output = CompletableFuture.supplyAsync(
                () -> drain(process.getInputStream(), () -> {
                    overflowed.set(true);
                    killTree(process);
                }),
                drains());
        try (OutputStream stdin = process.getOutputStream()) {
            stdin.write(input);
        } catch (IOException e) {
            // It exited or closed its input without reading it all: its exit status still decides.
        }
        int exit;
        try {
            if (!process.waitFor(timeout.toNanos() - (System.nanoTime() - started), TimeUnit.NANOSECONDS)) {
                timedOut.set(true);
                killTree(process);
            }
            exit = process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            killTree(process);
            return new Run(false, -1, false, "interrupted (the master is stopping)", "");
        } finally {
            kill.cancel(false);
            processes.remove(process);
            // Whatever it left behind (a background child holding its output, a double-forked daemon) ends with it.
            ProcessGroup.kill(process.pid());
        }
        String text = collect(output);
        long millis = (System.nanoTime() - started) / 1_000_000;
        if (overflowed.get()) {
            return new Run(
                    false,
                    exit,
                    true,
                    "wrote more than " + MAX_OUTPUT + " bytes of output: killed, counted as" + " no",
                    text);
        }
        if (timedOut.get()) {
            return new Run(false, -1, true, "timed out after " + timeout.toSeconds() + " s: killed", text);
        }
        return exit == 0
                ? new Run(true, 0, false, "exit 0 after " + millis + " ms", text)
                : new Run(false, exit, false, "exit " + exit + " after " + millis + " ms", text);
    }

    private static byte[] document(AuthAttempt attempt) throws JsonProcessingException {
        ObjectNode document = JSON.createObjectNode();
        document.put("id", attempt.id());
        document.put("public_key", Pem.publicKeySpki(attempt.publicKey()));
        document.put("fingerprint", attempt.fingerprint());
        document.set("claims", JSON.valueToTree(attempt.claims()));
        document.put("remote_address", attempt.remoteAddress());
        document.put("time", attempt.time().toString());
        return JSON.writeValueAsBytes(document);
    }

    private String collect(CompletableFuture<String> output) {
        try {
            return output.get(1, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            LOG.warn(
                    "{} {}: its output is still open after it exited (a background process it started holds it);"
                            + " not waited for",
                    ExecutablePolicy.RULE,
                    executable);
            return "";
        } catch (ExecutionException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /**
     * Reads up to {@link #MAX_OUTPUT} bytes and discards the rest, so the process never blocks on a full pipe; at the
     * first byte over the cap calls {@code overflow} (once): output over the cap makes the answer "no".
     */
    private static String drain(InputStream in, Runnable overflow) {
        ByteArrayOutputStream kept = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        long dropped = 0;
        try (in) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                int keep = Math.min(n, MAX_OUTPUT - kept.size());
                kept.write(buffer, 0, keep);
                if (n > keep && dropped == 0) {
                    overflow.run();
                }
                dropped += n - keep;
            }
        } catch (IOException e) {
            // the pipe closed under us: keep what was read
        }
        String text = kept.toString(StandardCharsets.UTF_8);
        return dropped > 0 ? text + "[... " + dropped + " more bytes dropped]" : text;
    }

    private static void killTree(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        ProcessGroup.kill(process.pid());
    }

    private ExecutorService drains() {
        synchronized (poolLock) {
            if (drains == null) {
                drains = Executors.newCachedThreadPool(daemonThreads("brine-policy-output"));
            }
            return drains;
        }
    }

    private ScheduledExecutorService killer() {
        synchronized (poolLock) {
            if (killer == null) {
                killer = Executors.newSingleThreadScheduledExecutor(daemonThreads("brine-policy-timer"));
            }
            return killer;
        }
    }

    static ThreadFactory daemonThreads(String name) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Kills what runs (with what it started) and stops the threads; a later run is killed as it starts. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        processes.forEach(PolicyProcess::killTree);
        synchronized (poolLock) {
            for (ExecutorService pool : new ExecutorService[] {killer, drains}) {
                if (pool != null) {
                    pool.shutdownNow();
                }
            }
        }
    }
}

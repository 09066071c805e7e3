package io.brine.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The coordinator's handle on one {@link SwarmWorker} JVM: started with this JVM's own {@code java} and class path,
 * commanded one line at a time. Its standard error goes to a log file in the run directory.
 */
final class WorkerProcess implements AutoCloseable {

    private static final String EOF = "\u0000eof";

    final int index;
    final int first;
    final int count;
    private final Process process;
    private final PrintStream in;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    /** This worker's {@code nanoTime} minus the coordinator's. */
    long clockOffsetNanos;

    private WorkerProcess(int index, int first, int count, Process process) {
        this.index = index;
        this.first = first;
        this.count = count;
        this.process = process;
        this.in = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Thread reader = new Thread(this::readAnswers, "bench-worker-" + index + "-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a worker for minions {@code first .. first+count-1} (ids {@code prefix + %05d}, keys
     * {@code keyBase + i}).
     */
    static WorkerProcess start(
            int index,
            Transport transport,
            int retPort,
            Path masterPub,
            KeyCache keys,
            int keyBase,
            String prefix,
            int first,
            int count,
            Path log,
            int heapMib,
            int ioThreads,
            boolean salt,
            ZmqClient zmqClient)
            throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(
                java,
                "-Xmx" + heapMib + "m",
                "-XX:+UseSerialGC",
                "-cp",
                System.getProperty("java.class.path"),
                SwarmWorker.class.getName(),
                transport.configValue,
                "127.0.0.1",
                Integer.toString(retPort),
                masterPub.toString(),
                keys.dir().toString(),
                Integer.toString(keyBase),
                prefix,
                Integer.toString(first),
                Integer.toString(count),
                Integer.toString(ioThreads),
                salt ? "salt" : "brine",
                zmqClient.configValue));
        Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        return new WorkerProcess(index, first, count, process);
    }

    long pid() {
        return process.pid();
    }

    private void readAnswers() {
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                (line.startsWith("event ") ? events : answers).add(line);
            }
        } catch (IOException e) {
            // the process went away; the EOF marker below tells waiters
        }
        answers.add(EOF);
        events.add(EOF);
    }

    /** Waits for the first line ("ready ..."). */
    String awaitReady(Duration timeout) throws IOException {
        return take(answers, timeout, "start");
    }

    /** Sends a command and waits for its one-line answer; an "error" answer throws. */
    String command(String line, Duration timeout) throws IOException {
        in.println(line);
        String answer = take(answers, timeout, line);
        if (answer.startsWith("error")) {
            throw new IOException("worker " + index + ": " + line + ": " + answer);
        }
        return answer;
    }

    /** Sends a command without waiting for its answer; collect it with {@link #answer}. */
    void send(String line) {
        in.println(line);
    }

    String answer(String what, Duration timeout) throws IOException {
        String answer = take(answers, timeout, what);
        if (answer.startsWith("error")) {
            throw new IOException("worker " + index + ": " + what + ": " + answer);
        }
        return answer;
    }

    /** The next event line, or null after {@code timeout}. */
    String event(Duration timeout) throws IOException {
        try {
            String event = events.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (EOF.equals(event)) {
                events.add(EOF);
                throw new IOException("worker " + index + " exited (see its log)");
            }
            return event;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private String take(BlockingQueue<String> queue, Duration timeout, String what) throws IOException {
        try {
            String line = queue.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (line == null) {
                throw new IOException(
                        "worker " + index + ": no answer to \"" + what + "\" within " + timeout.toSeconds() + " s");
            }
            if (EOF.equals(line)) {
                queue.add(EOF);
                throw new IOException("worker " + index + " exited during \"" + what + "\" (see its log)");
            }
            return line;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** Measures this worker's clock against ours a few times and keeps the tightest estimate. */
    void calibrateClock() throws IOException {
        long bestRoundTrip = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            long sent = System.nanoTime();
            String answer = command("clock", Duration.ofSeconds(10));
            long received = System.nanoTime();
            long theirs = Long.parseLong(answer.split(" ")[1]);
            if (received - sent < bestRoundTrip) {
                bestRoundTrip = received - sent;
                clockOffsetNanos = theirs - (sent + received) / 2;
            }
        }
    }

    /** A worker's {@code nanoTime} in the coordinator's clock. */
    long toLocal(long workerNanos) {
        return workerNanos - clockOffsetNanos;
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            in.println("quit");
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroy();
                    process.waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (process.isAlive()) {
                process.destroyForcibly();
            }
        }
    }
}

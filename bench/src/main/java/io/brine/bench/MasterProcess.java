package io.brine.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real master for one run: {@code bin/brine-master} as an admin starts it, with a fresh {@code master.yaml}, pki
 * dir and cachedir under the run directory, watched from outside through {@code /proc} and {@code jcmd}.
 *
 * <p>The configuration is the shipped defaults except what a benchmark on loopback must change, each named in
 * BENCHMARKS.md: {@code auto_accept: true} (the auth scenario is "first auth under auto_accept"), and
 * {@code auth_rate_per_source}/{@code auth_burst} raised, because every simulated minion comes from 127.0.0.1 and
 * the per-source limit would otherwise be the figure measured; from 500 minions also
 * {@code max_unauthenticated_connections}/{@code max_unauthenticated_per_source}, for the same reason.
 */
final class MasterProcess implements AutoCloseable {

    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

    final Path dir;
    final int retPort;
    final int publishPort;
    final int tcpPort;
    private final Process process;
    /** A salt-master: a tree of Python processes, measured as a whole; its root key is {@code cache/.root_key}. */
    final boolean salt;

    private MasterProcess(Path dir, int retPort, int publishPort, int tcpPort, Process process, boolean salt) {
        this.dir = dir;
        this.retPort = retPort;
        this.publishPort = publishPort;
        this.tcpPort = tcpPort;
        this.process = process;
        this.salt = salt;
    }

    /**
     * A real salt-master ({@code brine-bench --against salt}), run by {@code saltScript} (../shared/salt/salt: the
     * stock 3008.2 package, ZeroMQ), with its shipped defaults except what a run on loopback under a run directory
     * must set: interface, the two ports, its directories, {@code user} (the user running the bench: Salt's default
     * {@code salt} does not exist here), and {@code auto_accept: True} (the auth scenario is the first auth of new
     * minions under auto-accept, as for brine). Salt cannot bind port 0: the two ports are found free beforehand by
     * binding and closing them, so another program could take one in between (the start then fails and says so).
     */
    static MasterProcess startSalt(Path saltScript, Path dir, Duration timeout) throws IOException {
        Files.createDirectories(dir.resolve("conf"));
        StateRun.writeTree(dir.resolve("srv"));
        int[] ports = freePorts(2);
        Files.writeString(
                dir.resolve("conf/master"),
                saltConfig(dir, ports[0], ports[1], System.getProperty("user.name")),
                StandardCharsets.UTF_8);
        return launchSalt(saltScript, dir, ports[1], ports[0], timeout);
    }

    /**
     * The same salt-master started again on its directories and ports (the restart scenario), once the old one has
     * exited; returns when the new one listens and has written its new {@code .root_key} (the old one's is removed
     * first, so that the new one's is what the publisher reads).
     */
    MasterProcess restartSalt(Path saltScript, Duration timeout) throws IOException {
        close();
        Files.deleteIfExists(rootKey());
        return launchSalt(saltScript, dir, retPort, publishPort, timeout);
    }

    private static MasterProcess launchSalt(Path saltScript, Path dir, int retPort, int publishPort, Duration timeout)
            throws IOException {
        Process process = new ProcessBuilder(
                        saltScript.toString(),
                        "salt-master",
                        "-c",
                        dir.resolve("conf").toString(),
                        "-l",
                        "warning")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve("master.out").toFile()))
                .start();
        MasterProcess master = new MasterProcess(dir, retPort, publishPort, 0, process, true);
        try {
            master.awaitListening(timeout, retPort);
        } catch (IOException e) {
            master.close();
            throw e;
        }
        return master;
    }

    /** A salt-master's config file: Salt's shipped defaults except what {@link #startSalt} names. */
    static String saltConfig(Path dir, int publishPort, int retPort, String user) {
        return String.join(
                "\n",
                "# Written by brine-bench --against salt: Salt's shipped defaults, except what a run on loopback in a",
                "# run directory must set.",
                "interface: 127.0.0.1",
                "publish_port: " + publishPort,
                "ret_port: " + retPort,
                "user: " + user,
                "root_dir: " + dir,
                "pki_dir: " + dir.resolve("pki"),
                "cachedir: " + dir.resolve("cache"),
                "sock_dir: " + dir.resolve("run"),
                "pidfile: " + dir.resolve("run/master.pid"),
                "log_file: " + dir.resolve("master.log"),
                "# The auth scenario is the first auth of N new minions under auto-accept, as for brine.",
                "auto_accept: True",
                "# The state scenario's tree, as brine's master serves it.",
                "file_roots:",
                "  base:",
                "    - " + dir.resolve("srv"),
                "");
    }

    static MasterProcess start(Path home, Path dir, Transport transport, String javaOptions, int minions)
            throws IOException {
        return start(home, dir, transport, javaOptions, minions, "");
    }

    /** As {@link #start(Path, Path, Transport, String, int)}, with {@code extraYaml} appended to master.yaml. */
    static MasterProcess start(
            Path home, Path dir, Transport transport, String javaOptions, int minions, String extraYaml)
            throws IOException {
        Files.createDirectories(dir);
        // Above what the default per-source caps admit from one address (TCP 5,000 unauthenticated connections,
        // ZeroMQ 10,000 = 5,000 minions, and a fifth of that where the master lowers its caps to a file limit of
        // 20,000), raised; written only then, so older builds (--master-home) still start.
        String connectionCaps = minions < 500
                ? ""
                : String.join(
                        "\n",
                        "# Every simulated minion connects from 127.0.0.1, all at once: the per-source connection cap too.",
                        "max_unauthenticated_connections: 30000",
                        "max_unauthenticated_per_source: 30000");
        int[] ports = freePorts(3);
        String yaml = String.join(
                        "\n",
                        "# Written by brine-bench: the shipped defaults, except what a loopback benchmark must change.",
                        "interface: 127.0.0.1",
                        "publish_port: " + ports[0],
                        "ret_port: " + ports[1],
                        "tcp_port: " + ports[2],
                        "transport: " + transport.configValue,
                        "pki_dir: pki",
                        "cachedir: cache",
                        "log_file: master.log",
                        "# The auth scenario is the first auth of N new minions under auto_accept.",
                        "auto_accept: true",
                        "# Every simulated minion connects from 127.0.0.1: the per-source limit must not be what is measured.",
                        "auth_rate_per_source: 1000000",
                        "auth_burst: 1000000",
                        connectionCaps,
                        "")
                + extraYaml;
        Files.writeString(dir.resolve("master.yaml"), yaml, StandardCharsets.UTF_8);
        return launch(home, dir, ports[1], ports[0], ports[2], transport, javaOptions);
    }

    /**
     * The same brine-master started again on its master.yaml, pki dir and ports after a SIGTERM (the restart
     * scenario), once the old one has exited; returns when the new one listens. {@code whileDown} runs between the
     * two, while no master runs.
     */
    MasterProcess restart(Path home, Transport transport, String javaOptions, Down whileDown) throws IOException {
        close();
        whileDown.run();
        return launch(home, dir, retPort, publishPort, tcpPort, transport, javaOptions);
    }

    /** What is done while no master runs. */
    interface Down {
        void run() throws IOException;
    }

    private static MasterProcess launch(
            Path home, Path dir, int retPort, int publishPort, int tcpPort, Transport transport, String javaOptions)
            throws IOException {
        List<String> command =
                new ArrayList<>(List.of(home.resolve("bin/brine-master").toString(), "-c", dir.toString()));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve("master.out").toFile()));
        Map<String, String> env = builder.environment();
        env.put("BRINE_JAVA_OPTS", javaOptions);
        Process process = builder.start();
        MasterProcess master = new MasterProcess(dir, retPort, publishPort, tcpPort, process, false);
        try {
            // A JVM's start is all CPU: on a loaded machine (load average 30 on 2 cores) a restart took 65 s to listen.
            master.awaitListening(Duration.ofSeconds(180), transport == Transport.TCP ? tcpPort : retPort);
        } catch (IOException e) {
            master.close(); // nobody else holds it yet: a master that did not listen in time was left running
            throw e;
        }
        return master;
    }

    private void awaitListening(Duration timeout, int port) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("the " + (salt ? "salt-" : "") + "master exited with status "
                        + process.exitValue() + ": see " + dir.resolve("master.out") + " and master.log");
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                if (Files.isRegularFile(dir.resolve("pki/master.pub")) && Files.isRegularFile(rootKey())) {
                    return;
                }
            } catch (IOException e) {
                // not yet
            }
            sleep(100);
        }
        throw new IOException("the " + (salt ? "salt-" : "") + "master did not listen on port " + port + " within "
                + timeout.toSeconds() + " s");
    }

    long pid() {
        return process.pid();
    }

    boolean alive() {
        return process.isAlive();
    }

    Path pkiDir() {
        return dir.resolve("pki");
    }

    Path masterPub() {
        return dir.resolve("pki/master.pub");
    }

    Path rootKey() {
        return dir.resolve(salt ? "cache/.root_key" : "cache/root.pem");
    }

    /** The lines of the master's log so far (none before it wrote one). */
    List<String> logLines() throws IOException {
        Path log = dir.resolve("master.log");
        return Files.isRegularFile(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
    }

    long cpuMillis() {
        return salt ? ProcStats.treeCpuMillis(pid()) : ProcStats.cpuMillis(pid());
    }

    /** Resident memory in KiB; a salt-master's is its processes' proportional set sizes added up. */
    long rssKib() {
        return salt ? ProcStats.treePssKib(pid()) : ProcStats.rssKib(pid());
    }

    int openFiles() {
        return salt ? ProcStats.treeOpenFiles(pid()) : ProcStats.openFiles(pid());
    }

    /** Live heap in KiB: a full collection ({@code jcmd GC.run}), then {@code GC.heap_info}'s "used". */
    long liveHeapKib() throws IOException {
        jcmd("GC.run");
        jcmd("GC.run");
        String info = jcmd("GC.heap_info");
        // G1: one "garbage-first heap ... used NK" line; generational collectors: one line per generation.
        long used = 0;
        boolean found = false;
        for (String line : info.split("\n")) {
            Matcher matcher = HEAP_USED.matcher(line);
            if ((line.contains("garbage-first heap") || line.contains("generation")) && matcher.find()) {
                used += Long.parseLong(matcher.group(1));
                found = true;
            }
        }
        if (!found) {
            throw new IOException("cannot read the heap's use from jcmd GC.heap_info: " + info);
        }
        return used;
    }

    private static final Pattern HISTOGRAM_LINE = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");

    /** Bytes per class of the live heap ({@code jcmd GC.class_histogram}, which collects first). */
    Map<String, Long> histogram() throws IOException {
        Map<String, Long> bytes = new HashMap<>();
        for (String line : jcmd("GC.class_histogram").split("\n")) {
            Matcher matcher = HISTOGRAM_LINE.matcher(line);
            if (matcher.find()) {
                bytes.merge(matcher.group(3), Long.parseLong(matcher.group(2)), Long::sum);
            }
        }
        return bytes;
    }

    /** Starts a JFR recording with the profiling settings; {@link #stopRecording} writes it to {@code file}. */
    void startRecording(Path file) throws IOException {
        jcmd("JFR.start", "name=brine-bench", "settings=profile", "filename=" + file);
    }

    /**
     * The JVM option that starts the recording {@link #startRecording} would start, from the master's launch: a
     * restarted master is recorded from its first moment, with no {@code jcmd} attach while it serves.
     */
    static String recordingFromLaunch(Path file) {
        return "-XX:StartFlightRecording=name=brine-bench,settings=profile,filename=" + file;
    }

    void stopRecording() throws IOException {
        jcmd("JFR.stop", "name=brine-bench");
    }

    String jcmd(String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(jcmdBinary());
        command.add(Long.toString(pid()));
        command.addAll(List.of(args));
        Process jcmd = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!jcmd.waitFor(60, TimeUnit.SECONDS) || jcmd.exitValue() != 0) {
                throw new IOException("jcmd " + String.join(" ", args) + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        return out;
    }

    private static String jcmdBinary() {
        Path javaHome = Path.of(System.getProperty("java.home"));
        Path jcmd = javaHome.resolve("bin/jcmd");
        return Files.isExecutable(jcmd) ? jcmd.toString() : "jcmd";
    }

    /**
     * Stops the master with SIGTERM, as systemd would; a salt-master's parent stops its children, and any child
     * still alive after it is killed.
     */
    @Override
    public void close() {
        List<ProcessHandle> children = process.descendants().toList();
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
        for (ProcessHandle child : children) {
            try {
                child.onExit().get(salt ? 10 : 0, TimeUnit.SECONDS);
            } catch (Exception e) {
                child.destroyForcibly();
            }
        }
    }

    static int[] freePorts(int count) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                sockets.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket socket : sockets) {
                socket.close();
            }
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

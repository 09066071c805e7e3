package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A real, stock salt-minion of one of the supported releases (the shared Salt of issue 15,
 * {@code ../shared/salt/salt}) as a child process, pointed at a brine master on loopback. Nothing in its config but
 * what any Salt admin sets: the master's address and ports, its transport, and directories under a temp dir. When
 * Salt cannot run here the test fails with the reason, never skips.
 */
final class SaltMinionProcess implements AutoCloseable {

    /**
     * {@code -Dbrine.salt=PATH}, else the environment's {@code BRINE_SALT} (which {@code .ci/run} sets for a clone
     * made away from the shared folder), else {@code ../shared/salt/salt} beside the checkout.
     */
    static final Path SALT = Path.of(System.getProperty(
            "brine.salt",
            Objects.requireNonNullElse(
                    System.getenv("BRINE_SALT"),
                    Path.of(System.getProperty("user.dir"))
                            .toAbsolutePath()
                            .getParent()
                            .getParent()
                            .resolve("shared/salt/salt")
                            .toString())));

    /** The releases fleets run: 3006 (LTS), 3007 and 3008 (the shared script's default). */
    static final String SALT_3006 = "3006.26";

    static final String SALT_3007 = "3007.14";
    static final String SALT_3008 = "3008.2";

    /**
     * Salt 3006 runs on its own copy of Tornado 4 ({@code salt.ext.tornado}), which {@code import salt} installs as
     * {@code tornado} with an import hook, so that pyzmq's future sockets run on Salt's event loop. The shared script
     * imports the system's Tornado 6 before Salt (3007 needs {@code tornado.queues} loaded), so a 3006 minion's
     * pyzmq futures wait on an asyncio loop that nothing runs: its first ZeroMQ request is sent and the answer never
     * read ("Attempt to authenticate with the salt master failed with timeout error"). Importing Salt first, from
     * {@code sitecustomize}, gives 3006 the setup of a Salt install (onedir, packages).
     */
    private static final String SALT_3006_SITECUSTOMIZE = """
            # Written by brine's SaltMinionProcess: Salt 3006 must install its vendored Tornado before anything
            # imports the system's (the shared salt script imports tornado.queues first, for 3007).
            import salt  # noqa: F401
            """;

    /**
     * The shared salt script rewrites its {@code looseversion} shim ({@code printf > shim/looseversion.py}: truncated,
     * then written) at every start, and Salt imports that module seconds into its own start: a salt process starting
     * while another rewrites the shim imported an empty module ("module 'looseversion' has no attribute
     * 'LooseVersion'", exit 1; seen in a CI run with salt-minions of three test JVMs starting together). Every process
     * started here has the same class in {@code sys.modules} from {@code sitecustomize}, before Salt asks, so the file
     * is never read.
     */
    private static final String LOOSEVERSION_SITECUSTOMIZE = """
            # Written by brine's SaltMinionProcess: looseversion from distutils, as the shared script's shim gives it,
            # without reading the shim while another salt process rewrites it.
            import sys
            import types
            from distutils.version import LooseVersion
            _looseversion = types.ModuleType("looseversion")
            _looseversion.LooseVersion = LooseVersion
            sys.modules.setdefault("looseversion", _looseversion)
            """;

    final String id;
    final String version;
    final Path dir;
    private final Process process;

    private SaltMinionProcess(String id, String version, Path dir, Process process) {
        this.id = id;
        this.version = version;
        this.dir = dir;
        this.process = process;
    }

    /** Writes {@code dir/minion} (with {@code extra} lines) and starts salt-minion 3008 with {@code -c dir}. */
    static SaltMinionProcess start(String id, Path dir, String transport, int retPort, int publishPort, String... extra)
            throws IOException {
        return start(id, SALT_3008, dir, transport, retPort, publishPort, extra);
    }

    /** Writes {@code dir/minion} (with {@code extra} lines) and starts salt-minion {@code version} with -c dir. */
    static SaltMinionProcess start(
            String id, String version, Path dir, String transport, int retPort, int publishPort, String... extra)
            throws IOException {
        requireSalt();
        Files.createDirectories(dir);
        List<String> lines = new ArrayList<>(List.of(
                "id: " + id,
                "master: 127.0.0.1",
                "master_port: " + retPort,
                "publish_port: " + publishPort,
                "transport: " + transport,
                "pki_dir: " + dir.resolve("pki"),
                "cachedir: " + dir.resolve("cache"),
                "sock_dir: " + dir.resolve("run"),
                "pidfile: " + dir.resolve("run/minion.pid"),
                "log_file: " + dir.resolve("minion.log"),
                "log_level_logfile: debug",
                "acceptance_wait_time: 1",
                "acceptance_wait_time_max: 2",
                // Salt's ZeroMQ SUB otherwise reconnects after a random 1 to 11 s (recon_default plus up to
                // recon_max), which each master restart waited out; without it, libzmq's own 100 ms.
                "recon_randomize: False",
                "multiprocessing: False"));
        lines.addAll(List.of(extra));
        lines.add("");
        Files.writeString(dir.resolve("minion"), String.join("\n", lines), StandardCharsets.UTF_8);
        ProcessBuilder builder = new ProcessBuilder(SALT.toString(), "salt-minion", "-c", dir.toString(), "-l", "info")
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("stdout.txt").toFile());
        keepBytecode(builder);
        builder.environment().put("SALT_VERSION", version);
        siteCustomize(
                builder,
                dir,
                LOOSEVERSION_SITECUSTOMIZE + (version.startsWith("3006.") ? SALT_3006_SITECUSTOMIZE : ""));
        return new SaltMinionProcess(id, version, dir, builder.start());
    }

    /** Puts {@code dir/python/sitecustomize.py} with {@code code} first on the process's Python path. */
    private static void siteCustomize(ProcessBuilder builder, Path dir, String code) throws IOException {
        Path site = Files.createDirectories(dir.resolve("python"));
        Files.writeString(site.resolve("sitecustomize.py"), code, StandardCharsets.UTF_8);
        String inherited = builder.environment().get("PYTHONPATH");
        builder.environment().put("PYTHONPATH", site + (inherited == null ? "" : ":" + inherited));
    }

    /**
     * Lets Python keep the bytecode it compiles from Salt's sources, in {@code __pycache__} beside them in the shared
     * script's unpacked copy ({@code ~/.cache/brine-salt/VERSION}, the user's own), as a Salt install has it: with
     * {@code PYTHONDONTWRITEBYTECODE} in the environment (as on the build machines), every salt-minion and salt-key
     * compiled the hundreds of Salt modules it imports again, about 0.5 s of the 1.9 s of CPU a {@code salt-call
     * --local test.ping} took (1.35 s with the bytecode kept). Python writes each file atomically and uses it only
     * while its source's time and size match; what Salt runs is the same.
     */
    private static ProcessBuilder keepBytecode(ProcessBuilder builder) {
        builder.environment().remove("PYTHONDONTWRITEBYTECODE");
        return builder;
    }

    private static void requireSalt() {
        if (!Files.isExecutable(SALT)) {
            fail("Salt is not available at " + SALT
                    + " (set BRINE_SALT or -Dbrine.salt=PATH to the shared 'salt' script)");
        }
    }

    /**
     * Runs the real {@code salt-key} on {@code pkiDir} (a brine master's, here) with a master config of its own under
     * {@code dir}; returns its standard output, failing with its words when it exits non-zero.
     */
    static String saltKey(Path dir, Path pkiDir, String... args) throws IOException, InterruptedException {
        requireSalt();
        Path conf = Files.createDirectories(dir.resolve("salt-key-conf"));
        Files.writeString(
                conf.resolve("master"),
                String.join(
                        "\n",
                        List.of(
                                "pki_dir: " + pkiDir,
                                "cachedir: " + dir.resolve("salt-key-cache"),
                                "sock_dir: " + dir.resolve("salt-key-run"),
                                "log_file: " + dir.resolve("salt-key.log"),
                                "key_logfile: " + dir.resolve("salt-key-keys.log"),
                                "user: " + System.getProperty("user.name"),
                                "")),
                StandardCharsets.UTF_8);
        List<String> command = new ArrayList<>(List.of(SALT.toString(), "salt-key", "--config-dir", conf.toString()));
        command.addAll(List.of(args));
        Path out = dir.resolve("salt-key-out.txt");
        ProcessBuilder builder = keepBytecode(new ProcessBuilder(command));
        siteCustomize(builder, conf, LOOSEVERSION_SITECUSTOMIZE);
        Process process =
                builder.redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!process.waitFor(WAIT.toSeconds() * 2, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail("salt-key " + args[0] + " did not finish: " + Files.readString(out));
        }
        String text = Files.readString(out, StandardCharsets.UTF_8);
        if (process.exitValue() != 0) {
            fail("salt-key " + String.join(" ", args) + " exited with " + process.exitValue() + ": " + text);
        }
        return text;
    }

    /** The minion's log so far (empty before it writes one). */
    String log() {
        try {
            Path log = dir.resolve("minion.log");
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }

    String stdout() {
        try {
            return Files.readString(dir.resolve("stdout.txt"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /** Fails with the minion's own words when it exited (Salt missing, a crash). */
    void assertRunning() {
        if (!process.isAlive()) {
            fail("salt-minion " + version + " " + id + " exited with " + process.exitValue() + ": " + stdout() + "\n"
                    + log());
        }
    }

    /** Waits until the minion's log holds {@code text}, failing at once if the process died. */
    void awaitLog(String text) {
        await().atMost(WAIT).until(() -> {
            assertRunning();
            return log().contains(text);
        });
        assertThat(log()).contains(text);
    }

    /**
     * Stops all of {@code minions} as {@link #close()} does, at once: a salt-minion takes seconds to exit after
     * SIGTERM, so each is told before any is waited for.
     */
    static void closeAll(List<SaltMinionProcess> minions) throws InterruptedException {
        minions.forEach(minion -> {
            minion.process.descendants().forEach(ProcessHandle::destroy);
            minion.process.destroy();
        });
        for (SaltMinionProcess minion : minions) {
            minion.close();
        }
    }

    /** Stops the minion and keeps its log in {@code target/salt-minion-logs/} for whoever reads a failure. */
    @Override
    public void close() throws InterruptedException {
        // salt-minion forks its minion process: a child that hangs must not outlive the test (one did, stuck).
        List<ProcessHandle> children = process.descendants().toList();
        children.forEach(ProcessHandle::destroy);
        process.destroy();
        if (!process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
        children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        try {
            Path kept = Path.of(System.getProperty("user.dir"), "target", "salt-minion-logs");
            Files.createDirectories(kept);
            Files.writeString(
                    kept.resolve(
                            dir.getFileName() + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime() + ".log"),
                    stdout() + "\n----\n" + log(),
                    StandardCharsets.UTF_8);
        } catch (IOException e) {
            // the log is a convenience
        }
    }
}

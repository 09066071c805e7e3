package io.brine.bench;

import io.brine.bench.BenchMain.Scenario;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Where the master's CPU went: per-thread CPU deltas for every scenario, and a JFR recording of the one scenario
 * {@code --profile} names, kept in the current directory and summarised on the console.
 */
final class Profiler {

    private final MasterProcess master;
    private final Path runDir;
    private final Optional<Scenario> profiled;
    /** The recording's name: the scenario's, or its own where one scenario records more than one master. */
    private final Optional<String> label;

    Profiler(MasterProcess master, Path runDir, Optional<Scenario> profiled) {
        this(master, runDir, profiled, null);
    }

    Profiler(MasterProcess master, Path runDir, Optional<Scenario> profiled, String label) {
        this.master = master;
        this.runDir = runDir;
        this.profiled = profiled;
        this.label = Optional.ofNullable(label);
    }

    /**
     * The master's CPU per thread now, for {@link #threadCpuSince}; a salt-master's, which is a tree of processes, per
     * process name ({@link ProcStats#cpuMillisByProcessName}).
     */
    Map<String, Long> threads() {
        return master.salt ? ProcStats.cpuMillisByProcessName(master.pid()) : ProcStats.cpuMillisByThread(master.pid());
    }

    /** The master's CPU per thread group since {@code before}, biggest first. */
    Map<String, Object> threadCpuSince(Map<String, Long> before) {
        return threadCpu(before, threads());
    }

    /** Where the recording of a run's master during {@code name} is written ({@link #start}, or from its launch). */
    static Path recording(Path runDir, String name) {
        return runDir.resolve("master-" + name + ".jfr");
    }

    void start(Scenario scenario) {
        if (profiled.equals(Optional.of(scenario))) {
            try {
                master.startRecording(recording(runDir, name(scenario)));
            } catch (IOException e) {
                System.out.println("profile: cannot start JFR: " + e.getMessage());
            }
        }
    }

    void stop(Scenario scenario) {
        stop(scenario, Instant.MIN);
    }

    /**
     * Stops the recording and summarises its samples from {@code since} on: a recording started with the master
     * ({@link MasterProcess#recordingFromLaunch}) holds its start too, which a scenario measured from the master
     * listening leaves out.
     */
    void stop(Scenario scenario, Instant since) {
        if (profiled.equals(Optional.of(scenario))) {
            try {
                master.stopRecording();
                Path recorded = recording(runDir, name(scenario));
                Path kept =
                        Path.of("brine-bench-master-" + name(scenario) + ".jfr").toAbsolutePath();
                Files.copy(recorded, kept, StandardCopyOption.REPLACE_EXISTING);
                System.out.println("profile  JFR recording of the master during " + name(scenario) + ": " + kept);
                System.out.print(JfrTop.summary(kept, 25, since));
            } catch (IOException e) {
                System.out.println("profile: cannot stop JFR: " + e.getMessage());
            }
        }
    }

    /** The master's CPU per thread group between two {@link ProcStats#cpuMillisByThread} readings, biggest first. */
    static Map<String, Object> threadCpu(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Object> delta = new LinkedHashMap<>();
        after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> delta.put(e.getKey(), e.getValue()));
        return delta;
    }

    /** The JIT compiler threads' share of a {@link #threadCpu} delta: a fresh master compiles its hot paths. */
    static long jitMillis(Map<String, Object> byThread) {
        return byThread.entrySet().stream()
                .filter(e -> e.getKey().contains("CompilerThre"))
                .mapToLong(e -> (Long) e.getValue())
                .sum();
    }

    /** {@link #threadLine}, or for a salt-master its processes' line: what {@link #threads} read. */
    String cpuLine(Map<String, Object> delta) {
        return master.salt ? line("         master CPU by process name (ms):", delta) : threadLine(delta);
    }

    static String threadLine(Map<String, Object> delta) {
        return line("         master CPU by thread (ms):", delta);
    }

    private static String line(String title, Map<String, Object> delta) {
        StringBuilder line = new StringBuilder(title);
        delta.entrySet().stream()
                .limit(8)
                .forEach(e -> line.append(' ')
                        .append(e.getKey())
                        .append(' ')
                        .append(e.getValue())
                        .append(';'));
        return line.toString();
    }

    private String name(Scenario scenario) {
        return label.orElse(scenario.name().toLowerCase(Locale.ROOT));
    }
}

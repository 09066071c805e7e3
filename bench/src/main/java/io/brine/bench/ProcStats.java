package io.brine.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What Linux says about a process in {@code /proc/PID}: CPU time (user + system), resident memory, open file
 * descriptors and their limit. The benchmark reads these from outside, so the measured process runs unchanged.
 */
final class ProcStats {

    /** Clock ticks per second of {@code /proc/PID/stat}'s utime and stime; 100 on every Linux we run on. */
    static final long TICKS_PER_SECOND = clockTicks();

    private ProcStats() {}

    /** User + system CPU time of {@code pid} (all its threads) in milliseconds, at tick resolution (10 ms). */
    static long cpuMillis(long pid) {
        // The command name is in parentheses and may contain spaces: fields count from the last ')'.
        return cpuTicks(read(Path.of("/proc", Long.toString(pid), "stat")), false) * 1000 / TICKS_PER_SECOND;
    }

    /**
     * User + system CPU time in milliseconds of {@code pid} and every live descendant (a salt-master is a tree of
     * Python processes), with the CPU of children that ended and were reaped ({@code cutime}, {@code cstime}), so
     * nothing is counted twice. A process that ends between the listing and the read is left out.
     */
    static long treeCpuMillis(long pid) {
        long ticks = 0;
        for (long member : tree(pid)) {
            try {
                ticks += cpuTicks(read(Path.of("/proc", Long.toString(member), "stat")), true);
            } catch (IllegalStateException e) {
                // ended meanwhile
            }
        }
        return ticks * 1000 / TICKS_PER_SECOND;
    }

    /** utime + stime of one {@code /proc/PID/stat} line, with its reaped children's when {@code children}. */
    static long cpuTicks(String stat, boolean children) {
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        return children ? ticks + Long.parseLong(fields[13]) + Long.parseLong(fields[14]) : ticks;
    }

    /**
     * Proportional set size in KiB of {@code pid} and its live descendants, added up ({@code Pss} of
     * {@code smaps_rollup}): forked workers share most of their pages, and their RSS added up would count each shared
     * page once per process.
     */
    static long treePssKib(long pid) {
        long kib = 0;
        for (long member : tree(pid)) {
            try {
                kib += pssKib(read(Path.of("/proc", Long.toString(member), "smaps_rollup")));
            } catch (IllegalStateException | NumberFormatException e) {
                // ended meanwhile
            }
        }
        return kib;
    }

    /** The {@code Pss:} line of a {@code smaps_rollup}, in KiB. */
    static long pssKib(String smapsRollup) {
        for (String line : smapsRollup.split("\n")) {
            if (line.startsWith("Pss:")) {
                return Long.parseLong(line.substring("Pss:".length()).trim().split("\\s+")[0]);
            }
        }
        throw new IllegalStateException("no Pss line in smaps_rollup");
    }

    /** Open file descriptors of {@code pid} and its live descendants, added up. */
    static int treeOpenFiles(long pid) {
        int fds = 0;
        for (long member : tree(pid)) {
            try {
                fds += openFiles(member);
            } catch (IllegalStateException e) {
                // ended meanwhile
            }
        }
        return fds;
    }

    /** {@code pid} and its live descendants. */
    static List<Long> tree(long pid) {
        List<Long> pids = new ArrayList<>();
        ProcessHandle.of(pid).ifPresent(root -> {
            pids.add(root.pid());
            root.descendants().forEach(child -> pids.add(child.pid()));
        });
        return pids;
    }

    /**
     * CPU milliseconds per thread group of {@code pid}: threads named alike (up to a trailing number, as in
     * {@code brine-auth-1}, {@code C2 CompilerThre}) are added up, user time under the group's name and system time
     * under "NAME (sys)". Threads that ended are not counted.
     */
    static Map<String, Long> cpuMillisByThread(long pid) {
        Map<String, Long> byGroup = new TreeMap<>();
        String[] tids = Path.of("/proc", Long.toString(pid), "task").toFile().list();
        if (tids == null) {
            return byGroup;
        }
        for (String tid : tids) {
            Path task = Path.of("/proc", Long.toString(pid), "task", tid);
            try {
                String name = Files.readString(task.resolve("comm"), StandardCharsets.UTF_8)
                        .trim();
                String stat = Files.readString(task.resolve("stat"), StandardCharsets.US_ASCII);
                String[] fields =
                        stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
                String group = name.replaceAll("[-#]?\\d+$", "");
                byGroup.merge(group, Long.parseLong(fields[11]) * 1000 / TICKS_PER_SECOND, Long::sum);
                byGroup.merge(group + " (sys)", Long.parseLong(fields[12]) * 1000 / TICKS_PER_SECOND, Long::sum);
            } catch (IOException | RuntimeException e) {
                // the thread ended meanwhile
            }
        }
        return byGroup;
    }

    /**
     * CPU milliseconds of {@code pid} and its live descendants per process name ({@code comm}, as {@link #tree}), for
     * a master that is a tree of processes (a salt-master): user time under the name, system time under "NAME (sys)",
     * each process's reaped children counted under its name, so that the groups add up to {@link #treeCpuMillis}.
     * The shared runner starts Salt as {@code /usr/bin/python3} and its processes are forks of it: each is named
     * "python3" (Salt titles them, MWorker-0 and so on, only through Python's setproctitle, not among the packages
     * the runner installs), so for a salt-master this is its tree's user and system CPU under one name.
     */
    static Map<String, Long> cpuMillisByProcessName(long pid) {
        Map<String, Long> byName = new TreeMap<>();
        for (long member : tree(pid)) {
            try {
                String stat = read(Path.of("/proc", Long.toString(member), "stat"));
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                String[] fields =
                        stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
                long user = Long.parseLong(fields[11]) + Long.parseLong(fields[13]);
                long system = Long.parseLong(fields[12]) + Long.parseLong(fields[14]);
                byName.merge(name, user * 1000 / TICKS_PER_SECOND, Long::sum);
                byName.merge(name + " (sys)", system * 1000 / TICKS_PER_SECOND, Long::sum);
            } catch (IllegalStateException e) {
                // ended meanwhile
            }
        }
        return byName;
    }

    /** Resident set size in KiB ({@code VmRSS}). */
    static long rssKib(long pid) {
        return statusKib(pid, "VmRSS:");
    }

    /** Peak resident set size in KiB ({@code VmHWM}). */
    static long peakRssKib(long pid) {
        return statusKib(pid, "VmHWM:");
    }

    /** Threads of the process ({@code Threads:} in status). */
    static long threads(long pid) {
        return statusKib(pid, "Threads:");
    }

    private static long statusKib(long pid, String key) {
        for (String line : read(Path.of("/proc", Long.toString(pid), "status")).split("\n")) {
            if (line.startsWith(key)) {
                return Long.parseLong(line.substring(key.length()).trim().split("\\s+")[0]);
            }
        }
        throw new IllegalStateException("no " + key + " in /proc/" + pid + "/status");
    }

    /** Open file descriptors of {@code pid} now. */
    static int openFiles(long pid) {
        String[] entries = Path.of("/proc", Long.toString(pid), "fd").toFile().list();
        if (entries == null) {
            throw new IllegalStateException("cannot list /proc/" + pid + "/fd (has the process exited?)");
        }
        return entries.length;
    }

    /** The soft limit on open files of {@code pid} ("self" for this JVM). */
    static long openFilesLimit(String pid) {
        for (String line : read(Path.of("/proc", pid, "limits")).split("\n")) {
            if (line.startsWith("Max open files")) {
                String soft = line.substring("Max open files".length()).trim().split("\\s+")[0];
                return soft.equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(soft);
            }
        }
        throw new IllegalStateException("no open files limit in /proc/" + pid + "/limits");
    }

    /**
     * Established TCP connections accepted on {@code localPort} of this machine ({@code /proc/net/tcp} and
     * {@code tcp6}): how many minions a master's port has connected again after a restart, whichever process holds
     * them (a salt-master's sockets live in its children).
     */
    static int established(int localPort) {
        int count = 0;
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            if (Files.isReadable(Path.of(table))) {
                count += established(read(Path.of(table)), localPort);
            }
        }
        return count;
    }

    /** The lines of one {@code /proc/net/tcp} table in state 01 (established) whose local address has the port. */
    static int established(String table, int localPort) {
        String port = String.format(":%04X", localPort);
        int count = 0;
        for (String line : table.split("\n")) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length > 3 && fields[1].endsWith(port) && fields[3].equals("01")) {
                count++;
            }
        }
        return count;
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private static long clockTicks() {
        try {
            Process process = new ProcessBuilder("getconf", "CLK_TCK")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            process.waitFor();
            return Long.parseLong(out);
        } catch (IOException | NumberFormatException e) {
            return 100;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 100;
        }
    }
}

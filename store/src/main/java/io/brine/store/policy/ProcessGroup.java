package io.brine.store.policy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kills a process group, found through {@code /proc}: the JDK signals one process at a time and knows only
 * descendants, and a double-forked child is not one. Each pass sends SIGKILL to every live member (a zombie is
 * already dead); the passes go on until no member is left, so one that forks meanwhile is found at the next pass.
 * Without {@code /proc} (not Linux) nothing is found and only the run and its descendants are killed.
 */
final class ProcessGroup {

    private static final Logger LOG = LoggerFactory.getLogger(ProcessGroup.class);
    private static final Path PROC = Path.of("/proc");
    private static final int PASSES = 200;
    /** This process's own group: never killed, whatever a caller passes. */
    private static final OptionalLong OWN = groupOf(ProcessHandle.current().pid());

    private ProcessGroup() {}

    /** Kills every live process of group {@code pgid} and returns once none is left (or after {@link #PASSES}). */
    static void kill(long pgid) {
        if (pgid <= 1 || (OWN.isPresent() && OWN.getAsLong() == pgid)) {
            return;
        }
        for (int pass = 0; pass < PASSES; pass++) {
            List<Long> members = members(pgid);
            if (members.isEmpty()) {
                return;
            }
            members.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            try {
                TimeUnit.MILLISECONDS.sleep(Math.min(pass, 10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        LOG.warn(
                "{}: process group {} still has live processes after {} rounds of SIGKILL: {}",
                ExecutablePolicy.RULE,
                pgid,
                PASSES,
                members(pgid));
    }

    /** The live (not zombie) processes whose group is {@code pgid}. */
    static List<Long> members(long pgid) {
        List<Long> members = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(
                PROC, entry -> entry.getFileName().toString().chars().allMatch(Character::isDigit))) {
            for (Path entry : entries) {
                long pid = Long.parseLong(entry.getFileName().toString());
                Stat stat = stat(pid);
                if (stat != null && stat.group() == pgid && stat.state() != 'Z' && stat.state() != 'X') {
                    members.add(pid);
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /proc, or it changed under us: what was found is what there is
        }
        return members;
    }

    private static OptionalLong groupOf(long pid) {
        Stat stat = stat(pid);
        return stat == null ? OptionalLong.empty() : OptionalLong.of(stat.group());
    }

    private record Stat(char state, long group) {}

    /** Fields 3 and 5 of {@code /proc/PID/stat}, read after the command name's last ')' (it may hold anything). */
    private static Stat stat(long pid) {
        String line;
        try {
            line = Files.readString(PROC.resolve(Long.toString(pid)).resolve("stat"), StandardCharsets.ISO_8859_1);
        } catch (IOException | RuntimeException e) {
            return null; // gone, or not Linux
        }
        String[] fields = line.substring(line.lastIndexOf(')') + 1).strip().split(" ");
        if (fields.length < 3 || fields[0].isEmpty()) {
            return null;
        }
        try {
            return new Stat(fields[0].charAt(0), Long.parseLong(fields[2]));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}

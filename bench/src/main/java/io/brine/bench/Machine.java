package io.brine.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** What the figures were measured on: cores, memory, CPU model, kernel, JDK, open-files limit. */
final class Machine {

    private Machine() {}

    static Map<String, Object> describe() {
        Map<String, Object> machine = new LinkedHashMap<>();
        machine.put("cores", Runtime.getRuntime().availableProcessors());
        machine.put("memory_gib", Math.round(memTotalKib() / 1024.0 / 1024.0 * 10) / 10.0);
        machine.put("cpu", cpuModel());
        machine.put("kernel", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        machine.put("jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        machine.put("open_files_limit", ProcStats.openFilesLimit("self"));
        return machine;
    }

    static String oneLine() {
        return String.format(
                "%d cores (%s), %.0f GiB, %s, JDK %s",
                Runtime.getRuntime().availableProcessors(),
                cpuModel(),
                memTotalKib() / 1024.0 / 1024.0,
                "Linux " + System.getProperty("os.version"),
                System.getProperty("java.runtime.version"));
    }

    /** The 1, 5 and 15 minute load averages ({@code /proc/loadavg}), e.g. "19.58 21.52 20.30". */
    static String loadAverage() {
        String[] fields = ProcStats.read(Path.of("/proc/loadavg")).trim().split(" ");
        return fields.length < 3 ? "unknown" : fields[0] + " " + fields[1] + " " + fields[2];
    }

    private static long memTotalKib() {
        for (String line : ProcStats.read(Path.of("/proc/meminfo")).split("\n")) {
            if (line.startsWith("MemTotal:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return 0;
    }

    private static String cpuModel() {
        Path cpuinfo = Path.of("/proc/cpuinfo");
        if (!Files.isReadable(cpuinfo)) {
            return "unknown";
        }
        for (String line : ProcStats.read(cpuinfo).split("\n")) {
            if (line.startsWith("model name")) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        return "unknown";
    }
}

package io.brine.minion.grains;

import io.brine.minion.functions.Documents;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The minion's grains: facts about its host under Salt's names ({@code os}, {@code os_family}, {@code kernel},
 * {@code kernelrelease}, {@code osrelease}, {@code fqdn}, {@code host}, {@code ipv4}, {@code num_cpus},
 * {@code mem_total}, ...), plus the static grains from {@code minion.yaml}, which override collected ones (a static
 * grain set to null removes a collected one). The master targets by them; to the master they are claims, never
 * authority (DESIGN.md §4.8).
 *
 * <p>{@link #get()} is a cheap read of an immutable, key-sorted snapshot; {@link #refresh()} re-collects and says
 * whether anything changed, so the daemon sends {@code Grains} to the master only then. Collection never hangs:
 * the DNS lookup behind {@code fqdn} is bounded and falls back to the host name.
 */
public final class Grains {

    private static final Logger log = LoggerFactory.getLogger(Grains.class);
    public static final Duration DEFAULT_FQDN_BOUND = Duration.ofSeconds(2);
    private static final Pattern IPV4_LITERAL = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    private final Map<String, Object> staticGrains;
    private final Path root;
    private final Callable<String> fqdnLookup;
    private final Duration fqdnBound;
    /** A lookup still running from an earlier collection is waited on again, never started twice. */
    private FutureTask<String> pendingLookup; // guarded by this

    private volatile Map<String, Object> current;

    /** Collects the grains of this host now; {@code staticGrains} come from {@code minion.yaml}. */
    public Grains(Map<String, ?> staticGrains) {
        this(staticGrains, Path.of("/"), () -> InetAddress.getLocalHost().getCanonicalHostName(), DEFAULT_FQDN_BOUND);
    }

    /**
     * For tests: {@code root} stands for {@code /} (os-release, /proc/meminfo, the host name are read under it) and
     * {@code fqdnLookup} for the DNS lookup.
     *
     * @throws IllegalArgumentException when a static grain has an empty name or a value that cannot be sent
     */
    Grains(Map<String, ?> staticGrains, Path root, Callable<String> fqdnLookup, Duration fqdnBound) {
        this.staticGrains = checkStatic(staticGrains);
        this.root = Objects.requireNonNull(root, "root");
        this.fqdnLookup = Objects.requireNonNull(fqdnLookup, "fqdnLookup");
        this.fqdnBound = Objects.requireNonNull(fqdnBound, "fqdnBound");
        synchronized (this) {
            this.current = collect();
        }
    }

    /** The current grains: immutable, sorted by name. */
    public Map<String, Object> get() {
        return current;
    }

    /** Collects the grains again; true when they differ from the previous snapshot. */
    public synchronized boolean refresh() {
        Map<String, Object> fresh = collect();
        boolean changed = !fresh.equals(current);
        current = fresh;
        return changed;
    }

    private Map<String, Object> collect() {
        TreeMap<String, Object> grains = new TreeMap<>();
        String kernel = kernel(System.getProperty("os.name", ""));
        grains.put("kernel", kernel);
        grains.put("kernelrelease", System.getProperty("os.version", ""));
        grains.put("cpuarch", cpuarch(System.getProperty("os.arch", "")));
        Map<String, String> release = OsRelease.read(root);
        if (release.isEmpty()) {
            String os = kernel.equals("Darwin") ? "MacOS" : kernel;
            grains.put("os", os);
            grains.put("os_family", os);
        } else {
            String os = OsRelease.osName(release);
            String version = release.getOrDefault("VERSION_ID", "");
            String major = version.split("\\.", 2)[0];
            grains.put("os", os);
            grains.put("os_family", OsRelease.family(os, release));
            grains.put("osfullname", release.getOrDefault("NAME", os));
            grains.put("osrelease", version);
            grains.put("oscodename", release.getOrDefault("VERSION_CODENAME", ""));
            if (!major.isEmpty() && major.length() < 10 && major.chars().allMatch(Character::isDigit)) {
                grains.put("osmajorrelease", Long.parseLong(major));
            }
            grains.put("osfinger", os + "-" + (os.equals("Ubuntu") || major.isEmpty() ? version : major));
        }
        String hostname = hostname();
        String fqdn = fqdn(hostname);
        int dot = fqdn.indexOf('.');
        grains.put("fqdn", fqdn);
        grains.put("host", dot > 0 ? fqdn.substring(0, dot) : fqdn);
        grains.put("domain", dot > 0 ? fqdn.substring(dot + 1) : "");
        addresses(grains);
        grains.put("num_cpus", (long) Runtime.getRuntime().availableProcessors());
        grains.put("mem_total", memTotalMiB());
        staticGrains.forEach((name, value) -> {
            if (value == null) {
                grains.remove(name);
            } else {
                grains.put(name, value);
            }
        });
        return Collections.unmodifiableSortedMap(grains);
    }

    /** Salt's kernel grain: uname's system name. */
    private static String kernel(String osName) {
        if (osName.startsWith("Mac") || osName.startsWith("Darwin")) {
            return "Darwin";
        }
        if (osName.startsWith("Windows")) {
            return "Windows";
        }
        return osName;
    }

    /** uname's machine name; the JVM says amd64 where uname says x86_64. */
    private static String cpuarch(String osArch) {
        return switch (osArch) {
            case "amd64" -> "x86_64";
            case "x86" -> "i686";
            default -> osArch;
        };
    }

    private String hostname() {
        for (String file : List.of("proc/sys/kernel/hostname", "etc/hostname")) {
            try {
                String name = Files.readString(root.resolve(file), StandardCharsets.UTF_8)
                        .strip();
                if (!name.isEmpty() && name.indexOf('\n') < 0) {
                    return name;
                }
            } catch (IOException e) {
                // Not Linux, or a minimal container: try the next source.
            }
        }
        String env = System.getenv("HOSTNAME");
        return env == null || env.isBlank() ? "localhost" : env.strip();
    }

    /** The DNS name of this host, within {@link #fqdnBound}; the host name when DNS is slow, broken or silent. */
    private String fqdn(String hostname) {
        if (pendingLookup == null || pendingLookup.isDone()) {
            pendingLookup = new FutureTask<>(fqdnLookup);
            Thread thread = new Thread(pendingLookup, "brine-grains-fqdn");
            thread.setDaemon(true); // a lookup stuck in the resolver must not keep the JVM alive
            thread.start();
        }
        try {
            String name = pendingLookup.get(fqdnBound.toNanos(), TimeUnit.NANOSECONDS);
            if (name == null || name.isBlank() || IPV4_LITERAL.matcher(name).matches() || name.indexOf(':') >= 0) {
                return hostname; // a reverse lookup that failed gives back the address itself
            }
            name = name.strip();
            return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
        } catch (TimeoutException e) {
            log.debug("Grains: fqdn lookup took longer than {}; using the host name {}", fqdnBound, hostname);
            return hostname;
        } catch (ExecutionException e) {
            log.debug(
                    "Grains: fqdn lookup failed: {}; using the host name {}",
                    e.getCause().toString(),
                    hostname);
            return hostname;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return hostname;
        }
    }

    /** ipv4 and ipv6: every address of every interface, loopback included (as Salt lists them). */
    private static void addresses(Map<String, Object> grains) {
        SortedSet<String> ipv4 = new TreeSet<>();
        SortedSet<String> ipv6 = new TreeSet<>();
        try {
            Enumeration<NetworkInterface> interfaces = NetworkInterface.getNetworkInterfaces();
            if (interfaces != null) {
                for (NetworkInterface ni : Collections.list(interfaces)) {
                    for (InetAddress address : Collections.list(ni.getInetAddresses())) {
                        if (address instanceof Inet4Address) {
                            ipv4.add(address.getHostAddress());
                        } else if (address instanceof Inet6Address) {
                            ipv6.add(compressIpv6(address.getHostAddress()));
                        }
                    }
                }
            }
        } catch (SocketException e) {
            log.debug("Grains: cannot list network interfaces: {}", e.toString());
        }
        grains.put("ipv4", List.copyOf(ipv4));
        grains.put("ipv6", List.copyOf(ipv6));
    }

    /**
     * The JVM prints IPv6 addresses uncompressed with a scope ({@code fe80:0:0:0:1:2:3:4%eth0}); Salt, like
     * {@code ip addr}, prints RFC 5952 form without the scope ({@code fe80::1:2:3:4}).
     */
    static String compressIpv6(String address) {
        int percent = address.indexOf('%');
        String bare = (percent >= 0 ? address.substring(0, percent) : address).toLowerCase(Locale.ROOT);
        String[] groups = bare.split(":", -1);
        if (groups.length != 8) {
            return bare;
        }
        int bestStart = -1;
        int bestLength = 1; // a single zero group is not compressed
        for (int i = 0; i < 8; ) {
            if (!groups[i].replaceFirst("^0+", "").isEmpty()) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && groups[j].replaceFirst("^0+", "").isEmpty()) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j;
        }
        for (int i = 0; i < 8; i++) {
            String trimmed = groups[i].replaceFirst("^0+", "");
            groups[i] = trimmed.isEmpty() ? "0" : trimmed;
        }
        if (bestStart < 0) {
            return String.join(":", groups);
        }
        return String.join(":", List.of(groups).subList(0, bestStart)) + "::"
                + String.join(":", List.of(groups).subList(bestStart + bestLength, 8));
    }

    /** Total memory in MiB (Salt's mem_total): /proc/meminfo, else what the JVM reports. */
    private long memTotalMiB() {
        try {
            for (String line : Files.readAllLines(root.resolve("proc/meminfo"), StandardCharsets.UTF_8)) {
                if (line.startsWith("MemTotal:")) {
                    String[] parts =
                            line.substring("MemTotal:".length()).strip().split("\\s+");
                    return Long.parseLong(parts[0]) / 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            // Not Linux: ask the JVM below.
        }
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getTotalMemorySize() / (1024 * 1024);
        }
        return 0;
    }

    private static Map<String, Object> checkStatic(Map<String, ?> given) {
        Map<String, Object> checked = new LinkedHashMap<>();
        given.forEach((name, value) -> {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("grains: a static grain has an empty name");
            }
            try {
                checked.put(name, Documents.normalize(value));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("grains." + name + ": " + e.getMessage(), e);
            }
        });
        return Collections.unmodifiableMap(checked);
    }
}

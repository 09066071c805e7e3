package io.brine.minion.grains;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code /etc/os-release} (systemd's format) and how Salt names what it finds: {@code ID=debian} is os "Debian",
 * {@code ID=rhel} is "RedHat", and the family comes from the os itself or from {@code ID_LIKE}.
 */
final class OsRelease {

    /** Salt's names for os-release IDs (salt/grains/core.py's _OS_NAME_MAP, the common part). */
    private static final Map<String, String> OS_NAMES = Map.ofEntries(
            Map.entry("debian", "Debian"),
            Map.entry("ubuntu", "Ubuntu"),
            Map.entry("raspbian", "Raspbian"),
            Map.entry("linuxmint", "Mint"),
            Map.entry("pop", "Pop"),
            Map.entry("kali", "Kali"),
            Map.entry("devuan", "Devuan"),
            Map.entry("rhel", "RedHat"),
            Map.entry("centos", "CentOS"),
            Map.entry("fedora", "Fedora"),
            Map.entry("rocky", "Rocky"),
            Map.entry("almalinux", "AlmaLinux"),
            Map.entry("ol", "OEL"),
            Map.entry("amzn", "Amazon"),
            Map.entry("sles", "SUSE"),
            Map.entry("opensuse", "openSUSE"),
            Map.entry("opensuse-leap", "Leap"),
            Map.entry("opensuse-tumbleweed", "openSUSE Tumbleweed"),
            Map.entry("arch", "Arch"),
            Map.entry("manjaro", "Manjaro"),
            Map.entry("alpine", "Alpine"),
            Map.entry("gentoo", "Gentoo"),
            Map.entry("void", "Void"),
            Map.entry("nixos", "NixOS"));

    /** Salt's os_family for each os name (the same table's families). */
    private static final Map<String, String> FAMILIES = Map.ofEntries(
            Map.entry("Debian", "Debian"),
            Map.entry("Ubuntu", "Debian"),
            Map.entry("Raspbian", "Debian"),
            Map.entry("Mint", "Debian"),
            Map.entry("Pop", "Debian"),
            Map.entry("Kali", "Debian"),
            Map.entry("Devuan", "Debian"),
            Map.entry("RedHat", "RedHat"),
            Map.entry("CentOS", "RedHat"),
            Map.entry("Fedora", "RedHat"),
            Map.entry("Rocky", "RedHat"),
            Map.entry("AlmaLinux", "RedHat"),
            Map.entry("OEL", "RedHat"),
            Map.entry("Amazon", "RedHat"),
            Map.entry("SUSE", "Suse"),
            Map.entry("openSUSE", "Suse"),
            Map.entry("Leap", "Suse"),
            Map.entry("openSUSE Tumbleweed", "Suse"),
            Map.entry("Arch", "Arch"),
            Map.entry("Manjaro", "Arch"),
            Map.entry("Alpine", "Alpine"),
            Map.entry("Gentoo", "Gentoo"),
            Map.entry("Void", "Void"),
            Map.entry("NixOS", "NixOS"));

    /** ID_LIKE words, for distributions the tables above do not know. */
    private static final Map<String, String> LIKE_FAMILIES = Map.of(
            "debian",
            "Debian",
            "ubuntu",
            "Debian",
            "rhel",
            "RedHat",
            "fedora",
            "RedHat",
            "centos",
            "RedHat",
            "suse",
            "Suse",
            "opensuse",
            "Suse",
            "arch",
            "Arch",
            "alpine",
            "Alpine",
            "gentoo",
            "Gentoo");

    private OsRelease() {}

    /** The os-release fields from the first of /etc/os-release and /usr/lib/os-release under {@code root}. */
    static Map<String, String> read(Path root) {
        for (String candidate : List.of("etc/os-release", "usr/lib/os-release")) {
            Path file = root.resolve(candidate);
            try {
                return parse(Files.readAllLines(file, StandardCharsets.UTF_8));
            } catch (IOException e) {
                // Try the next one; a system without either is not Linux or is very minimal.
            }
        }
        return Map.of();
    }

    /** KEY=VALUE lines; values may be quoted with ' or " and use backslash escapes inside double quotes. */
    static Map<String, String> parse(List<String> lines) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String raw : lines) {
            String line = raw.strip();
            int eq = line.indexOf('=');
            if (line.isEmpty() || line.startsWith("#") || eq <= 0) {
                continue;
            }
            fields.put(line.substring(0, eq), unquote(line.substring(eq + 1)));
        }
        return fields;
    }

    private static String unquote(String value) {
        if (value.length() >= 2 && value.charAt(0) == '\'' && value.endsWith("'")) {
            return value.substring(1, value.length() - 1);
        }
        if (value.length() >= 2 && value.charAt(0) == '"' && value.endsWith("\"")) {
            StringBuilder out = new StringBuilder();
            for (int i = 1; i < value.length() - 1; i++) {
                char c = value.charAt(i);
                if (c == '\\' && i + 1 < value.length() - 1) {
                    c = value.charAt(++i);
                }
                out.append(c);
            }
            return out.toString();
        }
        return value;
    }

    /** Salt's os grain for an os-release ID: its known name, or the ID capitalised. */
    static String osName(Map<String, String> fields) {
        String id = fields.getOrDefault("ID", "").toLowerCase(Locale.ROOT);
        if (id.isEmpty()) {
            return fields.getOrDefault("NAME", "");
        }
        String known = OS_NAMES.get(id);
        if (known != null) {
            return known;
        }
        if (id.startsWith("opensuse")) {
            return "openSUSE";
        }
        return Character.toUpperCase(id.charAt(0)) + id.substring(1);
    }

    /** The os family: from the os name, else the first ID_LIKE word with a known family, else the os itself. */
    static String family(String os, Map<String, String> fields) {
        String known = FAMILIES.get(os);
        if (known != null) {
            return known;
        }
        for (String like :
                fields.getOrDefault("ID_LIKE", "").toLowerCase(Locale.ROOT).split("\\s+")) {
            String family = LIKE_FAMILIES.get(like);
            if (family != null) {
                return family;
            }
        }
        return os;
    }
}

package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The master's packages form layers: no package cycle (the root, the daemon's wiring and the dispatcher, uses nearly
 * every other package, so none may use it), so the Salt and cluster parts stay behind interfaces the core owns
 * ({@code publish.SaltEnvelopes}, {@code salt.SaltInbound}, {@code jobs.SharedJobs}...). Read from the compiled
 * classes: every class a class file names (in its constant pool: references, descriptors, signatures), which is what
 * the JVM links, imports or not.
 */
class PackageCyclesTest {

    private static final String ROOT = "io/brine/master";
    /** A class of the master named in a class file: its package is what precedes the first upper-case segment. */
    private static final Pattern MASTER_CLASS = Pattern.compile(ROOT + "((?:/[a-z0-9_]+)*)/[A-Z]");

    /** Each package of the master (relative to the root, "" for the root) to the master's packages it uses. */
    private static Map<String, Set<String>> uses;

    @BeforeAll
    static void readClasses() throws Exception {
        Path classes = Path.of(MasterDaemon.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(classes.resolve(ROOT))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String from = packageOf(classes.relativize(file).toString().replace('\\', '/'));
                Set<String> used = uses.computeIfAbsent(from, unused -> new TreeSet<>());
                for (String name : constantStrings(file)) {
                    Matcher matcher = MASTER_CLASS.matcher(name);
                    while (matcher.find()) {
                        String to = matcher.group(1).isEmpty()
                                ? ""
                                : matcher.group(1).substring(1);
                        if (!to.equals(from)) {
                            used.add(to);
                        }
                    }
                }
            }
        }
    }

    @Test
    void theMasterPackagesFormNoCycle() {
        assertThat(uses).containsKeys("", "publish", "salt", "jobs", "session");
        assertThat(cycles()).as("package cycles in master (a -> b: a uses b)").isEmpty();
    }

    /** Each cycle once, as the path that closes it ("publish -> salt -> publish"). */
    private static List<String> cycles() {
        List<String> found = new ArrayList<>();
        Set<String> done = new TreeSet<>();
        for (String start : uses.keySet()) {
            walk(start, new ArrayList<>(), done, found);
        }
        return found;
    }

    private static void walk(String at, List<String> path, Set<String> done, List<String> found) {
        int seen = path.indexOf(at);
        if (seen >= 0) {
            List<String> cycle = new ArrayList<>(path.subList(seen, path.size()));
            cycle.add(at);
            found.add(String.join(
                    " -> ", cycle.stream().map(p -> p.isEmpty() ? "(root)" : p).toList()));
            return;
        }
        if (done.contains(at)) {
            return;
        }
        path.add(at);
        for (String next : uses.getOrDefault(at, Set.of())) {
            walk(next, path, done, found);
        }
        path.remove(path.size() - 1);
        done.add(at);
    }

    private static String packageOf(String classFile) {
        String dir = classFile.substring(0, classFile.lastIndexOf('/'));
        return dir.equals(ROOT) ? "" : dir.substring(ROOT.length() + 1);
    }

    /** The UTF-8 constants of a class file (JVMS 4.4): class names, descriptors and signatures among them. */
    private static List<String> constantStrings(Path classFile) throws IOException {
        List<String> strings = new ArrayList<>();
        try (InputStream stream = Files.newInputStream(classFile);
                DataInputStream in = new DataInputStream(stream)) {
            if (in.readInt() != 0xCAFEBABE) {
                throw new IOException("not a class file: " + classFile);
            }
            in.readUnsignedShort(); // minor
            in.readUnsignedShort(); // major
            int count = in.readUnsignedShort();
            for (int i = 1; i < count; i++) {
                int tag = in.readUnsignedByte();
                switch (tag) {
                    case 1 -> strings.add(in.readUTF());
                    case 7, 8, 16, 19, 20 -> in.skipBytes(2);
                    case 15 -> in.skipBytes(3);
                    case 3, 4, 9, 10, 11, 12, 17, 18 -> in.skipBytes(4);
                    case 5, 6 -> {
                        in.skipBytes(8);
                        i++; // a long or double takes two entries
                    }
                    default -> throw new IOException(classFile + ": unknown constant pool tag " + tag);
                }
            }
        }
        return strings;
    }
}

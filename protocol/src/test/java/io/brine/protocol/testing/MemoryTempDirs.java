package io.brine.protocol.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

/**
 * Every {@code @TempDir} of the unit tests in memory: under {@code /dev/shm} when it is a tmpfs that lets files run
 * (policy executables live in temp dirs) and has {@link #MIN_FREE} left, else where JUnit puts them (the system's
 * temp dir). The key store, the audit log and brine-key sync each write to disk as they must; on the build machine's
 * disk a sync took 3 to 30 ms, thousands of times a run (accepting 1,203 keys is about 5,000 of them), and on tmpfs it
 * costs nothing. What the tests check is unchanged: the same files, the same calls, the same permissions; none of them
 * cuts the power. Set as JUnit's default temp dir factory by surefire's configuration (the parent pom).
 */
public final class MemoryTempDirs implements TempDirFactory {

    static final Path SHM = Path.of("/dev/shm");

    /** Tests write returns of 8 MiB and more; a small tmpfs (a container's 64 MiB) is not used. */
    static final long MIN_FREE = 1L << 30;

    static final Optional<Path> ROOT = root(SHM, mounts());

    @Override
    public Path createTempDirectory(AnnotatedElementContext elementContext, ExtensionContext extensionContext)
            throws IOException {
        return ROOT.isPresent() ? Files.createTempDirectory(ROOT.get(), "junit") : Files.createTempDirectory("junit");
    }

    /** The memory root to use, given {@code /proc/mounts}' lines: {@code dir} when it is usable, else none. */
    static Optional<Path> root(Path dir, List<String> mounts) {
        // The last mount on the directory is the one in force.
        String[] mount = null;
        for (String line : mounts) {
            String[] fields = line.split(" ");
            if (fields.length >= 4 && fields[1].equals(dir.toString())) {
                mount = fields;
            }
        }
        boolean usable = mount != null
                && mount[2].equals("tmpfs")
                && !List.of(mount[3].split(",")).contains("noexec")
                && Files.isDirectory(dir)
                && Files.isWritable(dir)
                && usableSpace(dir) >= MIN_FREE;
        return usable ? Optional.of(dir) : Optional.empty();
    }

    private static long usableSpace(Path dir) {
        try {
            return Files.getFileStore(dir).getUsableSpace();
        } catch (IOException e) {
            return 0;
        }
    }

    private static List<String> mounts() {
        try {
            return Files.readAllLines(Path.of("/proc/mounts"));
        } catch (IOException e) {
            return List.of();
        }
    }
}

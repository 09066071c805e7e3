package io.brine.protocol.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A real small file system for a full-disk (or read-only) test: a tmpfs of the given size mounted at a directory (which needs
 * root: {@link #mount} fails with the reason, a test never skips) and unmounted by {@link #close}. tmpfs allocates
 * whole pages: once {@link #fill filled}, a file can still grow to the end of its last page, and not one byte past.
 */
public final class TinyFileSystem implements AutoCloseable {

    /** The page size of tmpfs on the machines the tests run on. */
    public static final int PAGE = 4096;

    private final Path root;

    private TinyFileSystem(Path root) {
        this.root = root;
    }

    /** Mounts a tmpfs of {@code size} ({@code 512k}, {@code 1m}), mode 0700, at {@code dir} (created). */
    public static TinyFileSystem mount(Path dir, String size) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Process mount = new ProcessBuilder(
                        "mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0700", "tmpfs", dir.toString())
                .redirectErrorStream(true)
                .start();
        String output = new String(mount.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (mount.waitFor() != 0) {
            throw new IllegalStateException("mount a tmpfs (needs root: run the tests as root): " + output);
        }
        return new TinyFileSystem(dir);
    }

    /** Mounts it again read-only: every write, root's too, fails with "Read-only file system". */
    public void remountReadOnly() throws IOException, InterruptedException {
        Process remount = new ProcessBuilder("mount", "-o", "remount,ro", root.toString())
                .redirectErrorStream(true)
                .start();
        String output = new String(remount.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (remount.waitFor() != 0) {
            throw new IllegalStateException("remount read-only: " + output);
        }
    }

    public Path root() {
        return root;
    }

    /** Takes all the space left with a file of its own, until the system says "No space left on device". */
    public void fill() throws IOException {
        try (OutputStream out = Files.newOutputStream(root.resolve("filler"))) {
            byte[] block = new byte[512];
            while (true) {
                out.write(block);
                out.flush();
            }
        } catch (IOException full) {
            if (!String.valueOf(full.getMessage()).contains("No space left on device")) {
                throw full;
            }
        }
    }

    /**
     * Appends one JSON line to {@code jsonLines} (an audit log) so that it ends exactly at a page: once the file
     * system is {@link #fill filled}, its next line cannot be written.
     */
    public static void endAtPage(Path jsonLines) throws IOException {
        long room = PAGE - Files.size(jsonLines) % PAGE;
        String pad = "{\"event\":\"pad\",\"pad\":\"\"}";
        if (room < pad.length() + 1) {
            room += PAGE;
        }
        Files.writeString(
                jsonLines,
                pad.replace("\"\"}", "\"" + "x".repeat((int) room - pad.length() - 1) + "\"}") + "\n",
                StandardOpenOption.APPEND);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        new ProcessBuilder("umount", root.toString()).inheritIO().start().waitFor();
    }
}

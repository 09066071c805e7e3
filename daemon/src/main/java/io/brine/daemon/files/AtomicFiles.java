package io.brine.daemon.files;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way brine writes files that matter (keys, the key store, caches, status files). Every write first makes a
 * temp file in the target's directory, created with its final permissions (never a window with the umask's) and
 * never through a link, and forces it to disk. Then:
 * <ul>
 * <li>{@link #create} links it to the name with link(2), which fails if anything (a file, a directory, a dangling
 * symlink) has that name: two writers racing for a name cannot both win, and no check-then-write window exists;</li>
 * <li>{@link #write} renames it over the name with rename(2), so readers see the old or the new content whole.</li>
 * </ul>
 * The directory is forced afterwards, so the new name survives a power loss. Temp files start with
 * {@value #TEMP_PREFIX}, which the id validator refuses, so they are never taken for keys; {@link #removeLeftovers}
 * removes those a crash left behind.
 */
public final class AtomicFiles {

    /** Temp files start with this; it fails the id validator, so a temp file is never mistaken for a key. */
    public static final String TEMP_PREFIX = ".tmp-";

    public static final Set<PosixFilePermission> OWNER_READ = PosixFilePermissions.fromString("r--------");
    public static final Set<PosixFilePermission> OWNER_RW = PosixFilePermissions.fromString("rw-------");
    public static final Set<PosixFilePermission> PUBLIC_READ = PosixFilePermissions.fromString("rw-r--r--");
    public static final Set<PosixFilePermission> OWNER_DIR = PosixFilePermissions.fromString("rwx------");

    private static final Logger LOG = LoggerFactory.getLogger(AtomicFiles.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private AtomicFiles() {}

    /**
     * Creates {@code target} holding {@code content} with {@code permissions}, atomically: the file appears whole or
     * not at all.
     *
     * @throws FileAlreadyExistsException if anything has that name, a symlink included (nothing is written then)
     */
    public static void create(Path target, byte[] content, Set<PosixFilePermission> permissions) throws IOException {
        createUnforced(target, content, permissions);
        forceDirectory(directoryOf(target));
    }

    /**
     * {@link #create} without forcing the directory: the content is on disk, the new name is not until the caller
     * forces the directory ({@link #forceDirectory}), once for many files created in it (a group commit). Nothing
     * that rests on the name may be acted on before that.
     *
     * @throws FileAlreadyExistsException if anything has that name, a symlink included (nothing is written then)
     */
    public static void createUnforced(Path target, byte[] content, Set<PosixFilePermission> permissions)
            throws IOException {
        Path temp = writeTemp(directoryOf(target), content, permissions);
        try {
            Files.createLink(target, temp);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /**
     * Writes {@code content} to {@code target} with {@code permissions}, replacing any file there atomically
     * (rename(2)): a reader sees the old content or the new, whole.
     *
     * @throws IOException if {@code target} is a symlink or a directory (neither is replaced nor followed)
     */
    public static void write(Path target, byte[] content, Set<PosixFilePermission> permissions) throws IOException {
        writeUnforced(target, content, permissions);
        forceDirectory(directoryOf(target));
    }

    /**
     * {@link #write} without forcing the directory: after a crash the name holds the old content or the new, whole,
     * and it is durable once the caller forces the directory ({@link #forceDirectory}), once for many files written
     * in it (a group commit). Nothing that rests on the new content may be acted on before that.
     *
     * @throws IOException if {@code target} is a symlink or a directory (neither is replaced nor followed)
     */
    public static void writeUnforced(Path target, byte[] content, Set<PosixFilePermission> permissions)
            throws IOException {
        Path dir = directoryOf(target);
        Optional<PosixFileAttributes> existing = attributes(target);
        if (existing.isPresent() && existing.get().isSymbolicLink()) {
            throw new IOException("refusing to replace symlink " + target);
        }
        if (existing.isPresent() && existing.get().isDirectory()) {
            throw new IOException("refusing to replace directory " + target);
        }
        Path temp = writeTemp(dir, content, permissions);
        try {
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            Files.deleteIfExists(temp);
            throw e;
        }
    }

    /**
     * Moves {@code from} to {@code to} with one rename(2), so the file is at every instant under exactly one of the
     * two names, and forces both directories. rename(2) replaces a file at {@code to}: a caller that must not
     * replace one checks under its own lock.
     */
    public static void move(Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        forceDirectory(directoryOf(to));
        forceDirectory(directoryOf(from));
    }

    /** Deletes {@code file} (a link itself, never its target) and forces its directory. */
    public static void delete(Path file) throws IOException {
        Files.delete(file);
        forceDirectory(directoryOf(file));
    }

    /**
     * Creates {@code dir} with mode 0700 (and missing parents) when it does not exist; refuses a symlink or a
     * non-directory by that name.
     */
    public static void ensureDirectory(Path dir) throws IOException {
        Optional<PosixFileAttributes> existing = attributes(dir);
        if (existing.isEmpty()) {
            Path parent = dir.toAbsolutePath().getParent();
            if (parent != null && attributes(parent).isEmpty()) {
                Files.createDirectories(parent);
            }
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_DIR));
                // The umask can only have removed bits; set exactly 0700.
                setMode(dir, OWNER_DIR);
                if (parent != null) {
                    forceDirectory(parent);
                }
                return;
            } catch (FileAlreadyExistsException e) {
                existing = attributes(dir);
            }
        }
        PosixFileAttributes attributes = existing.orElseThrow(() -> new NoSuchFileException(dir.toString()));
        if (attributes.isSymbolicLink()) {
            throw new IOException("refusing to use symlink " + dir + " as a directory");
        }
        if (!attributes.isDirectory()) {
            throw new IOException(dir + " exists and is not a directory");
        }
    }

    /**
     * Removes the temp files a crash left in {@code dir}. Only call it when no writer can be working in {@code dir}
     * (at start-up, or under the lock every writer holds): a live writer's temp file looks the same.
     *
     * @return how many were removed
     */
    public static int removeLeftovers(Path dir) throws IOException {
        int removed = 0;
        try (DirectoryStream<Path> entries =
                Files.newDirectoryStream(dir, p -> isTemp(p.getFileName().toString()))) {
            for (Path temp : entries) {
                LOG.info("Removing temp file {} left by an interrupted write", temp);
                if (Files.deleteIfExists(temp)) {
                    removed++;
                }
            }
        }
        return removed;
    }

    /** Whether {@code fileName} is one of this class's temp files. */
    public static boolean isTemp(String fileName) {
        return fileName.startsWith(TEMP_PREFIX);
    }

    /** Attributes of {@code path} itself (a link is not followed), or empty when nothing has that name. */
    public static Optional<PosixFileAttributes> attributes(Path path) throws IOException {
        try {
            return Optional.of(Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /** Sets the mode of {@code path} itself, never following a link. */
    public static void setMode(Path path, Set<PosixFilePermission> mode) throws IOException {
        Files.getFileAttributeView(path, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .setPermissions(mode);
    }

    /** Forces a directory's entries (a link, rename or unlink) to disk. */
    public static void forceDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException e) {
            // Some file systems cannot open or sync a directory; the link or rename itself is still atomic.
            LOG.debug("Cannot fsync directory {}: {}", dir, e.toString());
        }
    }

    /**
     * Reads a small regular file without following a link.
     *
     * @throws IOException when it is a symlink or not a regular file, or is larger than {@code maxBytes}
     */
    public static byte[] readSmall(Path file, int maxBytes) throws IOException {
        Optional<PosixFileAttributes> attributes = attributes(file);
        if (attributes.isEmpty()) {
            throw new NoSuchFileException(file.toString());
        }
        if (attributes.get().isSymbolicLink()) {
            throw new IOException("refusing to read symlink " + file);
        }
        if (!attributes.get().isRegularFile()) {
            throw new IOException(file + " is not a regular file");
        }
        // O_NOFOLLOW too: a link put there since the check fails the open instead of being followed.
        try (SeekableByteChannel channel = Files.newByteChannel(
                        file, Set.<OpenOption>of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
                InputStream in = Channels.newInputStream(channel)) {
            byte[] bytes = in.readNBytes(maxBytes + 1);
            if (bytes.length > maxBytes) {
                throw new IOException(file + " is larger than " + maxBytes + " bytes");
            }
            return bytes;
        }
    }

    /** Writes {@code content} to a new temp file in {@code dir} with exactly {@code mode}, forced to disk. */
    private static Path writeTemp(Path dir, byte[] content, Set<PosixFilePermission> mode) throws IOException {
        // The name holds no part of the target's: a 253-byte id plus a prefix would pass NAME_MAX.
        Path temp = dir.resolve(TEMP_PREFIX + HexFormat.of().formatHex(randomBytes()));
        boolean written = false;
        // The mode is given to open(2) itself (a read-only mode such as 0400 does not stop this first write).
        try (FileChannel channel = FileChannel.open(
                temp,
                Set.<OpenOption>of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(mode))) {
            ByteBuffer buffer = ByteBuffer.wrap(content);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
            // The umask can only have removed bits of a wider mode (0644); set it exactly.
            setMode(temp, mode);
            written = true;
        } finally {
            if (!written) {
                Files.deleteIfExists(temp);
            }
        }
        return temp;
    }

    private static Path directoryOf(Path file) {
        Path parent = file.toAbsolutePath().getParent();
        if (parent == null) {
            throw new IllegalArgumentException(file + " has no directory");
        }
        return parent;
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[8];
        RANDOM.nextBytes(bytes);
        return bytes;
    }
}

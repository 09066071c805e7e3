package io.brine.daemon.files;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Set;

/**
 * Files written the way key material must be: the permissions are set when the file is created (never a window
 * with the umask's), the content is written to a temp file in the same directory, forced to disk, and atomically
 * renamed over the target, and the directory is forced too. Symlinks are never followed.
 */
public final class AtomicFiles {

    /** Temp files start with this; it fails the id validator, so a temp file is never mistaken for a key. */
    public static final String TEMP_PREFIX = ".tmp-";

    public static final Set<PosixFilePermission> OWNER_READ = PosixFilePermissions.fromString("r--------");
    public static final Set<PosixFilePermission> OWNER_RW = PosixFilePermissions.fromString("rw-------");
    public static final Set<PosixFilePermission> PUBLIC_READ = PosixFilePermissions.fromString("rw-r--r--");
    public static final Set<PosixFilePermission> OWNER_DIR = PosixFilePermissions.fromString("rwx------");

    private static final SecureRandom RANDOM = new SecureRandom();

    private AtomicFiles() {
    }

    /** Writes {@code content} to {@code target} atomically with {@code permissions}, replacing any file there. */
    public static void write(Path target, byte[] content, Set<PosixFilePermission> permissions) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        if (Files.isSymbolicLink(target)) {
            throw new IOException("refusing to replace symlink " + target);
        }
        Path temp = dir.resolve(TEMP_PREFIX + target.getFileName() + "-" + HexFormat.of().formatHex(randomBytes()));
        try {
            try (FileChannel channel = FileChannel.open(temp, Set.of(StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                    PosixFilePermissions.asFileAttribute(withOwnerWrite(permissions)))) {
                ByteBuffer buffer = ByteBuffer.wrap(content);
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
                channel.force(true);
            }
            // The final mode may lack owner-write (0400): set it once the content is in.
            Files.setPosixFilePermissions(temp, permissions);
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            forceDirectory(dir);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /** Like {@link #write} but fails with {@link FileAlreadyExistsException} when {@code target} exists. */
    public static void create(Path target, byte[] content, Set<PosixFilePermission> permissions) throws IOException {
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
            throw new FileAlreadyExistsException(target.toString());
        }
        write(target, content, permissions);
    }

    /** Creates {@code dir} (and parents) with mode 0700 where missing; refuses a symlink or a non-directory. */
    public static void ensureDirectory(Path dir) throws IOException {
        if (Files.isSymbolicLink(dir)) {
            throw new IOException("refusing to use symlink " + dir + " as a directory");
        }
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            Path parent = dir.toAbsolutePath().getParent();
            if (parent != null && !Files.exists(parent)) {
                Files.createDirectories(parent);
            }
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_DIR));
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                    throw new IOException(dir + " exists and is not a directory");
                }
            }
        }
    }

    /** Forces a directory's entries (a rename) to disk. */
    public static void forceDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException e) {
            // Some file systems cannot open a directory for fsync; the rename is still atomic.
            if (!"Is a directory".equals(e.getMessage())) {
                throw e;
            }
        }
    }

    /** Reads a small file without following a symlink; refuses files over {@code maxBytes}. */
    public static byte[] readSmall(Path file, int maxBytes) throws IOException {
        if (Files.isSymbolicLink(file)) {
            throw new IOException("refusing to read symlink " + file);
        }
        try (FileChannel channel = FileChannel.open(file, Set.of(StandardOpenOption.READ,
                LinkOption.NOFOLLOW_LINKS))) {
            long size = channel.size();
            if (size > maxBytes) {
                throw new IOException(file + " is larger than " + maxBytes + " bytes");
            }
            ByteBuffer buffer = ByteBuffer.allocate((int) size);
            while (buffer.hasRemaining() && channel.read(buffer) >= 0) {
                // keep reading
            }
            return buffer.array();
        }
    }

    private static Set<PosixFilePermission> withOwnerWrite(Set<PosixFilePermission> permissions) {
        Set<PosixFilePermission> writable = java.util.EnumSet.copyOf(permissions);
        writable.add(PosixFilePermission.OWNER_WRITE);
        return writable;
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[6];
        RANDOM.nextBytes(bytes);
        return bytes;
    }
}

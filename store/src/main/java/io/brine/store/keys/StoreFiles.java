package io.brine.store.keys;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file operations the key store is built from. Every write goes to a temp file (created with its final
 * permissions, never through a link), is forced to disk, then renamed into place, and the directory is forced too.
 * Temp files start with {@value #TEMP_PREFIX}, a name the id validator refuses, so they are never taken for keys.
 */
final class StoreFiles {

    static final String TEMP_PREFIX = ".tmp-";
    static final Set<PosixFilePermission> DIR_MODE = PosixFilePermissions.fromString("rwx------");
    static final Set<PosixFilePermission> KEY_MODE = PosixFilePermissions.fromString("rw-------");
    static final Set<PosixFilePermission> PRIVATE_MODE = PosixFilePermissions.fromString("r--------");
    static final Set<PosixFilePermission> PUBLIC_MODE = PosixFilePermissions.fromString("rw-r--r--");

    private static final Logger log = LoggerFactory.getLogger(StoreFiles.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Set<PosixFilePermission> GROUP_OTHER = EnumSet.of(PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);
    private static final Set<PosixFilePermission> GROUP_OTHER_WRITE = EnumSet.of(PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.OTHERS_WRITE);

    private StoreFiles() {
    }

    static boolean isTemp(String name) {
        return name.startsWith(TEMP_PREFIX);
    }

    /** Attributes of {@code path} itself (a link is not followed), or empty when it does not exist. */
    static Optional<PosixFileAttributes> attributes(Path path) throws IOException {
        try {
            return Optional.of(Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    static boolean groupOrOtherAccess(PosixFileAttributes attributes) {
        return attributes.permissions().stream().anyMatch(GROUP_OTHER::contains);
    }

    static boolean groupOrOtherWrite(PosixFileAttributes attributes) {
        return attributes.permissions().stream().anyMatch(GROUP_OTHER_WRITE::contains);
    }

    /**
     * Makes sure {@code dir} is a directory that is not a link and not writable by group or others, creating it
     * 0700 when it is missing.
     */
    static void ensureDirectory(Path dir) throws IOException, KeyStoreException {
        Optional<PosixFileAttributes> existing = attributes(dir);
        if (existing.isEmpty()) {
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(DIR_MODE));
                // The umask may only have removed bits; set exactly 0700.
                setMode(dir, DIR_MODE);
                fsyncDirectory(dir.getParent());
                return;
            } catch (FileAlreadyExistsException e) {
                existing = attributes(dir);
            }
        }
        PosixFileAttributes attributes = existing.orElseThrow(() -> new NoSuchFileException(dir.toString()));
        if (attributes.isSymbolicLink()) {
            throw new KeyStoreException(dir + " is a symbolic link; the key store refuses links inside pki_dir");
        }
        if (!attributes.isDirectory()) {
            throw new KeyStoreException(dir + " is not a directory");
        }
        if (groupOrOtherWrite(attributes)) {
            throw new KeyStoreException(dir + " is writable by group or others (mode "
                    + PosixFilePermissions.toString(attributes.permissions()) + "); run: chmod 700 " + dir);
        }
        if (groupOrOtherAccess(attributes)) {
            // Made by hand (e.g. mkdir with the usual umask): nobody else needs to list the minions.
            log.info("Setting mode 0700 on {} (was {})", dir, PosixFilePermissions.toString(attributes.permissions()));
            setMode(dir, DIR_MODE);
        }
    }

    /** Sets the mode of {@code path} itself, never following a link. */
    static void setMode(Path path, Set<PosixFilePermission> mode) throws IOException {
        Files.getFileAttributeView(path, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .setPermissions(mode);
    }

    /** Writes {@code content} to a new temp file in {@code dir} with {@code mode}, forced to disk. */
    static Path writeTemp(Path dir, byte[] content, Set<PosixFilePermission> mode) throws IOException {
        Path temp = dir.resolve(TEMP_PREFIX + HexFormat.of().formatHex(randomBytes()));
        boolean written = false;
        try (FileChannel channel = FileChannel.open(temp, Set.<java.nio.file.OpenOption>of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS), PosixFilePermissions.asFileAttribute(mode))) {
            ByteBuffer buffer = ByteBuffer.wrap(content);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
            written = true;
        } finally {
            if (!written) {
                Files.deleteIfExists(temp);
            }
        }
        // The umask may have removed bits of a wider mode (0644); set it exactly.
        setMode(temp, mode);
        return temp;
    }

    /**
     * Publishes {@code content} as {@code dir/name}, failing with {@link FileAlreadyExistsException} if that name
     * exists: the temp file is hard-linked into place (link(2) never replaces), then its temp name is removed.
     */
    static void writeNew(Path dir, String name, byte[] content, Set<PosixFilePermission> mode) throws IOException {
        Path temp = writeTemp(dir, content, mode);
        try {
            Files.createLink(dir.resolve(name), temp);
        } finally {
            Files.deleteIfExists(temp);
        }
        fsyncDirectory(dir);
    }

    /** Atomically replaces (or creates) {@code dir/name} with {@code content}. */
    static void replace(Path dir, String name, byte[] content, Set<PosixFilePermission> mode) throws IOException {
        Path temp = writeTemp(dir, content, mode);
        try {
            Files.move(temp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            Files.deleteIfExists(temp);
            throw e;
        }
        fsyncDirectory(dir);
    }

    /**
     * Moves {@code from} to {@code to} with one rename(2), so the file is at every instant under exactly one of
     * the two names. The caller holds the store lock and has checked that {@code to} does not exist (rename(2)
     * would replace it).
     */
    static void move(Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        fsyncDirectory(to.getParent());
        fsyncDirectory(from.getParent());
    }

    static void delete(Path file) throws IOException {
        Files.delete(file);
        fsyncDirectory(file.getParent());
    }

    /** Forces a directory's entries to disk, so a rename or unlink survives a power loss. */
    static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException e) {
            // Some file systems cannot open or sync a directory; the rename itself is still atomic.
            log.debug("Cannot fsync directory {}: {}", dir, e.toString());
        }
    }

    /**
     * Reads a small regular file without following a link.
     *
     * @throws IOException when it is not a regular file or is larger than {@code maxBytes}
     */
    static byte[] readSmall(Path file, int maxBytes) throws IOException {
        try (SeekableByteChannel channel = Files.newByteChannel(file, Set.<java.nio.file.OpenOption>of(StandardOpenOption.READ,
                LinkOption.NOFOLLOW_LINKS)); InputStream in = Channels.newInputStream(channel)) {
            byte[] bytes = in.readNBytes(maxBytes + 1);
            if (bytes.length > maxBytes) {
                throw new IOException("larger than " + maxBytes + " bytes");
            }
            return bytes;
        }
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[8];
        RANDOM.nextBytes(bytes);
        return bytes;
    }
}

package io.brine.daemon.files;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Optional;

/**
 * Whether a daemon can open a file it appends to ({@code log_file}, the audit log) the way it will at start, asked
 * before it starts and by {@code --check-config}: without this a log file Logback cannot open leaves a daemon
 * serving and logging nowhere. The check leaves nothing behind: an existing file is opened for appending and
 * closed; a missing one (or the first missing directory, where the daemon creates its directories) is created
 * exclusively and removed again, so a check run as root never leaves a root-owned file the daemon's user cannot
 * open. A problem names the file, the system's reason, the owner and mode of the file or directory at fault, the
 * user this process runs as, and the fix.
 */
public final class WritableFile {

    private WritableFile() {}

    /**
     * Why {@code file} cannot be opened for appending by this process, or empty when it can.
     *
     * @param key the config key naming the file ({@code log_file}, {@code audit_log}), for the message
     * @param createsDirectories whether the daemon creates missing directories on the way (the audit log's
     *     cachedir) or needs them to exist ({@code log_file})
     */
    public static Optional<String> problem(String key, Path file, boolean createsDirectories) {
        Path absolute = file.toAbsolutePath().normalize();
        try {
            if (Files.exists(absolute)) {
                openExisting(absolute);
                return Optional.empty();
            }
            Path existing = absolute.getParent();
            while (existing != null && !Files.exists(existing)) {
                existing = existing.getParent();
            }
            if (existing == null) {
                return Optional.of(key + " " + file + ": no directory of its path exists");
            }
            Path firstMissing = existing.resolve(absolute.getName(existing.getNameCount()));
            if (!firstMissing.equals(absolute) && !createsDirectories && Files.isDirectory(existing)) {
                return Optional.of(key + " " + file + " cannot be created: directory " + absolute.getParent()
                        + " does not exist (" + describe(existing) + "). Fix: create it writable by " + userName()
                        + " (install -d -o " + userName() + " " + absolute.getParent() + "; under systemd,"
                        + " LogsDirectory= in the unit makes one under /var/log), or set " + key + " elsewhere.");
            }
            try {
                probeCreate(firstMissing, !firstMissing.equals(absolute));
            } catch (IOException e) {
                return Optional.of(key + " " + file + " cannot be created: " + reason(e) + " (" + describe(existing)
                        + "). Fix: " + fix(key, existing, e));
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of(key + " " + file + " cannot be opened for writing: " + reason(e) + " ("
                    + describe(absolute) + "). Fix: " + fix(key, absolute, e));
        }
    }

    /**
     * Why the daemon could not use the directory {@code dir} ({@code pki_dir}, {@code cachedir}) as it will at start,
     * or empty when it can: it must be a directory (or creatable, as the daemon creates it), this process must be
     * able to create files in it, and each of {@code files} found there (the pki dir's {@code .lock}) must open for
     * writing. The check leaves nothing behind, as {@link #problem} does.
     */
    public static Optional<String> directoryProblem(String key, Path dir, String... files) {
        Path absolute = dir.toAbsolutePath().normalize();
        if (!Files.exists(absolute)) {
            return problem(key, absolute, true);
        }
        if (!Files.isDirectory(absolute)) {
            return Optional.of(key + " " + dir + " is not a directory (" + describe(absolute) + "). Fix: "
                    + fix(key, absolute, new FileSystemException(absolute.toString(), null, "Not a directory")));
        }
        try {
            probeCreate(
                    absolute.resolve(".brine-check-" + ProcessHandle.current().pid()), false);
        } catch (IOException e) {
            return Optional.of(key + " " + dir + " is not writable: " + reason(e) + " (" + describe(absolute)
                    + "). Fix: " + fix(key, absolute, e));
        }
        for (String name : files) {
            Path file = absolute.resolve(name);
            if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                try {
                    openExisting(file);
                } catch (IOException e) {
                    return Optional.of(key + " " + dir + ": " + cannotOpen(key, file, e));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Why this process cannot list the directory {@code dir}, or empty when it can: "DIR cannot be read: permission
     * denied (directory DIR is owned by brine:brine (uid 998), mode 0700; this process runs as alice (uid 1000))".
     * Without it, a tool that looks for files in a directory it may not search sees only "not there".
     */
    public static Optional<String> unreadableDirectory(Path dir) {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            entries.iterator().hasNext();
            return Optional.empty();
        } catch (IOException | DirectoryIteratorException e) {
            IOException io = e instanceof DirectoryIteratorException d ? d.getCause() : (IOException) e;
            return Optional.of(dir + " cannot be read: " + reason(io) + " (" + describe(dir) + ")");
        }
    }

    /**
     * "FILE cannot be opened for writing: REASON (owner, mode, user). Fix: ...": for a daemon's file it failed to
     * open (the pki dir's {@code .lock}), where the JDK's exception says only the path for "permission denied".
     *
     * @param key the config key whose directory holds the file ({@code pki_dir}), for the fix
     */
    public static String cannotOpen(String key, Path file, IOException e) {
        Path at = Files.exists(file, LinkOption.NOFOLLOW_LINKS) || file.getParent() == null ? file : file.getParent();
        return file + " cannot be opened for writing: " + reason(e) + " (" + describe(at) + "). Fix: "
                + fix(key, at, e);
    }

    private static void openExisting(Path file) throws IOException {
        try (FileChannel ignored = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            // opened as the daemon will: that is the check
        }
    }

    /** Creates {@code path} exclusively and removes it again: the right to create is what is checked. */
    private static void probeCreate(Path path, boolean directory) throws IOException {
        if (directory) {
            Files.createDirectory(path);
        } else {
            FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
                    .close();
        }
        Files.delete(path);
    }

    /** The system's reason, as {@code strerror} says it, lower case. */
    static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException) {
            return "no such file or directory";
        }
        if (e instanceof NotDirectoryException) {
            return "not a directory";
        }
        if (e instanceof FileSystemException fs && fs.getReason() != null) {
            return fs.getReason().toLowerCase(Locale.ROOT);
        }
        return String.valueOf(e.getMessage());
    }

    /** "directory /var/log is owned by root:root (uid 0), mode 0755; this process runs as brine (uid 998)". */
    static String describe(Path path) {
        String what;
        try {
            int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            int uid = (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            String owner = Files.getOwner(path, LinkOption.NOFOLLOW_LINKS).getName();
            Object group = Files.getAttribute(path, "posix:group", LinkOption.NOFOLLOW_LINKS);
            String kind = Files.isSymbolicLink(path)
                    ? "symbolic link"
                    : Files.isDirectory(path) ? "directory" : Files.isRegularFile(path) ? "regular file" : "file";
            what = kind + " " + path + " is owned by " + owner + ":" + group + " (uid " + uid + "), mode "
                    + String.format("%04o", mode & 07777);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            what = path + " cannot be examined: " + reason(e instanceof IOException io ? io : new IOException(e));
        }
        return what + "; this process runs as " + user();
    }

    private static String fix(String key, Path atFault, IOException e) {
        String elsewhere = "or set " + key + " elsewhere.";
        if (reason(e).equals("not a directory")) {
            return atFault + " must be a directory, " + elsewhere;
        }
        if (reason(e).equals("is a directory")) {
            return atFault + " must be a regular file: remove the directory (the daemon creates the file), "
                    + elsewhere;
        }
        if (reason(e).equals("read-only file system")) {
            return "the file system holding " + atFault + " is mounted read-only: mount it read-write, " + elsewhere;
        }
        return "let " + userName() + " write " + atFault + " (chown or chmod; under systemd the unit's LogsDirectory="
                + " or CacheDirectory= makes such a directory), " + elsewhere;
    }

    private static String userName() {
        return System.getProperty("user.name", "?");
    }

    private static String user() {
        return userName() + " (uid " + TrustedPath.processUid() + ")";
    }
}

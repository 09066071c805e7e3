package io.brine.store.audit;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.util.Set;

/**
 * The append-only audit log, {@code cachedir/audit.log}: one JSON object per line ({@code time} in ISO-8601 UTC,
 * then the {@link AuditEvent}'s fields). Several processes (the master, any number of brine-key runs) append to
 * the same file: it is opened with {@code O_APPEND} and each line is one {@code write}, so lines never
 * interleave. The file is created 0600 and never through a symbolic link. {@link #reopen()} (the master's SIGHUP)
 * starts appending to a new file at the same path, so logrotate can move the old one away.
 */
public final class FileAuditLog implements AuditLog {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path file;
    private final Clock clock;
    /** Guarded by {@code this}: replaced by {@link #reopen()}. */
    private FileChannel channel;

    private FileAuditLog(Path file, Clock clock, FileChannel channel) {
        this.file = file;
        this.clock = clock;
        this.channel = channel;
    }

    /** See {@link AuditLog#openFile}. */
    static FileAuditLog open(Path file, Clock clock) throws IOException {
        Files.createDirectories(
                file.toAbsolutePath().getParent(),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        requireRegularOrMissing(file);
        return new FileAuditLog(file, clock, openChannel(file));
    }

    /** Refuses a {@code file} that is there but is not a regular file (a symbolic link, a directory). */
    private static void requireRegularOrMissing(Path file) throws IOException {
        try {
            BasicFileAttributes attributes =
                    Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attributes.isRegularFile()) {
                throw new IOException(
                        file + " is not a regular file" + (attributes.isSymbolicLink() ? " (a symbolic link)" : ""));
            }
        } catch (NoSuchFileException e) {
            // created by openChannel
        }
    }

    private static FileChannel openChannel(Path file) throws IOException {
        return FileChannel.open(
                file,
                Set.<OpenOption>of(
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND,
                        LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    }

    /**
     * Appends from now on to the file at {@link #file()}, created if it was moved away (logrotate), under the same
     * rules as at open. Lines being written go to one file or the other, whole. When the new file cannot be opened
     * the old one stays in use.
     *
     * @throws IOException when the file cannot be opened; the log keeps writing where it did
     */
    public void reopen() throws IOException {
        requireRegularOrMissing(file); // moved away: created again
        FileChannel fresh = openChannel(file);
        FileChannel old;
        synchronized (this) {
            old = channel;
            channel = fresh;
        }
        old.close();
    }

    public Path file() {
        return file;
    }

    /**
     * {@inheritDoc} One line, not forced to disk ({@link #sync()} does that): a crash may lose the last lines, never
     * corrupt earlier ones.
     */
    @Override
    public void record(AuditEvent event) {
        byte[] bytes = (line(event, clock.instant()) + "\n").getBytes(StandardCharsets.UTF_8);
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        synchronized (this) {
            long before = -1;
            try {
                before = channel.size();
                // One write(2) per line: with O_APPEND, lines from several processes never interleave.
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
            } catch (IOException e) {
                // Whole or not at all: a part of the line (a full disk) is cut off again, unless someone appended
                // after it, so that the next record starts on a line of its own.
                if (buffer.position() > 0 && before >= 0) {
                    try {
                        if (channel.size() <= before + buffer.position()) {
                            channel.truncate(before);
                        }
                    } catch (IOException ignored) {
                        // nothing more can be done; the error below says the record is missing
                    }
                }
                throw new UncheckedIOException("cannot write to " + file + ": " + e.getMessage(), e);
            }
        }
    }

    @Override
    public void sync() {
        try {
            FileChannel current;
            synchronized (this) {
                current = channel;
            }
            current.force(false);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot sync " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * {@code event} at {@code time} as one audit line's JSON, without its newline: the audit log's format, also
     * the cluster's audit records in ZooKeeper.
     */
    public static String line(AuditEvent event, Instant time) {
        ObjectNode line = JSON.createObjectNode();
        line.put("time", time.toString());
        line.put("event", event.event());
        line.put("actor", event.actor());
        putIfSet(line, "id", event.id());
        putIfSet(line, "from", event.from());
        putIfSet(line, "to", event.to());
        putIfSet(line, "fingerprint", event.fingerprint());
        putIfSet(line, "reason", event.reason());
        putIfSet(line, "source", event.source());
        return line.toString();
    }

    private static void putIfSet(ObjectNode line, String field, String value) {
        if (value != null) {
            line.put(field, value);
        }
    }

    @Override
    public synchronized void close() {
        try {
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

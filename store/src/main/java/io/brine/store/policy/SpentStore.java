package io.brine.store.policy;

import io.brine.daemon.files.AtomicFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What single-use things (provisioning grants, autosign tokens) have been spent, kept on disk so a replay after a
 * restart is still refused. One file under {@code cachedir}, one line per change: {@code KEY EXPIRES} where KEY is
 * a hex digest and EXPIRES the epoch second after which the record may be forgotten (0 gives a spend back). A line
 * is appended and forced before {@link #spend} returns true; the file is rewritten atomically, without expired
 * records, when it has grown to twice what is live. A missing or damaged file reads as what it holds that is valid.
 */
final class SpentStore implements SpentRecord {

    private static final Logger LOG = LoggerFactory.getLogger(SpentStore.class);
    private static final Pattern KEY = Pattern.compile("[0-9a-f]{16,128}");
    private static final int MAX_BYTES = 64 * 1024 * 1024;

    private final Path file;
    private final Clock clock;
    private final Map<String, Long> spent = new HashMap<>();
    private boolean loaded;
    private int lines;

    SpentStore(Path file, Clock clock) {
        this.file = file;
        this.clock = clock;
    }

    /** Whether {@code key} is spent and not yet expired. */
    @Override
    public synchronized boolean isSpent(String key) throws IOException {
        load();
        Long expires = spent.get(key);
        return expires != null && expires > clock.instant().getEpochSecond();
    }

    /**
     * Spends {@code key} until {@code expires}, durably. Returns false when it is already spent.
     *
     * @throws IOException when it cannot be recorded: the caller must not accept
     */
    @Override
    public synchronized boolean spend(String key, Instant expires) throws IOException {
        requireKey(key);
        if (isSpent(key)) {
            return false;
        }
        append(key, expires.getEpochSecond());
        spent.put(key, expires.getEpochSecond());
        return true;
    }

    /** Gives a spend back, when what it paid for did not happen after all (the key store did not accept). */
    @Override
    public synchronized void unspend(String key) {
        try {
            load();
            if (spent.remove(key) != null) {
                append(key, 0);
            }
        } catch (IOException e) {
            LOG.warn(
                    "Cannot record in {} that {} was not used after all: {}; it stays spent",
                    file,
                    key,
                    e.getMessage());
        }
    }

    private void load() throws IOException {
        if (loaded) {
            return;
        }
        byte[] content;
        try {
            content = AtomicFiles.readSmall(file, MAX_BYTES);
        } catch (NoSuchFileException e) {
            content = new byte[0];
        }
        long now = clock.instant().getEpochSecond();
        for (String line : new String(content, StandardCharsets.US_ASCII).split("\n")) {
            String[] parts = line.split(" ");
            if (parts.length != 2 || !KEY.matcher(parts[0]).matches() || !parts[1].matches("[0-9]{1,19}")) {
                if (!line.isEmpty()) {
                    LOG.warn("{}: skipped a damaged line", file);
                }
                continue;
            }
            lines++;
            long expires = Long.parseLong(parts[1]);
            if (expires > now) {
                spent.put(parts[0], expires);
            } else {
                spent.remove(parts[0]);
            }
        }
        loaded = true;
    }

    private void append(String key, long expires) throws IOException {
        if (lines > 1000 && lines > 2 * spent.size()) {
            compact();
        }
        AtomicFiles.ensureDirectory(file.toAbsolutePath().getParent());
        try (FileChannel channel = FileChannel.open(
                file,
                Set.of(
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND,
                        LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(AtomicFiles.OWNER_RW))) {
            ByteBuffer line = ByteBuffer.wrap((key + " " + expires + "\n").getBytes(StandardCharsets.US_ASCII));
            while (line.hasRemaining()) {
                channel.write(line);
            }
            channel.force(true);
        }
        lines++;
    }

    private void compact() throws IOException {
        long now = clock.instant().getEpochSecond();
        spent.values().removeIf(expires -> expires <= now);
        StringBuilder content = new StringBuilder();
        spent.forEach((key, expires) ->
                content.append(key).append(' ').append(expires).append('\n'));
        AtomicFiles.write(file, content.toString().getBytes(StandardCharsets.US_ASCII), AtomicFiles.OWNER_RW);
        lines = spent.size();
    }

    private static void requireKey(String key) {
        if (!KEY.matcher(key).matches()) {
            throw new IllegalArgumentException("not a hex digest");
        }
    }

    @Override
    public String toString() {
        return "SpentStore[" + file + "]";
    }

    /** For tests: whether the file exists. */
    boolean exists() {
        return Files.exists(file, LinkOption.NOFOLLOW_LINKS);
    }
}

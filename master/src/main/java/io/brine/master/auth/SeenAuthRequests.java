package io.brine.master.auth;

import io.brine.daemon.files.AtomicFiles;
import io.brine.daemon.files.TrustedPath;
import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.Timestamps;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The newest auth request the master has decided on, per minion id and key, kept on disk so that a request seen
 * before a restart is refused after it (PROTOCOL.md 8.1 step 6). The nonces the master remembers live in memory;
 * this is what lets it forget them: a request from a key is taken only when it is dated later than every request
 * from that key the master has accepted or held pending, in this run or an earlier one. A minion's clock moves
 * forwards, so its fresh request is always later; a captured one is not.
 *
 * <p>One file, {@code cachedir/auth_requests}, mode 0600, one ASCII line per record: {@code ID FINGERPRINT MS}
 * (the request's timestamp), {@code floor MS}: every request dated before {@code MS} is refused, whatever its key, or
 * {@code closed MS}, the last line of a run that stopped cleanly. {@link #record} appends a line; a request dated
 * ahead of the master's clock returns only once its line is on disk (concurrent ones share one fsync), since only a
 * record can refuse its replay after a restart. Any other request is dated before the next start, and a start after
 * a run that did not stop cleanly (no {@code closed} line: a crash, a kill, a power loss that took unforced lines)
 * raises the floor to the start, which refuses whatever that run may have taken without a record: an auth costs no
 * fsync but the rare minion whose clock is ahead. The file is rewritten atomically
 * (temp, fsync, rename) at every start and when it has grown to twice what is live: records older than the clock
 * skew are left out (no such request passes the skew check) and the floor rises to their bound, which keeps them
 * refused if the master's clock is later set back. Without a file (a first start, or removed), the floor is the
 * start: a request dated before it may have been seen by a run that left no record.
 *
 * <p>Only the master's own user or root can write the file ({@link TrustedPath}); a file anyone else could have
 * written, or a damaged line anywhere but a last one cut short by a crash, stops the master from starting: it
 * cannot know what it saw, and the strict reading would refuse every minion.
 */
public final class SeenAuthRequests implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SeenAuthRequests.class);
    /** The file's name under {@code cachedir}. */
    public static final String FILE = "auth_requests";
    /** Larger than this is refused as damaged: about 200,000 live records, rewritten at twice what is live. */
    static final int MAX_BYTES = 64 * 1024 * 1024;
    /** Appended lines before a rewrite is considered at all. */
    static final int MIN_REWRITE_LINES = 10_000;

    private static final Pattern FINGERPRINT = Pattern.compile("[0-9a-f]{2}(:[0-9a-f]{2}){31}");
    private static final Pattern MILLIS = Pattern.compile("[0-9]{1,18}");
    private static final String FLOOR = "floor";
    private static final String CLOSED = "closed";

    private final Path file;
    private final Clock clock;
    private final int minRewriteLines;
    private final Map<String, Long> newest;
    private volatile long floorMs;
    /** Guards the channel, what is written and the line count; taken inside {@link #forceLock} when both are. */
    private final Object appendLock = new Object();

    private FileChannel channel;
    private long written;
    private long lines;
    /** Guards {@link #forced}; one thread forces at a time, for every line written before it started. */
    private final Object forceLock = new Object();

    private long forced;

    private SeenAuthRequests(Path file, Clock clock, int minRewriteLines, Map<String, Long> newest, long floorMs) {
        this.file = file;
        this.clock = clock;
        this.minRewriteLines = minRewriteLines;
        this.newest = newest;
        this.floorMs = floorMs;
    }

    /**
     * Reads {@code file}, rewrites it without what has expired, and opens it for appending.
     *
     * @throws IOException when it cannot be trusted, is damaged, or cannot be written: the master must not start
     */
    public static SeenAuthRequests open(Path file, Clock clock) throws IOException {
        return open(file, clock, MIN_REWRITE_LINES);
    }

    static SeenAuthRequests open(Path file, Clock clock, int minRewriteLines) throws IOException {
        AtomicFiles.ensureDirectory(file.toAbsolutePath().getParent());
        Optional<String> untrusted = TrustedPath.forThisProcess().problem(file);
        if (untrusted.isPresent()) {
            throw new IOException(untrusted.get() + " (" + file + " decides which auth requests are replays)");
        }
        long now = clock.millis();
        Map<String, Long> newest = new ConcurrentHashMap<>();
        long floor;
        byte[] content;
        try {
            content = AtomicFiles.readSmall(file, MAX_BYTES);
            Parsed parsed = parse(file, content, newest);
            floor = parsed.floorMs();
            if (!parsed.closed() && floor < now) {
                floor = now;
                LOG.warn(
                        "{}: the master's last run did not stop cleanly, so it may have taken requests it has no "
                                + "record of: auth requests dated before {} are refused (minions whose clocks are behind "
                                + "this master's are answered once their clocks pass it)",
                        file,
                        Instant.ofEpochMilli(floor));
            }
        } catch (NoSuchFileException e) {
            floor = now;
            LOG.info(
                    "{} did not exist (a first start, or removed): auth requests dated before {} are refused, "
                            + "since a run before this one may have seen them",
                    file,
                    Instant.ofEpochMilli(floor));
        }
        SeenAuthRequests seen = new SeenAuthRequests(file, clock, minRewriteLines, newest, floor);
        synchronized (seen.forceLock) {
            synchronized (seen.appendLock) {
                seen.rewrite();
            }
        }
        return seen;
    }

    /** What a file says: its floor, and whether its run stopped cleanly (its last line is {@code closed}). */
    private record Parsed(long floorMs, boolean closed) {}

    private static Parsed parse(Path file, byte[] content, Map<String, Long> newest) throws IOException {
        String text = new String(content, StandardCharsets.US_ASCII);
        int end = text.lastIndexOf('\n') + 1;
        if (end < text.length()) {
            // Cut short by a crash while it was appended: its reply was never sent (it waits for the force).
            LOG.warn(
                    "{}: ignored a last line cut short ({} bytes), as a crash while it was written leaves it",
                    file,
                    text.length() - end);
        }
        long floor = 0;
        boolean closed = false;
        String whole = text.substring(0, end);
        String[] lines =
                whole.isEmpty() ? new String[0] : whole.substring(0, end - 1).split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String[] parts = lines[i].split(" ", -1);
            closed = false;
            if (parts.length == 2
                    && parts[0].equals(FLOOR)
                    && MILLIS.matcher(parts[1]).matches()) {
                floor = Math.max(floor, Long.parseLong(parts[1]));
            } else if (parts.length == 2
                    && parts[0].equals(CLOSED)
                    && MILLIS.matcher(parts[1]).matches()) {
                closed = true;
            } else if (parts.length == 3
                    && MinionIds.isValid(parts[0])
                    && FINGERPRINT.matcher(parts[1]).matches()
                    && MILLIS.matcher(parts[2]).matches()) {
                newest.merge(parts[0] + " " + parts[1], Long.parseLong(parts[2]), Math::max);
            } else {
                throw new IOException(file + " is damaged at line " + (i + 1) + ": it records the newest auth "
                        + "request seen from each minion key, so that one seen before a restart is refused after "
                        + "it. If it cannot be repaired, remove it: the master then refuses every auth request "
                        + "dated before its start, and takes the minions' fresh ones");
            }
        }
        return new Parsed(floor, closed);
    }

    /**
     * Whether a request from {@code id}'s key {@code fingerprint} dated {@code timestampMs} is later than every one
     * recorded from that key, and not before the floor. In memory; no disk work.
     */
    public boolean isNewer(String id, String fingerprint, long timestampMs) {
        if (timestampMs < floorMs) {
            return false;
        }
        Long seen = newest.get(id + " " + fingerprint);
        return seen == null || timestampMs > seen;
    }

    /**
     * Records a request from {@code id}'s key {@code fingerprint} dated {@code timestampMs}. Call it before the reply
     * that depends on it is sent. One dated ahead of the master's clock is on disk when this returns; any other is
     * written, and forced by {@link #close} (after a crash, the next start's floor refuses it: see the class).
     *
     * @throws IOException when it cannot be written: the caller must not accept (answer "try later")
     */
    public void record(String id, String fingerprint, long timestampMs) throws IOException {
        String key = id + " " + fingerprint;
        // In memory first: a concurrent copy of the same request is refused from now on, whatever the disk does.
        newest.merge(key, timestampMs, Math::max);
        byte[] line = (key + " " + timestampMs + "\n").getBytes(StandardCharsets.US_ASCII);
        long mine;
        boolean rewriteDue;
        synchronized (appendLock) {
            ensureOpen();
            append(line);
            lines++;
            mine = ++written;
            rewriteDue = lines > minRewriteLines && lines > 2L * newest.size();
        }
        if (timestampMs <= clock.millis() && !rewriteDue) {
            return; // dated before any later start: an unclean stop's floor refuses it without the fsync
        }
        synchronized (forceLock) {
            if (forced >= mine) {
                return; // another thread's force covered this line
            }
            FileChannel toForce;
            long upTo;
            synchronized (appendLock) {
                if (lines > minRewriteLines && lines > 2L * newest.size()) {
                    rewrite(); // forced whole, this line's record included
                    forced = written;
                    return;
                }
                toForce = channel;
                upTo = written;
            }
            // Outside the append lock: appends go on while the disk works, and the next force takes them all.
            toForce.force(false);
            forced = upTo;
        }
    }

    private void append(byte[] line) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(line);
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    private void ensureOpen() throws IOException {
        if (channel == null) {
            throw new IOException(file + " is closed");
        }
    }

    /** Writes what is live, atomically, and appends to it from now on. Holds both locks. */
    private void rewrite() throws IOException {
        long cut = clock.millis() - Timestamps.MAX_CLOCK_SKEW.toMillis();
        newest.values().removeIf(timestampMs -> timestampMs < cut);
        floorMs = Math.max(floorMs, cut);
        StringBuilder content = new StringBuilder(FLOOR)
                .append(' ')
                .append(Math.max(floorMs, 0))
                .append('\n');
        newest.forEach((key, timestampMs) ->
                content.append(key).append(' ').append(timestampMs).append('\n'));
        if (channel != null) {
            channel.close();
            channel = null;
        }
        AtomicFiles.write(file, content.toString().getBytes(StandardCharsets.US_ASCII), AtomicFiles.OWNER_RW);
        channel = FileChannel.open(
                file,
                Set.<OpenOption>of(StandardOpenOption.WRITE, StandardOpenOption.APPEND, LinkOption.NOFOLLOW_LINKS));
        lines = newest.size() + 1L;
    }

    /** Records held in memory (for the limits' tests). */
    int size() {
        return newest.size();
    }

    /**
     * Forces what was written and ends the file with {@code closed}, so the next start keeps its floor; a failure
     * here only makes that start raise it (as after a crash).
     */
    @Override
    public void close() {
        synchronized (forceLock) {
            synchronized (appendLock) {
                if (channel != null) {
                    try {
                        channel.force(false);
                        append((CLOSED + " " + clock.millis() + "\n").getBytes(StandardCharsets.US_ASCII));
                        channel.force(false);
                    } catch (IOException e) {
                        LOG.warn(
                                "{} not closed cleanly, so the next start refuses auth requests dated before it: {}",
                                file,
                                e.getMessage());
                    }
                    try {
                        channel.close();
                    } catch (IOException e) {
                        LOG.warn("Cannot close {}: {}", file, e.getMessage());
                    }
                    channel = null;
                }
            }
        }
    }

    @Override
    public String toString() {
        return "SeenAuthRequests[" + file + "]";
    }
}

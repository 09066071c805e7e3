package io.brine.master.jobs;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.daemon.files.AtomicFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The job cache under {@code cachedir/jobs/}: one directory per jid with {@code job.json} (the load and the
 * targeted minions) and {@code returns.jsonl} (one line per return). Returns are appended by one writer thread in
 * batches, each batch forced to disk before the minions are acknowledged, so a return is acknowledged only once it
 * would survive a crash. Retention by age ({@code keep_jobs_seconds}) and by total size, oldest first.
 */
public final class JobCache implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(JobCache.class);
    private static final String JOB_FILE = "job.json";
    private static final String RETURNS_FILE = "returns.jsonl";
    private static final int MAX_BATCH = 2048;

    private record PendingReturn(String jid, StoredReturn ret, Runnable onStored, Runnable onDone) {}

    private final Path dir;
    private final Duration keep;
    private final long maxBytes;
    private final Clock clock;
    private final ObjectMapper json = new ObjectMapper();
    private final BlockingQueue<PendingReturn> queue = new LinkedBlockingQueue<>(100_000);
    private final AtomicLong bytes = new AtomicLong();
    private final Thread writer;
    private volatile boolean closed;
    /** The cluster's shared job records and returns ({@link SharedJobs#alone} for a master alone). */
    private final SharedJobs shared;

    /** A job cache whose jobs and returns are also shared with a cluster's other masters, through {@code shared}. */
    public JobCache(Path dir, Duration keep, long maxBytes, Clock clock, SharedJobs shared) throws IOException {
        this.shared = shared;
        this.dir = dir;
        this.keep = keep;
        this.maxBytes = maxBytes;
        this.clock = clock;
        AtomicFiles.ensureDirectory(dir);
        bytes.set(measure());
        writer = new Thread(this::writeLoop, "brine-job-cache");
        writer.setDaemon(true);
        writer.start();
    }

    /** Records a new job; called before its publication goes out, so every return finds its job. */
    public void create(JobRecord job) throws IOException {
        adopt(job);
        shared.putJob(job);
    }

    /**
     * Records a job another master of the cluster published and this one delivers, without sharing it again: the
     * returns this master receives for it are stored here (and shared from here).
     */
    public void adopt(JobRecord job) throws IOException {
        Path jobDir = jobDir(job.jid());
        boolean created = !Files.exists(jobDir, LinkOption.NOFOLLOW_LINKS);
        AtomicFiles.ensureDirectory(jobDir);
        byte[] content = json.writeValueAsBytes(job);
        try {
            AtomicFiles.write(jobDir.resolve(JOB_FILE), content, AtomicFiles.OWNER_RW);
        } catch (IOException e) {
            // A job refused (a full disk) leaves no directory behind: a jid with no job.json is no job.
            if (created) {
                delete(jobDir);
            }
            throw e;
        }
        bytes.addAndGet(content.length);
    }

    /**
     * Queues a return for appending; {@code onStored} runs on the writer thread once it is on disk. False when the
     * queue is full: the caller must not acknowledge, the minion will send it again.
     */
    public boolean addReturn(String jid, StoredReturn ret, Runnable onStored) {
        // Checked here: one bad jid in a batch would make the writer drop the whole batch.
        return addReturn(jid, ret, onStored, () -> {});
    }

    /**
     * As {@link #addReturn(String, StoredReturn, Runnable)}; when queued, {@code onDone} runs once the writer is
     * done with it, stored or not (the master counts a return's bytes in flight until then).
     */
    public boolean addReturn(String jid, StoredReturn ret, Runnable onStored, Runnable onDone) {
        return !closed && JobIds.isValid(jid) && queue.offer(new PendingReturn(jid, ret, onStored, onDone));
    }

    public Optional<JobRecord> job(String jid) {
        if (!JobIds.isValid(jid)) {
            return Optional.empty();
        }
        Path file = jobDir(jid).resolve(JOB_FILE);
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return shared.job(jid);
        }
        try {
            return Optional.of(json.readValue(AtomicFiles.readSmall(file, 64 * 1024 * 1024), JobRecord.class));
        } catch (IOException e) {
            LOG.warn("Job {}: unreadable {}: {}", jid, file, e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * The returns of a job, one per minion (the first stored wins), in the order they arrived; in a cluster, then
     * those other masters received.
     */
    public List<StoredReturn> returns(String jid) {
        if (!JobIds.isValid(jid)) {
            return List.of();
        }
        List<StoredReturn> local = localReturns(jid);
        List<StoredReturn> others = shared.returns(jid);
        if (others.isEmpty()) {
            return local;
        }
        Map<String, StoredReturn> byMinion = new LinkedHashMap<>();
        local.forEach(ret -> byMinion.put(ret.id(), ret));
        others.forEach(ret -> byMinion.putIfAbsent(ret.id(), ret));
        return List.copyOf(byMinion.values());
    }

    private List<StoredReturn> localReturns(String jid) {
        Path file = jobDir(jid).resolve(RETURNS_FILE);
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        Map<String, StoredReturn> byMinion = new LinkedHashMap<>();
        try (Stream<String> lines = Files.lines(file, StandardCharsets.UTF_8)) {
            lines.filter(line -> !line.isBlank()).forEach(line -> {
                try {
                    StoredReturn ret = json.readValue(line, StoredReturn.class);
                    byMinion.putIfAbsent(ret.id(), ret);
                } catch (IOException e) {
                    // A line torn by a crash mid-append: skip it, the minion resent what was not acknowledged.
                    LOG.debug("Job {}: skipping unreadable return line", jid);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            LOG.warn("Job {}: cannot read returns: {}", jid, e.getMessage());
        }
        return List.copyOf(byMinion.values());
    }

    /** Jobs in the cache, oldest first. */
    public List<JobRecord> list() {
        List<JobRecord> jobs = new ArrayList<>();
        SortedSet<String> all = new TreeSet<>(jids());
        all.addAll(shared.jids());
        for (String jid : all) {
            job(jid).ifPresent(jobs::add);
        }
        return jobs;
    }

    /** Removes jobs older than the retention time, then the oldest ones while over the size bound. */
    public void sweep() {
        Instant cutoff = clock.instant().minus(keep);
        List<String> jids = jids();
        int removed = 0;
        for (String jid : jids) {
            boolean expired = JobIds.time(jid).isBefore(cutoff);
            if (!expired && bytes.get() <= maxBytes) {
                break;
            }
            bytes.addAndGet(-delete(jobDir(jid)));
            removed++;
        }
        if (removed > 0) {
            LOG.info("Job cache: removed {} old jobs", removed);
        }
        shared.sweep(keep);
    }

    public long sizeBytes() {
        return bytes.get();
    }

    private List<String> jids() {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString())
                    .filter(JobIds::isValid)
                    .sorted()
                    .toList();
        } catch (IOException e) {
            LOG.warn("Job cache: cannot list {}: {}", dir, e.getMessage());
            return List.of();
        }
    }

    private Path jobDir(String jid) {
        if (!JobIds.isValid(jid)) {
            throw new IllegalArgumentException("not a jid: " + jid);
        }
        return dir.resolve(jid);
    }

    private void writeLoop() {
        List<PendingReturn> batch = new ArrayList<>(MAX_BATCH);
        while (!closed || !queue.isEmpty()) {
            try {
                PendingReturn first = queue.poll(200, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, MAX_BATCH - 1);
                writeBatch(batch);
            } catch (InterruptedException e) {
                if (closed) {
                    break;
                }
            } catch (RuntimeException e) {
                LOG.error("Bug: job cache writer failed", e);
            } finally {
                batch.forEach(pending -> pending.onDone().run());
                batch.clear();
            }
        }
    }

    private void writeBatch(List<PendingReturn> batch) {
        Map<String, List<PendingReturn>> byJob = new LinkedHashMap<>();
        for (PendingReturn pending : batch) {
            byJob.computeIfAbsent(pending.jid(), k -> new ArrayList<>()).add(pending);
        }
        for (Map.Entry<String, List<PendingReturn>> entry : byJob.entrySet()) {
            Path jobDir = jobDir(entry.getKey());
            if (!Files.isDirectory(jobDir, LinkOption.NOFOLLOW_LINKS)) {
                LOG.debug("Job {}: returns for a job no longer cached dropped", entry.getKey());
                continue;
            }
            StringBuilder lines = new StringBuilder();
            for (PendingReturn pending : entry.getValue()) {
                try {
                    lines.append(json.writeValueAsString(pending.ret())).append('\n');
                } catch (IOException e) {
                    LOG.warn(
                            "Job {}: return of {} cannot be encoded: {}",
                            entry.getKey(),
                            pending.ret().id(),
                            e.getMessage());
                }
            }
            Path returnsFile = jobDir.resolve(RETURNS_FILE);
            try {
                if (endsTorn(returnsFile)) {
                    // A crash tore the last append: start on a new line, or the first return would be unreadable.
                    lines.insert(0, '\n');
                }
            } catch (IOException e) {
                LOG.error("Job {}: cannot read {}: {}", entry.getKey(), returnsFile, e.getMessage());
                continue;
            }
            byte[] content = lines.toString().getBytes(StandardCharsets.UTF_8);
            try (FileChannel channel = FileChannel.open(
                    returnsFile,
                    Set.of(
                            StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND,
                            StandardOpenOption.WRITE,
                            LinkOption.NOFOLLOW_LINKS),
                    PosixFilePermissions.asFileAttribute(AtomicFiles.OWNER_RW))) {
                ByteBuffer buffer = ByteBuffer.wrap(content);
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
                channel.force(false);
            } catch (IOException e) {
                LOG.error("Job {}: cannot store returns: {}", entry.getKey(), e.getMessage());
                continue;
            }
            bytes.addAndGet(content.length);
            for (PendingReturn pending : entry.getValue()) {
                pending.onStored().run();
                shared.putReturn(pending.jid(), pending.ret());
            }
        }
    }

    /** Whether {@code file} exists, is not empty and does not end with a newline. */
    private static boolean endsTorn(Path file) throws IOException {
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            long size = channel.size();
            if (size == 0) {
                return false;
            }
            ByteBuffer last = ByteBuffer.allocate(1);
            channel.read(last, size - 1);
            return last.get(0) != '\n';
        }
    }

    private long measure() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
                    .mapToLong(p -> {
                        try {
                            return Files.size(p);
                        } catch (IOException e) {
                            return 0;
                        }
                    })
                    .sum();
        }
    }

    private static long delete(Path jobDir) {
        long freed = 0;
        try (Stream<Path> files = Files.walk(jobDir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    freed += Files.size(p);
                }
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOG.warn("Job cache: cannot remove {}: {}", jobDir, e.getMessage());
        }
        return freed;
    }

    @Override
    public void close() {
        closed = true;
        try {
            writer.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        shared.close();
    }
}

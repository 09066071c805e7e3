package io.brine.master.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.testing.MovableClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobCacheTest {

    private static final Duration KEEP = Duration.ofHours(1);
    private static final long UNBOUNDED = Long.MAX_VALUE;

    @TempDir
    Path root;

    private final MovableClock clock = new MovableClock(Instant.parse("2026-11-22T03:00:00Z"));
    private final JobIds jobIds = new JobIds(clock);
    private final List<JobCache> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(JobCache::close);
    }

    private Path dir() {
        return root.resolve("jobs");
    }

    private JobCache open(Path dir, long maxBytes) throws Exception {
        JobCache cache = new JobCache(dir, KEEP, maxBytes, clock, SharedJobs.alone());
        opened.add(cache);
        return cache;
    }

    /** A job with a fixed-length time field, so every job.json has the same size. */
    private static JobRecord job(String jid, String... minions) {
        return new JobRecord(
                jid,
                "2026-11-22T03:00:00Z",
                "root",
                "glob",
                "*",
                "test.ping",
                List.of("a", 1),
                Map.of("k", "v"),
                0,
                List.of(minions));
    }

    private static StoredReturn ret(String id, Object value) {
        return new StoredReturn(id, value, 0, true, 5, "2026-11-22T03:00:01Z");
    }

    /** Adds a return and waits until the cache says it is stored. */
    private static void store(JobCache cache, String jid, StoredReturn ret) {
        AtomicBoolean stored = new AtomicBoolean();
        assertThat(cache.addReturn(jid, ret, () -> stored.set(true))).isTrue();
        await().pollInterval(Duration.ofMillis(10)).untilTrue(stored);
    }

    @Test
    void aJobAndItsReturnsReadBackAsWritten() throws Exception {
        JobCache cache = open(dir(), UNBOUNDED);
        String jid = jobIds.next();
        cache.create(job(jid, "m1", "m2"));
        store(cache, jid, ret("m1", true));
        store(cache, jid, ret("m2", Map.of("lines", List.of("x", "y"))));

        assertThat(cache.job(jid)).contains(job(jid, "m1", "m2"));
        assertThat(cache.returns(jid)).containsExactly(ret("m1", true), ret("m2", Map.of("lines", List.of("x", "y"))));
        assertThat(cache.list()).containsExactly(job(jid, "m1", "m2"));
        assertThat(cache.returns(jobIds.next())).isEmpty();
    }

    @Test
    void theFirstStoredReturnOfAMinionWins() throws Exception {
        JobCache cache = open(dir(), UNBOUNDED);
        String jid = jobIds.next();
        cache.create(job(jid, "m1"));
        store(cache, jid, ret("m1", "first"));
        store(cache, jid, ret("m1", "resent"));
        assertThat(cache.returns(jid)).containsExactly(ret("m1", "first"));
    }

    @Test
    void onStoredRunsOnlyOnceTheReturnIsOnDisk() throws Exception {
        JobCache cache = open(dir(), UNBOUNDED);
        String jid = jobIds.next();
        cache.create(job(jid, "m1"));
        AtomicReference<List<StoredReturn>> seenByCallback = new AtomicReference<>();
        AtomicReference<String> fileInCallback = new AtomicReference<>();
        assertThat(cache.addReturn(jid, ret("m1", true), () -> {
                    seenByCallback.set(cache.returns(jid));
                    try {
                        fileInCallback.set(Files.readString(dir().resolve(jid).resolve("returns.jsonl")));
                    } catch (IOException e) {
                        fileInCallback.set("unreadable: " + e);
                    }
                }))
                .isTrue();
        await().until(() -> seenByCallback.get() != null);
        assertThat(seenByCallback.get()).containsExactly(ret("m1", true));
        assertThat(fileInCallback.get()).startsWith("{").endsWith("}\n").contains("\"m1\"");
    }

    @Test
    void aReturnForAJobNotInTheCacheIsNeverAcknowledged() throws Exception {
        JobCache cache = open(dir(), UNBOUNDED);
        String unknown = jobIds.next();
        String known = jobIds.next();
        cache.create(job(known, "m1"));
        AtomicBoolean acknowledged = new AtomicBoolean();
        assertThat(cache.addReturn(unknown, ret("m1", true), () -> acknowledged.set(true)))
                .isTrue();
        store(cache, known, ret("m1", true)); // one writer, in order: the first was handled before this
        assertThat(acknowledged).isFalse();
        assertThat(dir().resolve(unknown)).doesNotExist();
    }

    @Test
    void aTornLastLineIsSkippedAndTheNextReturnStartsOnANewLine() throws Exception {
        JobCache cache = open(dir(), UNBOUNDED);
        String jid = jobIds.next();
        cache.create(job(jid, "m1", "m2", "m3"));
        store(cache, jid, ret("m1", true));
        // A crash in the middle of an append leaves half a line.
        Files.writeString(
                dir().resolve(jid).resolve("returns.jsonl"),
                "{\"id\":\"m2\",\"returnVal",
                StandardCharsets.UTF_8,
                StandardOpenOption.APPEND);
        assertThat(cache.returns(jid)).containsExactly(ret("m1", true));

        store(cache, jid, ret("m3", "after the crash"));
        assertThat(cache.returns(jid)).containsExactly(ret("m1", true), ret("m3", "after the crash"));
    }

    @Test
    void jobsOlderThanTheRetentionTimeAreSwept() throws Exception {
        JobCache cache = open(dir(), UNBOUNDED);
        String old = jobIds.next();
        cache.create(job(old, "m1"));
        store(cache, old, ret("m1", true));
        clock.advance(Duration.ofMinutes(30));
        String recent = jobIds.next();
        cache.create(job(recent, "m1"));

        clock.advance(Duration.ofMinutes(29));
        cache.sweep();
        assertThat(cache.list()).extracting(JobRecord::jid).containsExactly(old, recent);

        clock.advance(Duration.ofMinutes(2)); // old is now 61 minutes old, recent 31
        cache.sweep();
        assertThat(cache.list()).extracting(JobRecord::jid).containsExactly(recent);
        assertThat(dir().resolve(old)).doesNotExist();
        assertThat(cache.returns(old)).isEmpty();

        clock.advance(Duration.ofMinutes(30));
        cache.sweep();
        assertThat(cache.list()).isEmpty();
        assertThat(cache.sizeBytes()).isZero();
    }

    @Test
    void overTheSizeBoundTheOldestJobsGoFirst() throws Exception {
        long oneJob;
        try (JobCache probe = new JobCache(root.resolve("probe"), KEEP, UNBOUNDED, clock, SharedJobs.alone())) {
            probe.create(job(jobIds.next(), "m1"));
            oneJob = probe.sizeBytes();
        }
        assertThat(oneJob).isPositive();
        JobCache cache = open(dir(), 2 * oneJob + oneJob / 2);
        List<String> jids = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            clock.advance(Duration.ofSeconds(1));
            String jid = jobIds.next();
            jids.add(jid);
            cache.create(job(jid, "m1"));
        }
        assertThat(cache.sizeBytes()).isEqualTo(4 * oneJob);
        cache.sweep();
        assertThat(cache.list()).extracting(JobRecord::jid).containsExactly(jids.get(2), jids.get(3));
        assertThat(cache.sizeBytes()).isEqualTo(2 * oneJob);
    }

    @Test
    void aJidThatIsNotOneNeverBecomesAPath() throws Exception {
        JobCache cache = open(dir(), UNBOUNDED);
        Files.createDirectories(dir().resolve("not-a-job"));
        for (String bad : List.of("../x", "..", "20261122030000000000/../../x", "/etc", "2026112203000000000x", "")) {
            assertThatThrownBy(() -> cache.create(job(bad, "m1"))).isInstanceOf(IllegalArgumentException.class);
            assertThat(cache.job(bad)).isEmpty();
            assertThat(cache.returns(bad)).isEmpty();
            assertThat(cache.addReturn(bad, ret("m1", true), () -> {})).isFalse();
        }
        assertThat(cache.job(null)).isEmpty();
        assertThat(cache.list()).isEmpty();
        assertThat(root.resolve("x")).doesNotExist();
        // The writer still works: a bad jid never reached it.
        String jid = jobIds.next();
        cache.create(job(jid, "m1"));
        store(cache, jid, ret("m1", true));
    }

    @Test
    void aReopenedCacheSeesTheJobsAndReturnsOfTheLastOne() throws Exception {
        JobCache first = open(dir(), UNBOUNDED);
        String jid = jobIds.next();
        cache(first, jid);
        AtomicBoolean stored = new AtomicBoolean();
        first.addReturn(jid, ret("m2", "queued at close"), () -> stored.set(true));
        first.close(); // writes what is queued before it returns
        assertThat(stored).isTrue();
        long size = first.sizeBytes();

        JobCache second = open(dir(), UNBOUNDED);
        assertThat(second.list()).containsExactly(job(jid, "m1", "m2"));
        assertThat(second.returns(jid)).containsExactly(ret("m1", true), ret("m2", "queued at close"));
        assertThat(second.sizeBytes()).isEqualTo(size);
    }

    private static void cache(JobCache cache, String jid) throws Exception {
        cache.create(job(jid, "m1", "m2"));
        store(cache, jid, ret("m1", true));
    }
}

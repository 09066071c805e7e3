package io.brine.master.api;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.brine.daemon.config.MasterConfig;
import io.brine.protocol.BatchSize;
import io.brine.protocol.MinionIds;
import io.brine.protocol.message.SessionMessage;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Salt's batch mode through the API ({@code POST /api/jobs} with {@code "batch"}), run by the master as {@code brine
 * -b} runs it in the client: a {@code test.ping} to the target, then the job on N (or N %) of the minions that
 * answered at a time, each batch a job of its own targeted by list, published through the one publisher path (ACL,
 * audit) under the caller's name; the next batch once this one has returned or its timeout passed. Each run has a
 * thread of its own (at most {@link #MAX_ACTIVE} at once; past that the request is refused, no API worker waits);
 * returns are heard through the watcher the publication registers, so none falls between publishing and watching.
 * A run is shown only to the token that started it (or a key-admin token), for an hour after it started.
 */
final class BatchRuns implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(BatchRuns.class);
    static final int MAX_ACTIVE = 8;
    static final int MAX_KEPT = 1000;
    static final Duration KEPT_FOR = Duration.ofHours(1);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** The publisher path: {@link io.brine.master.publish.PublisherService#publish}. */
    interface Publisher {
        SessionMessage.PublishReply publish(
                String name,
                Optional<MasterConfig.PublisherAcl> acl,
                SessionMessage.PublishRequest request,
                Consumer<SessionMessage.ReturnEvent> watcher);
    }

    /** One batch: its job, the minions it targeted and those that returned so far. */
    private record Step(String jid, List<String> minions, Set<String> returned) {}

    /** A run: who started it, what, and how far it got. */
    private static final class Run {
        final String id;
        final String owner;
        final SessionMessage.PublishRequest request;
        final BatchSize size;
        final String pingJid;
        final List<String> targeted;
        final List<Step> steps = new ArrayList<>();
        volatile List<String> answered = List.of();
        volatile String state = "pinging";
        volatile String error;

        Run(
                String id,
                String owner,
                SessionMessage.PublishRequest request,
                BatchSize size,
                String pingJid,
                List<String> targeted) {
            this.id = id;
            this.owner = owner;
            this.request = request;
            this.size = size;
            this.pingJid = pingJid;
            this.targeted = targeted;
        }

        synchronized Map<String, Object> document() {
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("batch_id", id);
            document.put("state", state);
            document.put("fun", request.fun());
            document.put("target", request.target());
            document.put("target_type", request.targetType());
            document.put("batch", size.toString());
            document.put("ping_jid", pingJid);
            document.put("targeted", targeted);
            document.put("answered", answered);
            List<Object> batches = new ArrayList<>();
            for (Step step : steps) {
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("jid", step.jid());
                one.put("minions", step.minions());
                one.put("returned", List.copyOf(new TreeSet<>(step.returned())));
                batches.add(one);
            }
            document.put("batches", batches);
            if (error != null) {
                document.put("error", error);
            }
            return document;
        }
    }

    private final Publisher publisher;
    private final int maxActive;
    private final AtomicInteger active = new AtomicInteger();
    private final ThreadPoolExecutor threads;
    private final Cache<String, Run> runs = Caffeine.newBuilder()
            .maximumSize(MAX_KEPT)
            .expireAfterWrite(KEPT_FOR)
            .build();

    BatchRuns(Publisher publisher, int maxActive) {
        this.publisher = publisher;
        this.maxActive = maxActive;
        AtomicInteger number = new AtomicInteger();
        // As many threads as runs may be active (the count above bounds the queue): a thread that has just ended a
        // run and not yet come back for the next never makes a start fail.
        this.threads = new ThreadPoolExecutor(
                maxActive, maxActive, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), runnable -> {
                    Thread thread = new Thread(runnable, "brine-api-batch-" + number.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        this.threads.allowCoreThreadTimeOut(true);
    }

    /**
     * Starts a run of {@code request} for {@code name} under {@code acl}: the job's own ACL is checked and the
     * {@code test.ping} published before this returns, so a refusal is the caller's answer; the batches follow on
     * the run's thread. Returns the run's document as it starts.
     */
    Map<String, Object> start(
            String name,
            Optional<MasterConfig.PublisherAcl> acl,
            SessionMessage.PublishRequest request,
            BatchSize size,
            Refusal refusal)
            throws ApiError {
        if (active.incrementAndGet() > maxActive) {
            active.decrementAndGet();
            throw new ApiError(
                    HttpResponseStatus.SERVICE_UNAVAILABLE,
                    maxActive
                            + " batch runs are active, the most the master runs at once; try again when one has ended");
        }
        boolean started = false;
        try {
            refusal.check();
            Set<String> answered = ConcurrentHashMap.newKeySet();
            SessionMessage.PublishReply ping = publisher.publish(
                    name,
                    acl,
                    new SessionMessage.PublishRequest(
                            request.targetType(),
                            request.target(),
                            "test.ping",
                            List.of(),
                            Map.of(),
                            request.timeoutSeconds()),
                    event -> heard(answered, event));
            Refusal.of(ping.error());
            byte[] bytes = new byte[16];
            RANDOM.nextBytes(bytes);
            Run run = new Run(
                    HexFormat.of().formatHex(bytes),
                    name,
                    request,
                    size,
                    ping.jid(),
                    List.copyOf(new TreeSet<>(ping.minions())));
            runs.put(run.id, run);
            List<String> reached = new ArrayList<>(ping.minions());
            reached.removeAll(ping.unreachable());
            try {
                threads.execute(() -> {
                    try {
                        run(run, acl, reached, answered);
                    } finally {
                        active.decrementAndGet();
                    }
                });
            } catch (RejectedExecutionException e) {
                run.state = "failed";
                run.error = "the master is shutting down";
                throw new ApiError(HttpResponseStatus.SERVICE_UNAVAILABLE, "the master is shutting down");
            }
            started = true;
            return run.document();
        } finally {
            if (!started) {
                active.decrementAndGet();
            }
        }
    }

    /** A refusal the caller hears before anything is published. */
    interface Refusal {
        void check() throws ApiError;

        /** Turns a publication's error into the API's answer (as a single job's). */
        static void of(String error) throws ApiError {
            if (error != null) {
                throw error.startsWith("publisher_acl")
                        ? ApiError.forbidden(error)
                        : error.startsWith("bad target")
                                ? ApiError.badRequest(error)
                                : new ApiError(HttpResponseStatus.SERVICE_UNAVAILABLE, error);
            }
        }
    }

    private void run(Run run, Optional<MasterConfig.PublisherAcl> acl, List<String> reached, Set<String> answered) {
        Duration wait = Duration.ofSeconds(run.request.timeoutSeconds());
        try {
            awaitAll(answered, reached, wait);
            List<String> up = List.copyOf(new TreeSet<>(answered));
            run.answered = up;
            int per = run.size.of(Math.max(1, up.size()));
            run.state = "running";
            for (int from = 0; from < up.size(); from += per) {
                List<String> ids = up.subList(from, Math.min(up.size(), from + per));
                Set<String> returned = ConcurrentHashMap.newKeySet();
                SessionMessage.PublishReply reply = publisher.publish(
                        run.owner,
                        acl,
                        new SessionMessage.PublishRequest(
                                "list",
                                String.join(",", ids),
                                run.request.fun(),
                                run.request.args(),
                                run.request.kwargs(),
                                run.request.timeoutSeconds()),
                        event -> heard(returned, event));
                if (reply.error() != null) {
                    run.error = reply.error();
                    run.state = "failed";
                    return;
                }
                synchronized (run) {
                    run.steps.add(new Step(reply.jid(), List.copyOf(ids), returned));
                }
                List<String> expected = new ArrayList<>(reply.minions());
                expected.removeAll(reply.unreachable());
                awaitAll(returned, expected, wait);
            }
            run.state = "done";
        } catch (InterruptedException e) {
            run.error = "the master stopped";
            run.state = "failed";
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.warn("API batch run {} of {} failed", run.id, MinionIds.printable(run.owner), e);
            run.error = "the master could not go on with the run";
            run.state = "failed";
        }
    }

    /** A watcher heard {@code event}: recorded, and the run's thread woken. */
    private static void heard(Set<String> heard, SessionMessage.ReturnEvent event) {
        heard.add(event.minionId());
        synchronized (heard) {
            heard.notifyAll();
        }
    }

    /** Until every one of {@code expected} is in {@code heard} or {@code wait} has passed. */
    private static void awaitAll(Set<String> heard, List<String> expected, Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (!heard.containsAll(expected)) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            synchronized (heard) {
                if (!heard.containsAll(expected)) {
                    heard.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                }
            }
        }
    }

    /** The run {@code id} as {@code caller} may see it: its own, or any for a key-admin token; else 404. */
    Map<String, Object> show(String id, String caller, boolean keyAdmin) throws ApiError {
        Run run = runs.getIfPresent(id);
        if (run == null || !(keyAdmin || run.owner.equals(caller))) {
            throw ApiError.notFound("no batch run " + MinionIds.printable(id));
        }
        return run.document();
    }

    @Override
    public void close() {
        threads.shutdownNow();
    }
}

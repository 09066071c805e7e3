package io.brine.minion.jobs;

import io.brine.minion.WarnThrottle;
import io.brine.minion.functions.FunctionCall;
import io.brine.minion.functions.FunctionRegistry;
import io.brine.minion.functions.FunctionResult;
import io.brine.minion.functions.MinionFunction;
import io.brine.protocol.MinionIds;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.targeting.Target;
import io.brine.protocol.targeting.TargetException;
import io.brine.protocol.targeting.Targets;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the jobs publications ask of this minion and hands each outcome to {@code returns} as a
 * {@link SessionMessage.Return}: exactly one return per accepted job, none for a publication not meant for this
 * minion.
 *
 * <p>{@link #submit} never blocks the thread that decrypted the publication: it re-checks the target (the master
 * resolved it from claimed grains; the minion checks its own), refuses unknown and denied functions and a jid that
 * is already in flight, and queues the job on a bounded pool. A full queue answers "minion busy" at once rather
 * than letting a publication storm grow memory without bound.
 *
 * <p>Each job has a timeout ({@link PublishLoad#timeoutSeconds()}, else the default) counted from when it starts
 * running; when it runs out the job's thread is interrupted, the function's {@link FunctionCall#cancelled()} turns
 * true, and the return says retcode 124. Whatever the function returns afterwards is dropped.
 *
 * <p>{@code returns} is called from worker threads, the timeout thread, and for immediate refusals (busy, unknown,
 * denied) from the thread calling {@code submit}; it must be thread-safe and quick (hand off, don't send).
 */
public final class JobRunner implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(JobRunner.class);
    public static final int DEFAULT_QUEUE_CAPACITY = 100;
    /** How long {@link #close()} waits for workers to finish after interrupting them. */
    private static final long CLOSE_WAIT_SECONDS = 5;
    /** How long an idle job thread waits for more work before it ends. */
    private static final long IDLE_THREAD_SECONDS = 60;

    private final String minionId;
    private final FunctionRegistry registry;
    private final Supplier<Map<String, Object>> grains;
    private final Duration defaultTimeout;
    private final Consumer<SessionMessage.Return> returns;
    private final Clock clock;
    private final WarnThrottle warnings;
    private final ThreadPoolExecutor workers;
    private final ScheduledExecutorService timeouts;
    /** Accepted jobs not yet finished running (queued or running), by jid. */
    private final ConcurrentMap<String, Job> jobs = new ConcurrentHashMap<>();

    private final AtomicLong returned = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private volatile boolean closed;

    public JobRunner(
            String minionId,
            FunctionRegistry registry,
            Supplier<Map<String, Object>> grains,
            int workerThreads,
            Duration defaultTimeout,
            Consumer<SessionMessage.Return> returns,
            Clock clock) {
        this(minionId, registry, grains, workerThreads, DEFAULT_QUEUE_CAPACITY, defaultTimeout, returns, clock);
    }

    /**
     * @param workerThreads how many jobs run at once
     * @param queueCapacity how many more may wait; beyond that a publication is answered "minion busy"
     */
    public JobRunner(
            String minionId,
            FunctionRegistry registry,
            Supplier<Map<String, Object>> grains,
            int workerThreads,
            int queueCapacity,
            Duration defaultTimeout,
            Consumer<SessionMessage.Return> returns,
            Clock clock) {
        this.minionId = MinionIds.requireValid(minionId);
        this.registry = Objects.requireNonNull(registry, "registry");
        this.grains = Objects.requireNonNull(grains, "grains");
        this.returns = Objects.requireNonNull(returns, "returns");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.warnings = new WarnThrottle(clock);
        if (workerThreads < 1 || queueCapacity < 1) {
            throw new IllegalArgumentException("workerThreads and queueCapacity must be at least 1");
        }
        if (defaultTimeout.isNegative() || defaultTimeout.isZero()) {
            throw new IllegalArgumentException("defaultTimeout must be positive");
        }
        this.defaultTimeout = defaultTimeout;
        // A minion mostly idles: its job threads end after a minute without work and start again with the next.
        this.workers = new ThreadPoolExecutor(
                workerThreads,
                workerThreads,
                IDLE_THREAD_SECONDS,
                TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(queueCapacity),
                threads("brine-job-" + minionId + "-"),
                new ThreadPoolExecutor.AbortPolicy());
        workers.allowCoreThreadTimeOut(true);
        ScheduledThreadPoolExecutor timer =
                new ScheduledThreadPoolExecutor(1, threads("brine-job-timeouts-" + minionId + "-"));
        timer.setRemoveOnCancelPolicy(true); // finished jobs must not leave their timeouts queued for hours
        // Its thread ends only once no timeout is queued: a pool's last thread stays while its queue is not empty.
        timer.setKeepAliveTime(IDLE_THREAD_SECONDS, TimeUnit.SECONDS);
        timer.allowCoreThreadTimeOut(true);
        this.timeouts = timer;
    }

    /** Accepts a publication's job, or answers or drops it at once; returns without waiting for the job. */
    public void submit(PublishLoad load) {
        if (closed) {
            log.debug("Minion {}: job {} arrived after shutdown; dropped", minionId, load.jid());
            return;
        }
        String jid = load.jid();
        if (jid == null || jid.isBlank()) {
            log.warn("Minion {}: publication without a jid; dropped", minionId);
            return;
        }
        Map<String, Object> grainsNow = grains.get();
        if (!targeted(load, grainsNow)) {
            return;
        }
        FunctionRegistry.Lookup lookup = registry.lookup(load.fun());
        if (lookup instanceof FunctionRegistry.Lookup.Refused refused) {
            log.info(
                    "Minion {}: job {} ({}) refused: {}",
                    minionId,
                    jid,
                    MinionIds.printable(load.fun()),
                    refused.result().value());
            emit(returnOf(load, refused.result(), 0));
            return;
        }
        MinionFunction function = ((FunctionRegistry.Lookup.Available) lookup).function();
        Duration timeout = load.timeoutSeconds() > 0 ? Duration.ofSeconds(load.timeoutSeconds()) : defaultTimeout;
        Job job = new Job(load, function, grainsNow, timeout);
        if (jobs.putIfAbsent(jid, job) != null) {
            // The master resent a publication we are still working on: its one return is still coming.
            log.debug("Minion {}: job {} is already in flight; duplicate dropped", minionId, jid);
            return;
        }
        try {
            workers.execute(job);
            log.debug("Minion {}: job {} ({}) queued from {}", minionId, jid, load.fun(), load.publisher());
        } catch (RejectedExecutionException e) {
            jobs.remove(jid, job);
            if (closed) {
                return;
            }
            log.warn(
                    "Minion {}: job {} ({}) refused: {} jobs running and the queue is full",
                    minionId,
                    jid,
                    load.fun(),
                    workers.getActiveCount());
            emit(returnOf(
                    load,
                    FunctionResult.failure(
                            "minion busy: " + workers.getMaximumPoolSize() + " jobs running and "
                                    + workers.getQueue().size() + " waiting; try again later",
                            FunctionResult.BUSY),
                    0));
        }
    }

    /** The jids accepted and not yet finished: queued, running, or timed out but still unwinding. */
    /** Jobs answered since the start (run, timed out or refused as busy): one return each. */
    public long jobsReturned() {
        return returned.get();
    }

    /** Of {@link #jobsReturned()}, those whose return says they failed. */
    public long jobsFailed() {
        return failed.get();
    }

    public Set<String> running() {
        return Set.copyOf(jobs.keySet());
    }

    /**
     * Interrupts running jobs, discards queued ones and stops the threads, waiting a few seconds for them. No
     * returns are emitted after this starts: the session they would go out on is closing too.
     */
    @Override
    public void close() {
        closed = true;
        workers.shutdownNow();
        timeouts.shutdownNow();
        try {
            if (!workers.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
                log.warn(
                        "Minion {}: jobs {} ignore interruption and are still running after shutdown",
                        minionId,
                        running());
            }
            timeouts.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        jobs.clear();
    }

    private boolean targeted(PublishLoad load, Map<String, Object> grainsNow) {
        PublishLoad.Target target = load.target();
        if (target == null || target.type() == null) {
            log.warn("Minion {}: job {} has no target; dropped", minionId, load.jid());
            return false;
        }
        Target parsed;
        try {
            parsed = Targets.parse(target.type(), target.expression());
        } catch (TargetException e) {
            log.warn(
                    "Minion {}: job {} has a target this minion cannot read ({}); dropped",
                    minionId,
                    load.jid(),
                    e.getMessage());
            return false;
        }
        if (!parsed.matches(minionId, grainsNow)) {
            warnings.warn(
                    log,
                    WarnThrottle.Reason.NOT_TARGETED,
                    "Minion {}: job {} targets {} {}, not this minion;" + " dropped",
                    minionId,
                    MinionIds.printable(load.jid()),
                    target.type(),
                    MinionIds.printable(target.expression()));
            return false;
        }
        return true;
    }

    private SessionMessage.Return returnOf(PublishLoad load, FunctionResult result, long durationMs) {
        return new SessionMessage.Return(
                load.jid(), load.fun(), result.value(), result.retcode(), result.success(), durationMs);
    }

    private void emit(SessionMessage.Return result) {
        if (closed) {
            log.debug("Minion {}: return for job {} dropped: shutting down", minionId, result.jid());
            return;
        }
        returned.incrementAndGet();
        if (!result.success()) {
            failed.incrementAndGet();
        }
        try {
            returns.accept(result);
        } catch (RuntimeException e) {
            log.error("Minion {}: the returns consumer failed on job {}", minionId, result.jid(), e);
        }
    }

    private static ThreadFactory threads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    private enum State {
        QUEUED,
        RUNNING,
        DONE,
        TIMED_OUT
    }

    /**
     * One accepted job. Its small lock decides the race between the function finishing and the timeout firing:
     * whichever moves the state out of RUNNING first sends the return, and the timeout interrupts the worker only
     * while this job is still the one running on it.
     */
    private final class Job implements Runnable {
        private final PublishLoad load;
        private final MinionFunction function;
        private final Map<String, Object> grains;
        private final Duration timeout;
        private State state = State.QUEUED; // guarded by this
        private Thread worker; // guarded by this
        private long startMillis;
        private volatile boolean cancelled;

        Job(PublishLoad load, MinionFunction function, Map<String, Object> grains, Duration timeout) {
            this.load = load;
            this.function = function;
            this.grains = grains;
            this.timeout = timeout;
        }

        @Override
        public void run() {
            synchronized (this) {
                state = State.RUNNING;
                worker = Thread.currentThread();
            }
            ScheduledFuture<?> timer = null;
            FunctionResult result = null;
            try {
                startMillis = clock.millis();
                timer = timeouts.schedule(this::timeOut, timeout.toNanos(), TimeUnit.NANOSECONDS);
                FunctionCall call = new FunctionCall(
                        load.jid(),
                        load.args(),
                        load.kwargs(),
                        grains,
                        clock.instant().plus(timeout),
                        clock,
                        () -> cancelled);
                result = registry.invoke(function, call);
            } catch (RejectedExecutionException e) {
                log.debug("Minion {}: job {} not started: shutting down", minionId, load.jid());
            } finally {
                if (timer != null) {
                    timer.cancel(false);
                }
                boolean finishedFirst;
                synchronized (this) {
                    // After this, the timeout can no longer interrupt this thread (it may be running another job).
                    finishedFirst = state == State.RUNNING;
                    state = finishedFirst ? State.DONE : state;
                    worker = null;
                }
                Thread.interrupted(); // a timeout that lost the race may have interrupted us: leave the thread clean
                jobs.remove(load.jid(), this);
                if (finishedFirst && result != null) {
                    log.debug(
                            "Minion {}: job {} ({}) finished with retcode {}",
                            minionId,
                            load.jid(),
                            load.fun(),
                            result.retcode());
                    emit(returnOf(load, result, clock.millis() - startMillis));
                }
            }
        }

        private void timeOut() {
            synchronized (this) {
                if (state != State.RUNNING) {
                    return;
                }
                state = State.TIMED_OUT;
                cancelled = true;
                worker.interrupt();
            }
            String after = BigDecimal.valueOf(timeout.toMillis(), 3)
                            .stripTrailingZeros()
                            .toPlainString() + " s";
            log.info("Minion {}: job {} ({}) timed out after {}; interrupted", minionId, load.jid(), load.fun(), after);
            emit(returnOf(
                    load,
                    FunctionResult.failure(load.fun() + " timed out after " + after, FunctionResult.TIMEOUT),
                    clock.millis() - startMillis));
        }
    }
}

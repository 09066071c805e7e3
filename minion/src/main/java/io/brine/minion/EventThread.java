package io.brine.minion;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The daemon's {@link Scheduler}: one daemon thread, timers on the system's monotonic time. */
final class EventThread implements Scheduler {

    private static final Logger LOG = LoggerFactory.getLogger(EventThread.class);
    static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

    private final String name;
    private final ScheduledThreadPoolExecutor executor;

    EventThread(String name) {
        this.name = name;
        this.executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        });
        // On close, pending auth retries and timeouts are dropped, not waited for (they can be minutes away).
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        // A cancelled timer (an auth timeout answered in time) leaves the queue at once, not when it would have fired.
        executor.setRemoveOnCancelPolicy(true);
    }

    @Override
    public void execute(Runnable task) {
        try {
            executor.execute(() -> guarded(task));
        } catch (RejectedExecutionException e) {
            LOG.debug("{}: stopped; event dropped", name);
        }
    }

    @Override
    public Timer schedule(Duration delay, Runnable task) {
        try {
            ScheduledFuture<?> future = executor.schedule(() -> guarded(task), delay.toNanos(), TimeUnit.NANOSECONDS);
            return () -> future.cancel(false);
        } catch (RejectedExecutionException e) {
            LOG.debug("{}: stopped; timer dropped", name);
            return Timer.NONE;
        }
    }

    @Override
    public void close() {
        stop(CLOSE_WAIT);
    }

    /** Closes, waiting up to {@code wait} for the running task; whether the thread ended within it. */
    boolean stop(Duration wait) {
        executor.shutdown();
        try {
            if (executor.awaitTermination(wait.toNanos(), TimeUnit.NANOSECONDS)) {
                return true;
            }
            LOG.warn("{}: an event still runs {} s after stop; interrupting it", name, wait.toSeconds());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        executor.shutdownNow();
        return false;
    }

    private void guarded(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            LOG.error("Bug: {}: an event failed", name, e);
        }
    }
}

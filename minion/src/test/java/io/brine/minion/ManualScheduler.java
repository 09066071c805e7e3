package io.brine.minion;

import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.SuiteDefaults;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Scheduler} for tests, in the spirit of moquette's {@code ForwardableClock}: tasks run on one event thread
 * as in the daemon, but time is the test's {@link MovableClock}, and a timer fires only when the test moves that
 * clock past it with {@link #advance}. A back-off of minutes takes no time; "not yet" is checked exactly.
 *
 * <p>Tasks that throw are recorded in {@link #failures()}, which a test expects to stay empty.
 */
final class ManualScheduler implements Scheduler {

    /**
     * The suite's one wait: only how long a broken build takes to say so. The event thread may be busy for seconds
     * (a rotation makes a real 2048-bit key on it, the fixture's key maker running in place): at a load average of
     * 40 that took over the 10 s this was, and MinionProtocolTest failed with "the event thread is stuck".
     */
    private static final Duration IDLE_WAIT = SuiteDefaults.WAIT;

    private final MovableClock clock;
    private final ExecutorService thread = Executors.newSingleThreadExecutor(runnable -> {
        Thread t = new Thread(runnable, "brine-minion-test-loop");
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong handedOver = new AtomicLong();
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final PriorityQueue<Pending> timers = new PriorityQueue<>(
            Comparator.comparing(Pending::due).thenComparingLong(Pending::sequence)); // guarded by this
    private long sequence; // guarded by this

    private record Pending(Instant due, long sequence, Runnable task) {}

    ManualScheduler(MovableClock clock) {
        this.clock = clock;
    }

    @Override
    public void execute(Runnable task) {
        try {
            thread.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException | Error e) {
                    failures.add(e);
                }
            });
            handedOver.incrementAndGet();
        } catch (RejectedExecutionException e) {
            // closed: dropped, as the daemon's event thread does
        }
    }

    /** A timer due now or earlier runs without the clock moving, as a real scheduler runs it. */
    @Override
    public Timer schedule(Duration delay, Runnable task) {
        Pending pending;
        synchronized (this) {
            pending = new Pending(clock.instant().plus(delay), sequence++, task);
            if (delay.isNegative() || delay.isZero()) {
                pending = null;
            } else {
                timers.add(pending);
            }
        }
        if (pending == null) {
            Cancellable now = new Cancellable(task);
            execute(now);
            return now::cancel;
        }
        Pending added = pending;
        return () -> {
            synchronized (this) {
                timers.remove(added);
            }
        };
    }

    /**
     * Moves the clock by {@code by}, firing on the event thread, in order and each at its own time, every timer that
     * falls due (those the fired ones set included); returns once the event thread is idle.
     */
    void advance(Duration by) {
        idle();
        Instant target = clock.instant().plus(by);
        while (true) {
            Pending next;
            synchronized (this) {
                next = timers.peek();
                if (next == null || next.due().isAfter(target)) {
                    break;
                }
                timers.poll();
            }
            if (next.due().isAfter(clock.instant())) {
                clock.set(next.due());
            }
            execute(next.task());
            idle();
        }
        if (target.isAfter(clock.instant())) {
            clock.set(target);
        }
    }

    /** Waits until the event thread has run everything handed over so far, and what that handed over. */
    void idle() {
        long before;
        do {
            before = handedOver.get();
            try {
                thread.submit(() -> {}).get(IDLE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (ExecutionException | TimeoutException e) {
                throw new IllegalStateException("the event thread is stuck", e);
            }
        } while (handedOver.get() != before);
    }

    List<Throwable> failures() {
        return new ArrayList<>(failures);
    }

    @Override
    public void close() {
        synchronized (this) {
            timers.clear();
        }
        thread.shutdown();
        try {
            thread.awaitTermination(IDLE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class Cancellable implements Runnable {
        private final Runnable task;
        private volatile boolean cancelled;

        Cancellable(Runnable task) {
            this.task = task;
        }

        void cancel() {
            cancelled = true;
        }

        @Override
        public void run() {
            if (!cancelled) {
                task.run();
            }
        }
    }
}

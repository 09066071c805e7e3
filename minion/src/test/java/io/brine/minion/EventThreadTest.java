package io.brine.minion;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EventThreadTest {

    private final EventThread loop = new EventThread("brine-minion-test");

    @AfterEach
    void close() {
        loop.close();
    }

    /** Waits until everything handed over before has run. */
    private void settle() throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        loop.execute(() -> done.complete(null));
        done.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void tasksRunInTheOrderHandedOverOnOneThread() throws Exception {
        List<String> ran = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 100; i++) {
            int n = i;
            loop.execute(() -> ran.add(n + "@" + Thread.currentThread().getName()));
        }
        settle();
        assertThat(ran).hasSize(100).allMatch(r -> r.endsWith("@brine-minion-test"));
        assertThat(ran.get(0)).startsWith("0@");
        assertThat(ran.get(99)).startsWith("99@");
    }

    @Test
    void aFailingTaskDoesNotStopTheThread() throws Exception {
        loop.execute(() -> {
            throw new IllegalStateException("a bug, logged");
        });
        settle();
        CompletableFuture<String> later = new CompletableFuture<>();
        loop.schedule(Duration.ZERO, () -> later.complete("ran"));
        assertThat(later).succeedsWithin(WAIT).isEqualTo("ran");
    }

    @Test
    void aCancelledTimerDoesNotRun() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        loop.execute(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        List<String> ran = new CopyOnWriteArrayList<>();
        Scheduler.Timer timer = loop.schedule(Duration.ZERO, () -> ran.add("timer")); // due, but the thread is busy
        timer.cancel();
        release.countDown();
        settle();
        assertThat(ran).isEmpty();
    }

    @Test
    void closingDropsPendingTimersInsteadOfWaitingForThem() {
        List<String> ran = new CopyOnWriteArrayList<>();
        loop.schedule(Duration.ofHours(1), () -> ran.add("timer"));
        // Had the timer been kept, the thread would outlive the wait and be stopped by force.
        assertThat(loop.stop(EventThread.CLOSE_WAIT)).isTrue();
        assertThat(ran).isEmpty();
    }

    @Test
    void afterClosingTasksAndTimersAreDroppedQuietly() {
        loop.close();
        List<String> ran = new CopyOnWriteArrayList<>();
        loop.execute(() -> ran.add("task"));
        assertThat(loop.schedule(Duration.ZERO, () -> ran.add("timer"))).isSameAs(Scheduler.Timer.NONE);
        assertThat(ran).isEmpty();
    }
}

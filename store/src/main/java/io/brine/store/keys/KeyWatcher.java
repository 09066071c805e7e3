package io.brine.store.keys;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The key store's one thread: it looks for changes made by other processes every {@code pollInterval} (never when
 * zero: brine-key, and tests that poll by hand), and tells the listeners of every change, in order, each list of
 * changes seen at once as one ({@link KeyChangeListener#onChanges}).
 * What a poll does is the store's ({@link FileKeyStore#poll}); when a full rescan is due is measured on the store's
 * injected ticker.
 */
final class KeyWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KeyWatcher.class);

    private final List<KeyChangeListener> listeners = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService executor;

    KeyWatcher(String name) {
        this.executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Runs {@code poll} on the watcher's thread every {@code interval} from now on; never when it is zero. */
    void pollEvery(Duration interval, Runnable poll) {
        if (!interval.isZero()) {
            long millis = Math.max(1, interval.toMillis());
            executor.scheduleWithFixedDelay(poll, millis, millis, TimeUnit.MILLISECONDS);
        }
    }

    /** Adds a listener; closing the handle removes it. */
    AutoCloseable addListener(KeyChangeListener listener) {
        Objects.requireNonNull(listener, "listener");
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /** Hands {@code changes} to the listeners on the watcher's thread; a listener that throws does not stop others. */
    void publish(List<KeyChange> changes) {
        if (changes.isEmpty()) {
            return;
        }
        try {
            executor.execute(() -> {
                for (KeyChangeListener listener : listeners) {
                    try {
                        listener.onChanges(changes);
                    } catch (RuntimeException e) {
                        log.error(
                                "Key store listener failed on {}",
                                changes.size() == 1 ? changes.get(0) : changes.size() + " changes",
                                e);
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /** Stops polling; changes already handed over are still told, for two seconds at most. */
    @Override
    public void close() {
        executor.shutdown();
        try {
            if (!executor.awaitTermination(2, TimeUnit.SECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

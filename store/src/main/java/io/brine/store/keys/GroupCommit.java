package io.brine.store.keys;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Queue;
import java.util.function.Function;

/**
 * The waiting side of the key store's group commits (concurrent offers, {@link FileKeyStore#offer}; minions' key
 * rotations, {@link RotationCommits}): a request is queued, and whoever takes the store lock commits every request
 * queued by then and marks each done, with its answer or its failure; the others find theirs when they get the lock.
 */
@SuppressWarnings("try") // try (StoreLock.Held held = lock.acquire()) holds the lock for the block; held is unused
final class GroupCommit {

    /** A request waiting for a group commit; written and read under the store lock. */
    abstract static class Request {
        boolean done;
        Throwable failure;
    }

    private GroupCommit() {}

    /**
     * Queues {@code mine}, then takes the lock and commits the queue ({@code commitLocked}) unless a thread that held
     * the lock meanwhile did; rethrows the request's failure, an I/O one wrapped by {@code failure}.
     */
    static <R extends Request> void join(
            Queue<R> queued,
            R mine,
            StoreLock lock,
            Runnable commitLocked,
            Function<IOException, UncheckedIOException> failure) {
        queued.add(mine);
        try (StoreLock.Held held = lock.acquire()) {
            if (!mine.done) {
                commitLocked.run();
            }
        } catch (IOException e) {
            // Taken meanwhile by a thread that holds the lock, it may still be written: not known, not answered now
            // (the minion finds its key at its next try).
            queued.remove(mine);
            throw failure.apply(e);
        }
        if (mine.failure instanceof IOException e) {
            throw failure.apply(e);
        }
        if (mine.failure instanceof RuntimeException e) {
            throw e;
        }
        if (mine.failure != null) {
            throw new IllegalStateException(mine.failure);
        }
    }
}

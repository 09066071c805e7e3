package io.brine.master.api;

import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a {@code GET /api/jobs/JID?wait=N} still waits for. The returns are watched before the job is read (so that
 * none falls between the two), so a return may arrive before the job's missing minions are known: it is kept, not
 * taken as the last one (before: an empty set of missing minions answered the wait at the first such return, with
 * hundreds still missing).
 */
final class ReturnsAwaited {

    private final Set<String> returned = ConcurrentHashMap.newKeySet();
    private final Set<String> missing = ConcurrentHashMap.newKeySet();
    private volatile boolean known;

    /** A return arrived; true when it may be the last (the missing minions are known and none is left). */
    boolean returned(String minionId) {
        returned.add(minionId);
        if (!known) {
            return false;
        }
        missing.remove(minionId);
        return missing.isEmpty();
    }

    /** The minions the job showed as missing once the watcher was in place; true when none is left. */
    boolean known(Collection<String> stillMissing) {
        missing.addAll(stillMissing);
        missing.removeAll(returned);
        known = true;
        // A return that saw known false was added to returned before: removed here.
        missing.removeAll(returned);
        return missing.isEmpty();
    }
}

package io.brine.store.policy;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;

/**
 * What single-use things (provisioning grants, autosign tokens) have been spent: on this master's disk
 * ({@link #file}), or shared by a cluster's masters (the cluster module's), so a grant spent through one master is
 * refused by every other.
 */
public interface SpentRecord {

    /** Whether {@code key} (a hex digest) is spent and not yet expired. */
    boolean isSpent(String key) throws IOException;

    /**
     * Spends {@code key} until {@code expires}, durably. Returns false when it is already spent.
     *
     * @throws IOException when it cannot be recorded: the caller must not accept
     */
    boolean spend(String key, Instant expires) throws IOException;

    /** Gives a spend back, when what it paid for did not happen after all; failures are logged, not thrown. */
    void unspend(String key);

    /** The record in one file under {@code cachedir}. */
    static SpentRecord file(Path file, Clock clock) {
        return new SpentStore(file, clock);
    }
}

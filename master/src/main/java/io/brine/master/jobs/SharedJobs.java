package io.brine.master.jobs;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Job records and returns a cluster's masters share, so a job and its returns show on every master whichever one
 * published it or received the returns (ARCHITECTURE: "Cluster mode"). Failures are logged, never thrown: the
 * local job cache stays the record of what this master did. {@link #alone} for a master alone: it shares nothing.
 */
public interface SharedJobs extends AutoCloseable {

    void putJob(JobRecord job);

    /** Shares a return this master stored; may be asynchronous. */
    void putReturn(String jid, StoredReturn ret);

    Optional<JobRecord> job(String jid);

    /** The shared returns of {@code jid}; one too large to share shows as a stub naming the master that has it. */
    List<StoredReturn> returns(String jid);

    List<String> jids();

    /**
     * Calls {@code heard} with each shared return of {@code jid}, those there already and those to come, until the
     * handle is closed (possibly on another thread; the caller deduplicates).
     */
    AutoCloseable watchReturns(String jid, Consumer<StoredReturn> heard);

    void sweep(Duration keep);

    @Override
    void close();

    /** A master alone: nothing shared, nothing heard from others. */
    static SharedJobs alone() {
        return new SharedJobs() {
            @Override
            public void putJob(JobRecord job) {}

            @Override
            public void putReturn(String jid, StoredReturn ret) {}

            @Override
            public Optional<JobRecord> job(String jid) {
                return Optional.empty();
            }

            @Override
            public List<StoredReturn> returns(String jid) {
                return List.of();
            }

            @Override
            public List<String> jids() {
                return List.of();
            }

            @Override
            public AutoCloseable watchReturns(String jid, Consumer<StoredReturn> heard) {
                return () -> {};
            }

            @Override
            public void sweep(Duration keep) {}

            @Override
            public void close() {}
        };
    }
}

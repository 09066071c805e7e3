package io.brine.master.jobs;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.cluster.ZkJobIndex;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link SharedJobs} in ZooKeeper ({@link ZkJobIndex}): job records, and returns up to
 * {@link ZkJobIndex#MAX_RETURN_BYTES}; a larger return is shared as a stub (retcode, success, time, and which master
 * holds it), its value staying in that master's job cache. Returns are written by one background thread, so the job
 * cache's writer never waits on ZooKeeper, up to 1,000 in flight at once (ZooKeeper pipelines them); at most 100,000
 * wait, past that they stay local and are logged.
 */
public final class ClusterJobs implements SharedJobs {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterJobs.class);
    private static final int MAX_IN_FLIGHT = 1000;

    private final ZkJobIndex index;
    private final String masterName;
    private final ObjectMapper json = new ObjectMapper();
    /** Returns written to ZooKeeper and not yet answered: pipelined, and bounded. */
    private final Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT);

    private final ExecutorService writer = new ThreadPoolExecutor(
            1,
            1,
            0,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(100_000),
            r -> {
                Thread t = new Thread(r, "brine-cluster-jobs");
                t.setDaemon(true);
                return t;
            },
            (task, pool) -> LOG.warn("Cluster job index: too many returns waiting; one stays local only"));

    /** {@code masterName} names this master in stubs of returns too large to share. */
    public ClusterJobs(ZkJobIndex index, String masterName) {
        this.index = index;
        this.masterName = masterName;
    }

    @Override
    public void putJob(JobRecord job) {
        try {
            byte[] record = json.writeValueAsBytes(job);
            if (record.length > ZkJobIndex.MAX_JOB_BYTES) {
                record = json.writeValueAsBytes(new JobRecord(
                        job.jid(),
                        job.time(),
                        job.publisher(),
                        job.targetType(),
                        job.target(),
                        job.fun(),
                        List.of("<load too large to share; on " + masterName + ">"),
                        Map.of(),
                        job.timeoutSeconds(),
                        job.minions()));
            }
            index.putJobInBackground(
                    job.jid(),
                    record,
                    failed -> LOG.warn("Job {}: not shared with the cluster: {}", job.jid(), failed));
        } catch (IOException | RuntimeException e) {
            LOG.warn("Job {}: not shared with the cluster: {}", job.jid(), e.getMessage());
        }
    }

    @Override
    public void putReturn(String jid, StoredReturn ret) {
        writer.execute(() -> {
            byte[] value;
            try {
                value = json.writeValueAsBytes(ret);
                if (value.length > ZkJobIndex.MAX_RETURN_BYTES) {
                    value = json.writeValueAsBytes(new StoredReturn(
                            ret.id(),
                            "<" + value.length + " bytes, in the job cache of " + masterName + ">",
                            ret.retcode(),
                            ret.success(),
                            ret.durationMs(),
                            ret.time()));
                }
                inFlight.acquire();
            } catch (IOException e) {
                LOG.warn("Job {}: return of {} not shared with the cluster: {}", jid, ret.id(), e.getMessage());
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            try {
                index.putReturnAsync(jid, ret.id(), value, failed -> {
                    inFlight.release();
                    if (failed != null) {
                        LOG.warn(
                                "Job {}: return of {} not shared with the cluster: {}",
                                jid,
                                ret.id(),
                                failed.getMessage());
                    }
                });
            } catch (IOException | RuntimeException e) {
                inFlight.release();
                LOG.warn("Job {}: return of {} not shared with the cluster: {}", jid, ret.id(), e.getMessage());
            }
        });
    }

    @Override
    public Optional<JobRecord> job(String jid) {
        try {
            Optional<byte[]> record = index.job(jid);
            return record.isEmpty() ? Optional.empty() : Optional.of(json.readValue(record.get(), JobRecord.class));
        } catch (IOException e) {
            LOG.warn("Job {}: cannot read it from the cluster: {}", jid, e.getMessage());
            return Optional.empty();
        }
    }

    @Override
    public List<StoredReturn> returns(String jid) {
        List<StoredReturn> returns = new ArrayList<>();
        try {
            for (byte[] value : index.returns(jid).values()) {
                returns.add(json.readValue(value, StoredReturn.class));
            }
        } catch (IOException e) {
            LOG.warn("Job {}: cannot read returns from the cluster: {}", jid, e.getMessage());
        }
        return returns;
    }

    @Override
    public AutoCloseable watchReturns(String jid, Consumer<StoredReturn> heard) {
        return index.watchReturns(jid, (minion, value) -> {
            try {
                heard.accept(json.readValue(value, StoredReturn.class));
            } catch (IOException e) {
                LOG.warn("Job {}: unreadable shared return of {}: {}", jid, minion, e.getMessage());
            }
        });
    }

    @Override
    public List<String> jids() {
        try {
            return index.jids();
        } catch (IOException e) {
            LOG.warn("Cannot list the cluster's jobs: {}", e.getMessage());
            return List.of();
        }
    }

    @Override
    public void sweep(Duration keep) {
        try {
            int removed = index.sweep(keep);
            if (removed > 0) {
                LOG.info("Cluster job index: removed {} old jobs", removed);
            }
        } catch (IOException e) {
            LOG.warn("Cannot sweep the cluster's jobs: {}", e.getMessage());
        }
    }

    @Override
    public void close() {
        writer.shutdown();
        try {
            writer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

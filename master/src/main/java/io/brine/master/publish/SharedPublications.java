package io.brine.master.publish;

import io.brine.master.jobs.Delivery;
import io.brine.master.jobs.JobRecord;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionMessage;
import java.io.IOException;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Publications a cluster's masters forward to each other (ARCHITECTURE.md "Cluster mode"): a job published through
 * one master reaches the targeted minions whichever master holds their sessions, and a minion no master reached is
 * reported unreachable. {@link #alone} for a master alone: nothing to forward, and whom it did not reach is unreachable.
 */
public interface SharedPublications extends AutoCloseable {

    /** Delivers a job another master announced to this master's minions; answers whom it queued it for. */
    @FunctionalInterface
    interface Deliverer {
        Set<String> deliver(JobRecord record, PublishLoad load, long issuedMs);
    }

    /** A job announced by this master, waiting for the other masters to say whom they delivered it to. */
    interface Announced {
        /**
         * Records that this master could not reach {@code notHere} and waits (at most
         * {@link ClusterPublications#REPORT_WAIT}) for every other running master's report; answers the targets no
         * master reached ({@link Delivery#unreachable()}: every running master reported without them) and those
         * still unconfirmed (a master has not reported in time, or the announcement's write was not answered).
         */
        Delivery confirm(Set<String> notHere);
    }

    /**
     * Why a job cannot be published through this master now (the cluster cannot be written: no quorum, or cut off),
     * after waiting for a connection lost moments ago; empty when it can. A job is refused then, before anything is
     * recorded or sent: it could reach neither the other masters nor, later, be told apart from one that did.
     */
    Optional<String> unavailable();

    /** Starts delivering the jobs other masters announce, with {@code deliverer}. */
    void start(Deliverer deliverer) throws IOException;

    /**
     * Announces a job this master publishes (before it sends it itself). {@code watcher}, if given, also hears the
     * returns other masters receive for it (it may hear a return twice: the caller deduplicates).
     */
    Announced announce(JobRecord record, PublishLoad load, long issuedMs, Consumer<SessionMessage.ReturnEvent> watcher);

    /**
     * What the masters' reports on {@code jid} say of {@code targets}, while the cluster keeps them: those no running
     * master reached once all have reported, else those not reached yet as unconfirmed.
     */
    Optional<Delivery> delivery(String jid, Collection<String> targets);

    /** Removes old announcements; on the timer thread. */
    void sweep();

    @Override
    void close();

    /** A master alone: no other master delivers its jobs or announces any. */
    static SharedPublications alone() {
        return new SharedPublications() {
            @Override
            public void start(Deliverer deliverer) {}

            @Override
            public Optional<String> unavailable() {
                return Optional.empty();
            }

            @Override
            public Announced announce(
                    JobRecord record, PublishLoad load, long issuedMs, Consumer<SessionMessage.ReturnEvent> watcher) {
                return Delivery::unreachable;
            }

            @Override
            public Optional<Delivery> delivery(String jid, Collection<String> targets) {
                return Optional.empty();
            }

            @Override
            public void sweep() {}

            @Override
            public void close() {}
        };
    }
}

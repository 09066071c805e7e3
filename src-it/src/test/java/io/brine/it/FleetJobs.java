package io.brine.it;

import static org.awaitility.Awaitility.await;

import io.brine.master.jobs.StoredReturn;
import io.brine.master.publish.JobPublisher;
import io.brine.master.publish.PublishException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** Publishing through a fleet's master as the local admin would, and reading the returns from its job cache. */
final class FleetJobs {

    private final Fleet fleet;

    FleetJobs(Fleet fleet) {
        this.fleet = fleet;
    }

    private JobPublisher jobs() {
        return fleet.master.master().jobs();
    }

    /** Publishes to the accepted minions the target selects; returns the job. */
    JobPublisher.Published publish(String targetType, String target, String fun, Object... args)
            throws PublishException {
        List<String> minions = jobs().resolve(JobPublisher.parse(targetType, target));
        return publishTo(minions, targetType, target, fun, args);
    }

    /** Publishes to exactly these minions (already resolved, as the publisher service would pass them). */
    JobPublisher.Published publishTo(List<String> minions, String targetType, String target, String fun, Object... args)
            throws PublishException {
        return jobs().publish("it", targetType, target, minions, fun, List.of(args), Map.of(), 30, null);
    }

    List<StoredReturn> returns(String jid) {
        return fleet.master.master().jobs().cache().returns(jid);
    }

    /** Waits until every one of {@code ids} has returned for {@code jid}; returns them by minion id. */
    Map<String, StoredReturn> awaitReturns(String jid, String... ids) {
        Set<String> expected = Set.of(ids);
        await().until(() -> returners(jid).containsAll(expected));
        return returns(jid).stream().collect(Collectors.toMap(StoredReturn::id, r -> r, (a, b) -> b));
    }

    Set<String> returners(String jid) {
        return returns(jid).stream().map(StoredReturn::id).collect(Collectors.toCollection(TreeSet::new));
    }
}
